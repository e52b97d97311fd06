"""The ``bash`` tool (Pi-compatible name and arguments): run a shell command in the workspace root.

The command runs as ``bash -c COMMAND`` in its own process group and session, with
stdin from ``/dev/null``, stdout and stderr merged, and a marker in its environment
by which a :class:`~agentls.tools.processes.ProcessTracker` finds what it started.
An abort or a timeout ends everything the call started (SIGTERM, SIGKILL after a
grace); background processes of a call that finished live on until the session's run
ends (see :mod:`agentls.tools.processes`). The call itself ends :data:`EOF_GRACE`
after bash exits even when such a process still holds the output pipe. Output is
streamed to ``on_update`` while the command runs and comes back tail-truncated: the
END of the output is kept, at most :data:`MAX_LINES` lines or :data:`MAX_BYTES`
bytes. When output is cut, the full output is written to a temporary file that the
note names, so the model can read or grep it.

A non-zero exit status, an abort and a timeout all raise :class:`BashCommandError`,
whose message carries the output tail and says what happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable
from typing import IO, Any, Literal

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, TextContent
from agentls.tools.processes import ProcessTracker
from agentls.tools.read import format_size
from agentls.tools.workspace import ToolInputError, Workspace

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
UPDATE_INTERVAL = 0.1
"""Seconds between two streamed partial results."""
EOF_GRACE = 1.0
"""Seconds to keep reading after bash exited while a background process still holds the output pipe."""
READ_CHUNK = 64 * 1024
_TAIL_KEEP = 2 * MAX_BYTES
"""Bytes of output kept in memory once it has spilled to the full-output file."""

BASH_DESCRIPTION = (
    "Execute a bash command in the workspace root. Returns stdout and stderr combined. Output is "
    f"truncated to the last {MAX_LINES} lines or {MAX_BYTES // 1024}KB (whichever is hit first); when "
    "truncated, the full output is saved to a temp file that the note names. A non-zero exit code is "
    "reported as an error. Optionally provide a timeout in seconds."
)

BASH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
    "required": ["command"],
}


class BashCommandError(RuntimeError):
    """The command failed: non-zero exit, aborted or timed out. The message includes the output tail."""

    def __init__(
        self,
        message: str,
        *,
        reason: Literal["exit", "aborted", "timeout"],
        exit_code: int | None,
        details: dict[str, Any],
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.exit_code = exit_code
        self.details = details


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


class _Output:
    """Collects the output: everything in memory up to :data:`MAX_BYTES`, then a file plus a tail."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = True
        self.file: IO[bytes] | None = None
        self.path: str | None = None
        self.version = 0
        """Bumped on each chunk, so the updater knows when new output arrived."""

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
            fd, path = tempfile.mkstemp(prefix="agentls-bash-", suffix=".log")
            handle = os.fdopen(fd, "wb")
            handle.write(data)
            return handle, path

        self.file, self.path = await asyncio.to_thread(create)

    def tail(self) -> tuple[str, bool, int]:
        text = self.buffer.decode("utf-8", errors="replace")
        shown, truncated, count = truncate_tail(text)
        return shown, truncated or self.file is not None, count

    async def finish(self) -> tuple[str, dict[str, Any]]:
        """The text for the model (with the truncation note) and the truncation details."""
        shown, truncated, count = self.tail()
        if truncated and self.file is None:
            await self._open_file(bytes(self.buffer))
        if self.file is not None:
            await asyncio.to_thread(self.file.close)
        details: dict[str, Any] = {"truncated": truncated}
        if not truncated:
            return shown or "(no output)", details
        details["fullOutputPath"] = self.path
        total = self.total_lines
        limit = "" if count == MAX_LINES else f" ({format_size(MAX_BYTES)} limit)"
        note = (
            f"[Output truncated: showing the last {count} of {total} lines{limit}. Full output: {self.path}]"
        )
        return f"{shown}\n\n{note}", details


class _ShellProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol of ``create_subprocess_exec``, plus :attr:`exited`: set when bash exits.

    ``Process.wait()`` returns only once the output pipe is closed too (CPython 3.11),
    which a background process (``server &``) may hold for as long as it runs.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=READ_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _start_shell(
    command: str, cwd: str, env: dict[str, str]
) -> tuple[asyncio.subprocess.Process, _ShellProtocol]:
    """``bash -c COMMAND`` in its own session, stdin from ``/dev/null``, stdout and stderr on one pipe."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ShellProtocol(loop),
        "bash",
        "-c",
        command,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    return asyncio.subprocess.Process(transport, protocol, loop), protocol


def _timeout_arg(args: dict[str, Any]) -> float | None:
    value = args.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ToolInputError(f"timeout must be a positive number of seconds, got {value!r}")
    return float(value)


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def bash_tool(workspace: Workspace, processes: ProcessTracker | None = None) -> AgentTool:
    """The ``bash`` tool, running commands in ``workspace.root``; ``processes`` tracks what they start.

    Without a tracker the tool has one of its own, which nothing ends before this
    process exits: a session passes the tracker it ends at the end of each run.

    ``details`` is ``{exitCode, truncated, fullOutputPath?}``; partial results sent
    to ``on_update`` carry ``{exitCode: None, truncated}`` and the output so far.
    """
    tracker = processes if processes is not None else ProcessTracker()

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None:
            signal.throw_if_aborted()
        if not isinstance(args, dict) or not isinstance(args.get("command"), str):
            raise ToolInputError("bash needs a string 'command'")
        command: str = args["command"]
        if not command.strip():
            raise ToolInputError("command must not be empty")
        timeout = _timeout_arg(args)
        cwd = workspace.root
        if not await asyncio.to_thread(os.path.isdir, cwd):
            raise ToolInputError(f"The workspace root {cwd} does not exist or is not a directory")

        call = tracker.start_call()
        process, shell = await _start_shell(command, cwd, call.environment)
        output = _Output()

        async def read_output() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(READ_CHUNK):
                await output.add(chunk)

        async def stream_updates(emit: Callable[[AgentToolResult], None]) -> None:
            seen = 0
            while True:
                await asyncio.sleep(UPDATE_INTERVAL)
                if output.version != seen:
                    seen = output.version
                    shown, truncated, _ = output.tail()
                    emit(
                        AgentToolResult(
                            content=[TextContent(text=shown)],
                            details={"exitCode": None, "truncated": truncated},
                        )
                    )

        async def run_to_end() -> int:
            reader = asyncio.ensure_future(read_output())
            try:
                await shell.exited
                # A background process may still hold the pipe: read on for a moment, then give up.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(reader), EOF_GRACE)
                assert process.returncode is not None
                return process.returncode
            finally:
                if not reader.done():
                    reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await reader

        finished = asyncio.ensure_future(run_to_end())
        waits: set[asyncio.Future[Any]] = {finished}
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        if aborted is not None:
            waits.add(aborted)
        updater = asyncio.ensure_future(stream_updates(on_update)) if on_update is not None else None
        reason: Literal["aborted", "timeout"] | None = None
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not finished.done():
                reason = "aborted" if aborted is not None and aborted.done() else "timeout"
                await call.terminate(process.pid)  # start_new_session: bash leads its own group
            exit_code = await finished
        finally:
            for task in (aborted, updater):
                if task is not None:
                    task.cancel()
            if not finished.done():  # execute itself was cancelled: end what it started, as on abort
                finished.cancel()
                await asyncio.shield(call.terminate(process.pid))

        text, details = await output.finish()
        details = {"exitCode": exit_code if reason is None else None, **details}
        if reason == "aborted":
            raise BashCommandError(
                f"{text}\n\nCommand aborted", reason=reason, exit_code=None, details=details
            )
        if reason == "timeout":
            assert timeout is not None
            raise BashCommandError(
                f"{text}\n\nCommand timed out after {_seconds(timeout)} seconds",
                reason=reason,
                exit_code=None,
                details=details,
            )
        if exit_code != 0:
            raise BashCommandError(
                f"{text}\n\nExit code: {exit_code}", reason="exit", exit_code=exit_code, details=details
            )
        return AgentToolResult(content=[TextContent(text=text)], details=details)

    return AgentTool(
        name="bash",
        label="bash",
        description=BASH_DESCRIPTION,
        parameters=BASH_PARAMETERS,
        execute=execute,
    )
