"""The server in the command line's own process, for ``run``, ``chat``, ``models`` and ``sessions``: an
:class:`~agentls.fronts.lsp.app.AgentServer` in the command's event loop, and the command's
:class:`~agentls.client.AgentClient` talking to it over two pipes, in the same protocol as to
``agentls serve``.

A server process of its own cost a second interpreter and a second import of asyncio, pydantic
and the protocol's models, and the two starts came one after the other (started side by side,
they competed for the cores and took more CPU). In one process ``agentls run -p`` takes 0.4 s of
CPU instead of 0.7 s, and ``chat`` is ready for a prompt in 0.4 s instead of 0.55 s.

What ``agentls serve`` does for its process is done here for the command's: the server's log
records reach the client as ``window/logMessage`` (and nowhere else), and the process ends as the
server's does, its session files' last lines written, without the interpreter's teardown of the
server's modules (:func:`agentls.cli.main.console_main`). Ctrl+C stays the command's (``run``
ends, ``chat`` aborts the run), and SIGTERM ends the runs before the process dies of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

from agentls.client import AgentClient
from agentls.fronts.lsp.app import AgentServer, create_server
from agentls.fronts.lsp.logs import ClientLogHandler
from agentls.session.history.store import finish_writing

CLIENT_SIDE = ("agentls.client", "agentls.cli")
"""The loggers of the command line's side: their records are its own, not the server's."""


@contextlib.asynccontextmanager
async def in_process_client(*, warm_up: bool = False, **options: Any) -> AsyncIterator[AgentClient]:
    """An :class:`AgentClient` (made with ``options``) connected to a server of this process; at the
    end of the block the client shuts the server down and the server's sessions are closed.
    ``warm_up``: the server warms the providers up once idle (``chat``: for its first prompt)."""
    server = create_server()
    server_input, client_output = os.pipe()
    client_input, server_output = os.pipe()
    serving = asyncio.ensure_future(server.serve_pipes(server_input, server_output, warm_up=warm_up))
    reader, writer = await _streams(client_input, client_output)
    client = AgentClient(**options)
    try:
        with _server_logs(server), _ending_on_sigterm() as terminated:
            try:
                await client.connect(reader, writer)
                yield client
            finally:
                terminated.closing = True
                await client.close()  # shutdown and exit: the server aborts the runs, closes the sessions
                writer.close()  # and sees the end of its input
                await asyncio.shield(serving)
    finally:
        for fd in (server_input, server_output):
            with contextlib.suppress(OSError):
                os.close(fd)


class _Termination:
    """SIGTERM while the server runs here: its sessions are closed first, then the process dies of it."""

    def __init__(self, task: asyncio.Task[Any] | None) -> None:
        self._task = task
        self.received = False
        self.closing = False
        """The sessions are being closed already: the signal only waits for that."""

    def __call__(self) -> None:
        self.received = True
        if not self.closing and self._task is not None:
            self._task.cancel()


@contextlib.contextmanager
def _ending_on_sigterm() -> Iterator[_Termination]:
    """Killed (SIGTERM), the command still ends its runs as ``agentls serve`` did when its client was
    killed: the running tools stopped and the run saved as aborted; then it dies of the signal, as
    it did (no further output, killed by SIGTERM)."""
    loop = asyncio.get_running_loop()
    terminated = _Termination(asyncio.current_task())
    try:
        loop.add_signal_handler(signal.SIGTERM, terminated)
    except (NotImplementedError, RuntimeError):  # no signal handlers on Windows
        yield terminated
        return
    try:
        yield terminated
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        if terminated.received:
            finish_writing()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)


async def _streams(output_fd: int, input_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The client's ends of the pipes as asyncio streams: the server's output read, its input written."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    protocol = asyncio.StreamReaderProtocol(reader)
    await loop.connect_read_pipe(lambda: protocol, os.fdopen(output_fd, "rb", buffering=0))
    writing, flow = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(input_fd, "wb", buffering=0)
    )
    return reader, asyncio.StreamWriter(writing, flow, None, loop)


class _Side(logging.Filter):
    """Passes the records of one side: the command line's (:data:`CLIENT_SIDE`) or the server's."""

    def __init__(self, client_side: bool) -> None:
        super().__init__()
        self.client_side = client_side

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.startswith(CLIENT_SIDE) == self.client_side


@contextlib.contextmanager
def _server_logs(server: AgentServer) -> Iterator[None]:
    """The server's records (WARNING and above) to the client as ``window/logMessage``, as from
    ``agentls serve``, whose stderr the command line drops; the command line's own go to stderr as
    before (Python's last-resort handler: the message, from WARNING)."""
    log = logging.getLogger("agentls")
    to_client = ClientLogHandler(server)
    to_client.addFilter(_Side(client_side=False))
    to_stderr = logging.StreamHandler(sys.stderr)
    to_stderr.setLevel(logging.WARNING)
    to_stderr.addFilter(_Side(client_side=True))
    handlers, propagate = [to_client, to_stderr], log.propagate
    for handler in handlers:
        log.addHandler(handler)
    log.propagate = False
    try:
        yield
    finally:
        for handler in handlers:
            log.removeHandler(handler)
        log.propagate = propagate
