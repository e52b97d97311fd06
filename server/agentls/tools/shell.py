"""One shell command run under the ``bash`` tool's rules, for the tool and for the user's own commands.

The ``bash`` tool (:mod:`agentls.tools.bash`) and ``agent/bash`` (the user's ``!cmd``,
:mod:`agentls.session.user_bash`) both run their commands through :class:`ShellCommand`, so
the two follow one set of rules:

- The command runs as ``bash -c COMMAND`` under its keeper (:mod:`agentls.tools.keeper`),
  in a session and process group of its own, with stdin from ``/dev/null``, stdout and
  stderr merged, and the environment of its
  :class:`~agentls.tools.processes.ProcessTracker` (the providers' API keys left out).
- An abort or a timeout ends everything the command started (SIGTERM, SIGKILL after a
  grace); background processes of a command that finished live on until its tracker's
  owner ends them (see :mod:`agentls.tools.processes`). The command itself ends
  :data:`EOF_GRACE` after bash exits even when such a process still holds the output pipe.
- A :class:`~agentls.tools.sandbox.Confinement` (the ``bash`` tool's, when a sandbox is set)
  makes the keeper confine itself, and so bash and all it starts, before bash runs.
- Output is read as it arrives and comes back tail-truncated: the END of the output is
  kept, at most :data:`MAX_LINES` lines or :data:`MAX_BYTES` bytes. When output is cut,
  the full output is written to a file of the tracker's output folder
  (:attr:`ShellResult.full_output_path`, deleted when the session closes; see
  :mod:`agentls.tools.output_files`).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, Literal

from agentls.ai import AbortSignal
from agentls.tools import keeper_spawner
from agentls.tools.output_files import OutputFolder
from agentls.tools.processes import ProcessTracker, TrackedCall, find_processes, terminate
from agentls.tools.sandbox import Confinement, SandboxRefused

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
EOF_GRACE = 1.0
"""Seconds to keep reading after bash exited while a background process still holds the output pipe."""
KEEPER_EXIT = 0.1
"""Seconds a call waits, once over, for its keeper to exit (at once, unless background processes run)."""
REPORT_SECONDS = 5.0
"""How long a cancelled start waits for its keeper to say whether bash runs, before it ends the call."""
READ_CHUNK = 64 * 1024
_TAIL_KEEP = 2 * MAX_BYTES
"""Bytes of output kept in memory once it has spilled to the full-output file."""


def truncate_tail(text: str) -> tuple[str, bool, int]:
    """The end of ``text`` within :data:`MAX_LINES` lines and :data:`MAX_BYTES` bytes.

    Returns ``(shown, truncated, shown_line_count)``. A final newline ends the last
    line rather than starting an empty one. If the last line alone is longer than the
    byte budget, its end is shown.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    shown: list[str] = []
    used = 0
    for line in reversed(lines):
        if len(shown) == MAX_LINES:
            break
        cost = len(line.encode("utf-8")) + (1 if shown else 0)
        if used + cost > MAX_BYTES:
            if not shown:
                tail = line.encode("utf-8")[-MAX_BYTES:]
                shown.append(tail.decode("utf-8", errors="ignore"))
            break
        shown.append(line)
        used += cost
    shown.reverse()
    truncated = len(shown) < total or (total > 0 and shown[0] != lines[total - len(shown)])
    return "\n".join(shown), truncated, len(shown)


@dataclass(frozen=True)
class ShellResult:
    """How a command ended and the end of its output."""

    output: str
    """The end of the output, within :data:`MAX_LINES` and :data:`MAX_BYTES` (invalid UTF-8 replaced)."""
    exit_code: int | None
    """bash's exit status; ``None`` when an abort or a timeout ended the command."""
    ended_by: Literal["aborted", "timeout"] | None
    truncated: bool
    shown_lines: int
    total_lines: int
    full_output_path: str | None
    """The file holding the whole output, when it was truncated."""
    ends_with_newline: bool = False
    """Whether the output ended with a newline (which :attr:`output` leaves out)."""


class _Output:
    """Collects the output: everything in memory up to :data:`MAX_BYTES`, then a file plus a tail."""

    def __init__(self, folder: OutputFolder) -> None:
        self.folder = folder
        self.buffer = bytearray()
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = True
        self.file: IO[bytes] | None = None
        self.path: str | None = None
        self.version = 0
        """Bumped on each chunk, so that a reader of :meth:`tail` knows when new output arrived."""

    @property
    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        return self.newlines + (0 if self.ends_with_newline else 1)

    async def add(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.ends_with_newline = chunk.endswith(b"\n")
        self.buffer += chunk
        self.version += 1
        if self.file is None and self.total_bytes > MAX_BYTES:
            await self._open_file(bytes(self.buffer))
        elif self.file is not None:
            await asyncio.to_thread(self.file.write, chunk)
        if self.file is not None and len(self.buffer) > 2 * _TAIL_KEEP:
            del self.buffer[:-_TAIL_KEEP]

    async def _open_file(self, data: bytes) -> None:
        def create() -> tuple[IO[bytes], str]:
            fd, path = self.folder.new_file("agentls-bash-")
            handle = os.fdopen(fd, "wb")
            handle.write(data)
            return handle, path

        self.file, self.path = await asyncio.to_thread(create)

    def tail(self) -> tuple[str, bool, int]:
        text = self.buffer.decode("utf-8", errors="replace")
        shown, truncated, count = truncate_tail(text)
        return shown, truncated or self.file is not None, count

    async def finish(self) -> tuple[str, bool, int]:
        """:meth:`tail`, once the output is complete; a truncated output is then whole in the closed file."""
        shown, truncated, count = self.tail()
        if truncated and self.file is None:
            await self._open_file(bytes(self.buffer))
        if self.file is not None:
            await asyncio.to_thread(self.file.close)
        return shown, truncated, count


class _Status(asyncio.Protocol):
    """What the keeper reports on its fd 2: :attr:`spawned` (bash runs, or the ``OSError`` that it
    cannot) and :attr:`exited` (bash's exit code)."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.spawned: asyncio.Future[None] = loop.create_future()
        self.exited: asyncio.Future[int] = loop.create_future()
        self._status = bytearray()

    def data_received(self, data: bytes) -> None:
        self._status += data
        while b"\n" in self._status:
            line, _, rest = bytes(self._status).partition(b"\n")
            self._status[:] = rest
            self._report(line.decode("utf-8", "replace"))

    def _report(self, line: str) -> None:
        kind, _, value = line.partition(" ")
        if kind == "spawned" and not self.spawned.done():
            self.spawned.set_result(None)
        elif kind == "error" and not self.spawned.done():
            self.spawned.set_exception(OSError(f"cannot run {value}"))
        elif kind == "refused" and not self.spawned.done():
            self.spawned.set_exception(SandboxRefused(value))
        elif kind == "exit" and not self.exited.done():
            self.exited.set_result(int(value))

    def connection_lost(self, exc: Exception | None) -> None:
        # The keeper died before it could report (killed from outside): bash is out of reach.
        message = "the command's keeper process ended before the command did"
        for future in (self.spawned, self.exited):
            if not future.done():
                future.set_exception(OSError(message))


class _Lifeline(asyncio.Protocol):
    """The read end of the keeper's lifeline: its end is the keeper's exit (:attr:`gone`)."""

    def __init__(self) -> None:
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.gone.done():
            self.gone.set_result(None)


@dataclass
class _Keeper:
    """A command's keeper, as this process sees it: its pid, the output pipe, its reports
    (:class:`_Status`) and its exit (:class:`_Lifeline`).

    The keeper outlives bash while a background process runs, and such a process may hold the
    output pipe after both have exited.
    """

    pid: int
    stdout: asyncio.StreamReader
    status: _Status
    lifeline: _Lifeline


def _fork_keeper(argv: list[str], cwd: str, env: dict[str, str]) -> tuple[int, int | None, list[int]]:
    """The keeper of ``argv`` forked (blocks: a worker thread): its pid, start time and this process's
    ends of its output, status and lifeline pipes."""
    pipes = [os.pipe() for _ in range(3)]
    ours = [read for read, _ in pipes]
    theirs = [os.open(os.devnull, os.O_RDONLY), *(write for _, write in pipes)]
    try:
        pid, started = keeper_spawner.spawn(argv, cwd, env, theirs)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return pid, started, ours


def _end_abandoned(forking: asyncio.Future[tuple[int, int | None, list[int]]]) -> None:
    """A keeper forked for a start that was cancelled meanwhile: end what it started, close its pipes."""
    if forking.cancelled() or forking.exception() is not None:
        return
    pid, started, ours = forking.result()

    def end() -> None:
        # once the keeper has said whether bash runs (or has ended): a look before finds nothing to end
        select.select([ours[1]], [], [], REPORT_SECONDS)
        terminate(lambda: find_processes([TrackedCall(pid, started)]))
        for fd in ours:
            os.close(fd)

    threading.Thread(target=end, name="agentls-abandoned-keeper", daemon=True).start()


async def _start_shell(
    command: str, cwd: str, tracker: ProcessTracker, confinement: Confinement | None
) -> tuple[_Keeper, TrackedCall]:
    """``bash -c COMMAND`` under its keeper (forked by :mod:`~agentls.tools.keeper_spawner`), in their
    own session, stdin from ``/dev/null``, stdout and stderr on one pipe, the environment of
    ``tracker``'s calls, confined when ``confinement`` says so; returns once the keeper runs, as a
    call of ``tracker`` (``OSError`` if it cannot start)."""
    loop = asyncio.get_running_loop()
    env = tracker.environment.build()
    confine = ["--confine", json.dumps(confinement.plan)] if confinement is not None else []
    if confinement is not None:
        env = {**env, **confinement.environment}
    argv = [*confine, "bash", "-c", command]
    forking = asyncio.ensure_future(asyncio.to_thread(_fork_keeper, argv, cwd, env))
    try:
        pid, started, ours = await asyncio.shield(forking)
    except asyncio.CancelledError:
        forking.add_done_callback(_end_abandoned)  # the fork goes on in its thread
        raise
    call = tracker.track(pid, started)  # before anything can fail: the keeper is ended with the rest
    files = [os.fdopen(fd, "rb", buffering=0) for fd in ours]
    transports: list[asyncio.BaseTransport] = []
    try:
        stdout = asyncio.StreamReader(limit=READ_CHUNK, loop=loop)
        protocols = (lambda: asyncio.StreamReaderProtocol(stdout), _Status, _Lifeline)
        connected = []
        for file, protocol in zip(files, protocols, strict=True):
            transport, connected_protocol = await loop.connect_read_pipe(protocol, file)
            transports.append(transport)
            connected.append(connected_protocol)
    except BaseException:
        for transport in transports:
            transport.close()
        for file in files[len(transports) :]:
            file.close()
        await asyncio.shield(call.terminate())
        raise
    _, status, lifeline = connected
    assert isinstance(status, _Status) and isinstance(lifeline, _Lifeline)
    return _Keeper(pid, stdout, status, lifeline), call


async def _end_once_reported(keeper: _Keeper, call: TrackedCall) -> None:
    """End ``call`` once its keeper has said whether bash runs (or has ended): a start cancelled
    before that would otherwise look for the call's processes before bash is one of them."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(keeper.status.spawned), REPORT_SECONDS)
    await call.terminate()


async def _closed(keeper: _Keeper) -> None:
    """Until a keeper that has nothing more to say has exited and closed its output."""
    await keeper.lifeline.gone
    await keeper.stdout.read()


class ShellCommand:
    """A running command: its output so far (:meth:`tail`), and :meth:`wait` for its end.

    Start one with :meth:`start`; the output is read from then on, and ``on_chunk``
    gets each piece of it as text as it arrives (UTF-8 decoded across chunk
    boundaries, invalid bytes replaced).
    """

    def __init__(
        self,
        keeper: _Keeper,
        call: TrackedCall,
        folder: OutputFolder,
        on_chunk: Callable[[str], None] | None,
    ) -> None:
        self._keeper = keeper
        self._call = call
        self._on_chunk = on_chunk
        self._output = _Output(folder)
        self._finished = asyncio.ensure_future(self._run_to_end())

    @classmethod
    async def start(
        cls,
        command: str,
        cwd: str,
        tracker: ProcessTracker,
        on_chunk: Callable[[str], None] | None = None,
        confinement: Confinement | None = None,
    ) -> ShellCommand:
        """Start ``command`` in ``cwd`` as a call of ``tracker``, in the sandbox ``confinement``
        describes if any; ``OSError`` if it cannot start."""
        keeper, call = await _start_shell(command, cwd, tracker, confinement)
        try:
            await keeper.status.spawned
        except BaseException:
            # bash never ran, or the start was cancelled: no one waits for its exit
            keeper.status.exited.add_done_callback(lambda done: done.cancelled() or done.exception())
            await asyncio.shield(_end_once_reported(keeper, call))
            with contextlib.suppress(Exception):  # its pipes closed while the loop runs, not at collection
                await asyncio.wait_for(asyncio.shield(_closed(keeper)), KEEPER_EXIT)
            raise
        return cls(keeper, call, tracker.outputs, on_chunk)

    @property
    def output_version(self) -> int:
        """Grows with every chunk of output."""
        return self._output.version

    def tail(self) -> tuple[str, bool]:
        """The end of the output so far, as :attr:`ShellResult.output`, and whether it is cut."""
        shown, truncated, _ = self._output.tail()
        return shown, truncated

    async def _read_output(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await self._keeper.stdout.read(READ_CHUNK):
            await self._output.add(chunk)
            if self._on_chunk is not None and (text := decoder.decode(chunk)):
                self._on_chunk(text)
        if self._on_chunk is not None and (rest := decoder.decode(b"", final=True)):
            self._on_chunk(rest)

    async def _run_to_end(self) -> int:
        reader = asyncio.ensure_future(self._read_output())
        try:
            exit_code = await self._keeper.status.exited
            # A background process may still hold the pipe: read on for a moment, then give up.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), EOF_GRACE)
            return exit_code
        finally:
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader

    async def wait(self, signal: AbortSignal | None = None, time_limit: float | None = None) -> ShellResult:
        """Wait for the command to end, or end it on ``signal`` or after ``time_limit`` seconds.

        Cancelling the wait ends the command's processes too, as an abort does.
        """
        waits: set[asyncio.Future[Any]] = {self._finished}
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        if aborted is not None:
            waits.add(aborted)
        ended_by: Literal["aborted", "timeout"] | None = None
        try:
            await asyncio.wait(waits, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
            if not self._finished.done():
                ended_by = "aborted" if aborted is not None and aborted.done() else "timeout"
                await self._call.terminate()
            exit_code = await self._finished
        finally:
            if aborted is not None:
                aborted.cancel()
            if not self._finished.done():  # the wait itself was cancelled: end what it started, as on abort
                self._finished.cancel()
                await asyncio.shield(self._call.terminate())
        with contextlib.suppress(TimeoutError):  # so that its pipes are closed when nothing else runs
            await asyncio.wait_for(asyncio.shield(self._keeper.lifeline.gone), KEEPER_EXIT)
        shown, truncated, count = await self._output.finish()
        return ShellResult(
            output=shown,
            exit_code=None if ended_by else exit_code,
            ended_by=ended_by,
            truncated=truncated,
            shown_lines=count,
            total_lines=self._output.total_lines,
            full_output_path=self._output.path if truncated else None,
            ends_with_newline=self._output.total_bytes > 0 and self._output.ends_with_newline,
        )
