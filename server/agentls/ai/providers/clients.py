"""HTTP clients shared by the requests of a provider configuration, for the life of the event loop.

A new client per request costs a fresh SSL context (the CA bundle loaded again, ~20 ms)
and a new TCP and TLS connection every turn. One client per configuration keeps its
connections alive between turns. Clients belong to the event loop that made them (their
connections do), so there is one set per running loop, dropped with it. They share one
SSL context, which :func:`tls_context` makes once (the server's warm-up thread makes it
before the first request needs it).
"""

from __future__ import annotations

import asyncio
import importlib
import ssl
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

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


_tls_lock = threading.Lock()
_tls: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """httpx's default SSL context (its CA bundle, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``), made once."""
    global _tls
    with _tls_lock:
        if _tls is None:
            _tls = httpx.create_ssl_context()
        return _tls


_FIRST_REQUEST_MODULES = (
    "httpcore",
    "h11",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
    "anyio.to_thread",
)
"""What httpx imports only when a client is made and sends its first request (~25 ms)."""


def warm_up_http() -> None:
    """Make the SSL context and import what the first request would, so that it does not wait (a thread)."""
    tls_context()
    for name in _FIRST_REQUEST_MODULES:
        importlib.import_module(name)


def http_client(connect_timeout: float | None) -> httpx.AsyncClient:
    """The running loop's ``httpx`` client for a connect timeout (no read timeout: streams stall-check)."""
    return shared_client(
        ("httpx", connect_timeout),
        lambda: httpx.AsyncClient(verify=tls_context(), timeout=httpx.Timeout(None, connect=connect_timeout)),
    )
