"""The per-user server: ``agentls serve --listen unix:PATH`` serves every client of the user.

Each connection on the socket is a client of its own (an :class:`~agentls.fronts.lsp.app.AgentServer`
with its own ``initialize``, options and documents) over the same framing as stdio; they share one
:class:`~agentls.fronts.lsp.host.SessionHost`, so runs go on when their client goes away and any
client can attach to a live session. The server stops once it has had no client and nothing
running for ``idle_exit`` seconds, or on SIGTERM/SIGINT, aborting and saving what runs and ending
the runs' processes (``protocol.md``, Live sessions).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import struct
import sys
from pathlib import Path

from agentls.ai.secrets import RedactingFilter
from agentls.fronts.lsp.app import close_host, create_server, end_process
from agentls.fronts.lsp.host import SessionHost
from agentls.fronts.lsp.socket_path import SocketRefused, connect, own_folder

logger = logging.getLogger(__name__)

DEFAULT_IDLE_EXIT = 600.0
"""Seconds with no client and nothing running before the per-user server stops (``--idle-exit``)."""


def listening_socket(path: Path) -> socket.socket:
    """Bind ``path`` (folder ``0700``, socket ``0600``); a stale socket of the user's is replaced."""
    own_folder(path)
    existing = connect(path)
    if existing is not None:
        existing.close()
        raise SocketRefused(f"an agentls server already answers on {path}")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # left by a server that died: nothing answers on it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_mask)
    os.chmod(path, 0o600)
    listener.listen(64)
    return listener


def _peer_uid(connection: socket.socket) -> int | None:
    """The connecting process's user (Linux's ``SO_PEERCRED``); ``None`` where it cannot be known."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    credentials = connection.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return uid


class UserServer:
    """The clients on one listening socket, and when to stop (module doc)."""

    def __init__(
        self, listener: socket.socket, path: Path, *, idle_exit: float, question_timeout: float, limit: int
    ) -> None:
        self.listener = listener
        self.path = path
        self.idle_exit = idle_exit
        self.limit = limit
        self.host = SessionHost(shared=True, question_timeout=question_timeout)
        self.host.changed = self._check_idle
        self._stop = asyncio.Event()
        self._idle: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._stop.set)
        self.listener.setblocking(False)
        accepting = loop.create_task(self._accept())
        self._check_idle()
        await self._stop.wait()
        accepting.cancel()
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        for client in list(self.host.clients):
            client.connection_lost()
        await close_host(self.host)
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            connection, _ = await loop.sock_accept(self.listener)
            uid = _peer_uid(connection)
            if uid is not None and uid != os.getuid():
                logger.warning("a connection of another user (uid %d) was refused", uid)
                connection.close()
                continue
            task = loop.create_task(self._client(connection))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _client(self, connection: socket.socket) -> None:
        connection.setblocking(True)
        server = create_server(self.host)  # it joins the host's clients as it serves (its idle check)
        try:
            await server.serve_socket(connection, self.limit)
        finally:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)  # the reading thread sees the end, reads no more
            connection.close()
            self._check_idle()

    def _check_idle(self) -> None:
        """Stop after :attr:`idle_exit` seconds with no client and nothing running."""
        idle = not self.host.clients and not self.host.running()
        if not idle or self.idle_exit <= 0:
            if self._idle is not None:
                self._idle.cancel()
                self._idle = None
            return
        if self._idle is None:
            self._idle = asyncio.get_running_loop().call_later(self.idle_exit, self._idle_over)

    def _idle_over(self) -> None:
        self._idle = None
        if not self.host.clients and not self.host.running():
            logger.info("no client for %g s and nothing running: stopping", self.idle_exit)
            self._stop.set()
        else:
            self._check_idle()


def serve_listen(
    address: str | None, *, idle_exit: float, question_timeout: float, limit: int, ready_fd: int | None
) -> int:
    """Run the per-user server until it is idle or stopped; the exit code (2: the socket was refused)."""
    from agentls.fronts.lsp.socket_path import socket_path

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="agentls: %(levelname)s %(message)s")
    logging.getLogger().handlers[0].addFilter(RedactingFilter())
    try:
        path = socket_path(address)
        listener = listening_socket(path)
    except (SocketRefused, OSError) as error:
        print(f"agentls serve --listen: {error}", file=sys.stderr)
        if ready_fd is not None:
            os.close(ready_fd)
        return 2
    if ready_fd is not None:  # the bridge that started us waits for this line
        with contextlib.suppress(OSError):
            os.write(ready_fd, b"ready\n")
        os.close(ready_fd)
    logger.info("listening on %s", path)
    server = UserServer(listener, path, idle_exit=idle_exit, question_timeout=question_timeout, limit=limit)
    asyncio.run(server.serve())
    end_process(0)
