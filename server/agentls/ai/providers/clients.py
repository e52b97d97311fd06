"""HTTP clients shared by the requests of a provider configuration, for the life of the event loop.

A new client per request costs a fresh SSL context (the CA bundle loaded again, ~20 ms)
and a new TCP and TLS connection every turn. One client per configuration keeps its
connections alive between turns. Clients belong to the event loop that made them (their
connections do), so there is one set per running loop, dropped with it. They share one
SSL context, which :func:`~agentls.http_warm_up.tls_context` makes once (the server's
warm-up thread makes it before the first request needs it); a client for plain ``http://``
URLs has none to wait for (:func:`~agentls.http_warm_up.tls_context_for`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import httpx

T = TypeVar("T")

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, Any]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(key: Hashable, create: Callable[[], T]) -> T:
    """The running loop's client for ``key``, made by ``create`` the first time."""
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(key)
    if client is None:
        client = clients[key] = create()
    return client


def http_client(url: str, connect_timeout: float | None) -> httpx.AsyncClient:
    """The running loop's ``httpx`` client for requests to ``url`` with a connect timeout (no read
    timeout: streams stall-check).

    httpx is imported here, with the first request (or by the server's warm-up before it): a
    session is made without it.
    """
    import httpx

    from agentls.ai.providers import h11_chunks
    from agentls.http_warm_up import tls_context_for

    h11_chunks.install()

    tls = tls_context_for(url)
    return shared_client(
        ("httpx", connect_timeout, id(tls)),
        lambda: httpx.AsyncClient(verify=tls, timeout=httpx.Timeout(None, connect=connect_timeout)),
    )
