"""``agentls serve --attach``: the stdio bridge to the per-user server, which editors start.

It connects to the per-user server's socket, starting the server (detached, in a session and
process group of its own) when nothing answers there, then relays bytes both ways untouched: the
editor's LSP client speaks to the per-user server as to ``agentls serve``. Two bridges starting at
once start one server (a lock beside the socket). The bridge ends when its input ends (after the
server has answered what it was sent) or when the server closes the connection.

The standard library only: a bridge starts in a few tens of milliseconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from agentls.fronts.lsp.socket_path import SocketRefused, connect, own_folder, socket_path

LOG_NAME = "serve.log"
START_SECONDS = 30.0
"""How long a server the bridge started may take to listen."""


def listen_command(path: Path, ready_fd: int, server_args: Sequence[str]) -> list[str]:
    """``agentls serve --listen unix:PATH``, writing ``ready`` to ``ready_fd`` once it listens."""
    return [
        sys.executable, "-m", "agentls", "serve", "--listen", f"unix:{path}", "--ready-fd", str(ready_fd),
        *server_args,
    ]  # fmt: skip


def start_server(path: Path, server_args: Sequence[str]) -> None:
    """Start ``agentls serve --listen unix:PATH`` detached and wait until it listens (or fails)."""
    read_end, write_end = os.pipe()
    log = open(path.parent / LOG_NAME, "ab")  # noqa: SIM115 (the child keeps it)
    try:
        process = subprocess.Popen(
            listen_command(path, write_end, server_args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            pass_fds=(write_end,),
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(write_end)
        log.close()
    with os.fdopen(read_end, "rb") as ready:
        line = ready.readline()  # "ready\n", or the end when the server could not listen
    if line != b"ready\n":
        code = process.wait(START_SECONDS)
        raise SocketRefused(
            f"the per-user server did not start (exit code {code}); see {path.parent / LOG_NAME}"
        )


def connect_or_start(path: Path, server_args: Sequence[str]) -> socket.socket:
    """A connection to the per-user server on ``path``, started first when none answers."""
    connection = connect(path)
    if connection is not None:
        return connection
    own_folder(path)
    with open(path.parent / (path.name + ".lock"), "wb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another bridge may be starting it: wait, then look again
        connection = connect(path)
        if connection is None:
            start_server(path, server_args)
            connection = connect(path)
    if connection is None:
        raise SocketRefused(f"nothing answers on {path} after the server started")
    return connection


def relay(connection: socket.socket, stdin: int = 0, stdout: int = 1) -> None:
    """Bytes from ``stdin`` to the server and from the server to ``stdout``, until the server is done."""

    def upstream() -> None:
        while True:
            try:
                data = os.read(stdin, 1 << 16)
            except OSError:
                data = b""
            if not data:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_WR)  # the server sees the end of input
                return
            try:
                connection.sendall(data)
            except OSError:
                return

    threading.Thread(target=upstream, name="agentls-bridge-in", daemon=True).start()
    while True:
        try:
            data = connection.recv(1 << 16)
        except OSError:
            data = b""
        if not data:
            return
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(stdout, view) :]
            except OSError:  # the editor is gone
                return


def attach(address: str | None, server_args: Sequence[str]) -> int:
    """Run the bridge; the exit code (2 when the socket is refused or the server does not start)."""
    try:
        path = socket_path(address)
        connection = connect_or_start(path, server_args)
    except (SocketRefused, OSError, subprocess.TimeoutExpired) as error:
        print(f"agentls serve --attach: {error}", file=sys.stderr)
        return 2
    relay(connection)
    return 0
