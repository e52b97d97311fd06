"""The SSL context of every HTTP client, and what the first request imports, made ahead of it.

Loading the CA bundle takes ~20 ms and httpx imports its connection stack (~25 ms)
only when a client sends its first request; done then, both delayed the first streamed
token. :func:`warm_up_http` does them first, in the thread of
:func:`agentls.session.policy.providers.warm_up`, which a server starts once it has
nothing else to do. This module imports nothing of agentls, only httpx (a thread and the
event loop importing the same modules at once can deadlock).
"""

from __future__ import annotations

import importlib
import os
import ssl
import threading

import httpx

_tls_lock = threading.Lock()
_tls: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """httpx's default SSL context (its CA bundle, ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``), made once."""
    global _tls
    with _tls_lock:
        if _tls is None:
            _tls = httpx.create_ssl_context()
        return _tls


_no_tls: ssl.SSLContext | None = None

_PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy"})


def tls_context_for(url: str) -> ssl.SSLContext:
    """The SSL context a client for ``url`` needs: :func:`tls_context`, unless ``url`` is plain
    ``http://`` and no proxy is set in the environment (which httpx would reach through TLS).

    A local model's server (``http://localhost:11434``) then never waits for the CA bundle (~20 ms
    of its first request). Its client gets a context with no CA at all, which verifies every
    certificate against nothing: a TLS connection it should never make fails rather than trusts.
    """
    global _no_tls
    if not url.startswith("http://") or any(
        name.lower() in _PROXY_VARIABLES and value for name, value in os.environ.items()
    ):
        return tls_context()
    with _tls_lock:
        if _no_tls is None:
            _no_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # hostname checked, certificate required
        return _no_tls


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
