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
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from agentls.ai import AbortSignal
from agentls.tools.output_files import OutputFolder
from agentls.tools.processes import ProcessTracker, TrackedCall
from agentls.tools.sandbox import Confinement, SandboxRefused

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
EOF_GRACE = 1.0
"""Seconds to keep reading after bash exited while a background process still holds the output pipe."""
KEEPER_EXIT = 0.1
"""Seconds a call waits, once over, for its keeper to exit (at once, unless background processes run)."""
READ_CHUNK = 64 * 1024
_TAIL_KEEP = 2 * MAX_BYTES
"""Bytes of output kept in memory once it has spilled to the full-output file."""
KEEPER = str(Path(__file__).with_name("keeper.py"))


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


class _ShellProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol of ``create_subprocess_exec`` for the keeper, plus what it reports on fd 2:
    :attr:`spawned` (bash runs, or the ``OSError`` that it cannot) and :attr:`exited` (bash's exit code).

    The keeper outlives bash while a background process runs, and ``Process.wait()`` returns
    only once the output pipe is closed too (CPython 3.11), which such a process may hold.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self.spawned: asyncio.Future[None] = loop.create_future()
        self.exited: asyncio.Future[int] = loop.create_future()
        self.keeper_exited: asyncio.Future[None] = loop.create_future()
        self._status = bytearray()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.keeper_exited.done():
            self.keeper_exited.set_result(None)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd != 2:
            super().pipe_data_received(fd, data)
            return
        self._status += data.encode() if isinstance(data, str) else data
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

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 2:
            # The keeper died before it could report (killed from outside): bash is out of reach.
            message = "the command's keeper process ended before the command did"
            for future in (self.spawned, self.exited):
                if not future.done():
                    future.set_exception(OSError(message))
        super().pipe_connection_lost(fd, exc)


async def _start_shell(
    command: str, cwd: str, env: dict[str, str], confinement: Confinement | None
) -> tuple[asyncio.subprocess.Process, _ShellProtocol]:
    """``bash -c COMMAND`` under its keeper, in their own session, stdin from ``/dev/null``, stdout
    and stderr on one pipe, confined when ``confinement`` says so; returns once bash runs
    (``OSError`` if it cannot start, :class:`SandboxRefused` if it cannot be confined)."""
    loop = asyncio.get_running_loop()
    confine = ["--confine", json.dumps(confinement.plan)] if confinement is not None else []
    if confinement is not None:
        env = {**env, **confinement.environment}
    transport, protocol = await loop.subprocess_exec(
        lambda: _ShellProtocol(loop),
        sys.executable,
        "-I",
        "-S",
        KEEPER,
        *confine,
        "bash",
        "-c",
        command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return asyncio.subprocess.Process(transport, protocol, loop), protocol


async def _closed(process: asyncio.subprocess.Process, shell: _ShellProtocol) -> None:
    """Until a keeper that has nothing more to say has exited and closed its output."""
    await shell.keeper_exited
    if process.stdout is not None:
        await process.stdout.read()


class ShellCommand:
    """A running command: its output so far (:meth:`tail`), and :meth:`wait` for its end.

    Start one with :meth:`start`; the output is read from then on, and ``on_chunk``
    gets each piece of it as text as it arrives (UTF-8 decoded across chunk
    boundaries, invalid bytes replaced).
    """

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        shell: _ShellProtocol,
        call: TrackedCall,
        folder: OutputFolder,
        on_chunk: Callable[[str], None] | None,
    ) -> None:
        self._process = process
        self._shell = shell
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
        process, shell = await _start_shell(command, cwd, tracker.environment.build(), confinement)
        call = tracker.track(process.pid)  # before anything can fail: the keeper is ended with the rest
        try:
            await shell.spawned
        except BaseException:
            # bash never ran: no one waits for its exit, whose failure is then expected
            shell.exited.add_done_callback(lambda done: done.cancelled() or done.exception())
            await asyncio.shield(call.terminate())
            with contextlib.suppress(Exception):  # its pipes closed while the loop runs, not at collection
                await asyncio.wait_for(asyncio.shield(_closed(process, shell)), KEEPER_EXIT)
            raise
        return cls(process, shell, call, tracker.outputs, on_chunk)

    @property
    def output_version(self) -> int:
        """Grows with every chunk of output."""
        return self._output.version

    def tail(self) -> tuple[str, bool]:
        """The end of the output so far, as :attr:`ShellResult.output`, and whether it is cut."""
        shown, truncated, _ = self._output.tail()
        return shown, truncated

    async def _read_output(self) -> None:
        assert self._process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await self._process.stdout.read(READ_CHUNK):
            await self._output.add(chunk)
            if self._on_chunk is not None and (text := decoder.decode(chunk)):
                self._on_chunk(text)
        if self._on_chunk is not None and (rest := decoder.decode(b"", final=True)):
            self._on_chunk(rest)

    async def _run_to_end(self) -> int:
        reader = asyncio.ensure_future(self._read_output())
        try:
            exit_code = await self._shell.exited
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
            await asyncio.wait_for(asyncio.shield(self._shell.keeper_exited), KEEPER_EXIT)
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
