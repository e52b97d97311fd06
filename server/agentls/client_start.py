"""The start of an :class:`agentls.client.AgentClient`'s server, with the standard library only: the
``agentls serve`` subprocess started and its ``initialize`` request sent.

The server answers ``initialize`` before its heavy imports and then goes on to them. Started
this way, before the command line imports the client (pydantic, :mod:`agentls.protocol`, asyncio)
and rich, the server's start and the command line's run side by side on two cores instead of one
after the other: ``agentls run`` starts it first thing (:func:`spawn_server`), and
:meth:`AgentClient.start <agentls.client.AgentClient.start>` starts its server the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

INITIALIZE_ID = 1
"""The id of the ``initialize`` request sent with the start (the connection's first)."""


def default_server_command() -> list[str]:
    return [sys.executable, "-m", "agentls", "serve"]


def frame(body: bytes) -> bytes:
    """A JSON-RPC message's body in LSP base framing."""
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def initialize_params(initialization_options: dict[str, Any], request_permission: bool) -> dict[str, Any]:
    """A client's ``initialize`` params (``request_permission``: it answers ``agent/requestPermission``)."""
    return {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": {"experimental": {"agent": {"requestPermission": request_permission}}},
        "initializationOptions": initialization_options,
        "clientInfo": {"name": "agentls.client"},
    }


class SpawnedServer(NamedTuple):
    """A server started, its ``initialize`` (id :data:`INITIALIZE_ID`) sent, its answer not read yet."""

    process: subprocess.Popen[bytes]
    command: list[str]
    initialization_options: dict[str, Any]
    request_permission: bool


def spawn_server(
    command: Sequence[str] | None = None,
    *,
    initialization_options: dict[str, Any] | None = None,
    request_permission: bool = False,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> SpawnedServer:
    """Start the server (``command``, default ``agentls serve`` of this Python) with its stdin and
    stdout piped here and send it ``initialize``; ``OSError`` when it cannot be started.

    Its stderr is dropped: what it logs there it also sends as ``window/logMessage``, which the
    client logs (:data:`agentls.client.SERVER_LOG`), so a terminal would show it twice. ``env`` is
    added to this process's environment.
    """
    argv = list(command or default_server_command())
    options = initialization_options or {}
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        bufsize=0,  # unbuffered: asyncio takes the pipes over, and what a buffer held would be lost
    )
    assert process.stdin is not None
    message = {
        "jsonrpc": "2.0",
        "id": INITIALIZE_ID,
        "method": "initialize",
        "params": initialize_params(options, request_permission),
    }
    unsent = memoryview(frame(json.dumps(message, ensure_ascii=False).encode()))
    try:  # waits only while the server has not read a message larger than the pipe's buffer
        while unsent:
            unsent = unsent[process.stdin.write(unsent) :]
    except BrokenPipeError:  # the server has exited already: the client finds out as it reads the answer
        pass
    return SpawnedServer(process, argv, options, request_permission)
