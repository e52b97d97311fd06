"""The ``bash`` tool (Pi-compatible name and arguments): run a shell command in the workspace root.

The command runs with :class:`~agentls.tools.shell.ShellCommand` (its own process group,
abort and timeout ending everything it started, tail-truncated output with the full
output in a temporary file): see :mod:`agentls.tools.shell`, which ``agent/bash`` shares.
This module adds what is the tool's own: its arguments, partial results streamed to
``on_update`` every :data:`UPDATE_INTERVAL` seconds while output arrives, the truncation
note that names the full-output file, so the model can read or grep it, and the errors.

A non-zero exit status, an abort and a timeout all raise :class:`BashCommandError`,
whose message carries the output tail and says what happened.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, TextContent
from agentls.tools.processes import ProcessTracker
from agentls.tools.read import format_size
from agentls.tools.sandbox import Confinement, Sandbox, SandboxRefused
from agentls.tools.shell import MAX_BYTES, MAX_LINES, ShellCommand, ShellResult
from agentls.tools.workspace import ToolInputError, Workspace

UPDATE_INTERVAL = 0.1
"""Seconds between two streamed partial results."""

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
    """The command failed: non-zero exit, aborted, timed out, or refused by the sandbox. The message
    includes the output tail."""

    def __init__(
        self,
        message: str,
        *,
        reason: Literal["exit", "aborted", "timeout", "sandbox"],
        exit_code: int | None,
        details: dict[str, Any],
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.exit_code = exit_code
        self.details = details


def _timeout_arg(args: dict[str, Any]) -> float | None:
    value = args.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ToolInputError(f"timeout must be a positive number of seconds, got {value!r}")
    return float(value)


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _text_and_details(result: ShellResult) -> tuple[str, dict[str, Any]]:
    """The text for the model (with the truncation note naming the full output) and the details."""
    details: dict[str, Any] = {"exitCode": result.exit_code, "truncated": result.truncated}
    if not result.truncated:
        return result.output or "(no output)", details
    details["fullOutputPath"] = result.full_output_path
    limit = "" if result.shown_lines == MAX_LINES else f" ({format_size(MAX_BYTES)} limit)"
    note = (
        f"[Output truncated: showing the last {result.shown_lines} of {result.total_lines} lines{limit}. "
        f"Full output: {result.full_output_path}]"
    )
    return f"{result.output}\n\n{note}", details


async def _stream_updates(shell: ShellCommand, emit: ToolUpdateCallback) -> None:
    """Emit the output so far every :data:`UPDATE_INTERVAL` seconds while new output arrives."""
    seen = 0
    while True:
        await asyncio.sleep(UPDATE_INTERVAL)
        if shell.output_version != seen:
            seen = shell.output_version
            shown, truncated = shell.tail()
            emit(
                AgentToolResult(
                    content=[TextContent(text=shown)], details={"exitCode": None, "truncated": truncated}
                )
            )


Escalate = Callable[[str, str, str, AbortSignal | None], Awaitable[bool]]
"""Asked with ``(tool_call_id, command, note, signal)`` when the sandbox denied a call: whether to
run it once more, outside the sandbox."""


async def _run(
    command: str,
    cwd: str,
    tracker: ProcessTracker,
    confinement: Confinement | None,
    signal: AbortSignal | None,
    time_limit: float | None,
    on_update: ToolUpdateCallback | None,
) -> ShellResult:
    shell = await ShellCommand.start(command, cwd, tracker, confinement=confinement)
    updater = asyncio.ensure_future(_stream_updates(shell, on_update)) if on_update is not None else None
    try:
        return await shell.wait(signal, time_limit)
    finally:
        if updater is not None:
            updater.cancel()


def _refusal(error: SandboxRefused) -> str:
    """The result of a command the sandbox kept from running: the sandbox's own words, or the keeper's."""
    said = str(error)
    if said.startswith("The command was not run"):
        return said
    return (
        f"The command was not run: the sandbox could not be set up here ({said}). Run it with the "
        'sandbox off (sandbox mode "off"), or, when the read-only .git is what fails, list ".git" in '
        "the sandbox's writableRoots."
    )


def bash_tool(
    workspace: Workspace,
    processes: ProcessTracker | None = None,
    sandbox: Sandbox | None = None,
    escalate: Escalate | None = None,
) -> AgentTool:
    """The ``bash`` tool, running commands in ``workspace.root``; ``processes`` tracks what they start.

    Without a tracker the tool has one of its own, which nothing ends before this
    process exits: a session passes the tracker it ends at the end of each run.
    With a ``sandbox`` each command runs confined (or is refused, see
    :mod:`agentls.tools.sandbox`); a confined command that fails with what looks like a
    denial gets a note saying so, and ``escalate`` may let it run once more unconfined.

    ``details`` is ``{exitCode, truncated, fullOutputPath?, sandbox?}`` (``sandbox``: ``"denied"``
    when the note says the sandbox may have denied the call, ``"outside"`` when it ran outside);
    partial results sent to ``on_update`` carry ``{exitCode: None, truncated}`` and the output so far.
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

        try:
            confinement = await asyncio.to_thread(sandbox.confinement) if sandbox is not None else None
            result = await _run(command, cwd, tracker, confinement, signal, timeout, on_update)
        except SandboxRefused as error:
            raise BashCommandError(_refusal(error), reason="sandbox", exit_code=None, details={}) from None
        note, outside = None, False
        if confinement is not None and result.exit_code not in (0, None):
            assert sandbox is not None
            note = sandbox.denial_note(result.output)
        if note is not None and escalate is not None and await escalate(tool_call_id, command, note, signal):
            result = await _run(command, cwd, tracker, None, signal, timeout, on_update)
            note, outside = "[Run outside the sandbox, once, as the user allowed.]", True
        text, details = _text_and_details(result)
        if note is not None:
            text = f"{text}\n\n{note}"
            details["sandbox"] = "outside" if outside else "denied"
        if result.ended_by == "aborted":
            raise BashCommandError(
                f"{text}\n\nCommand aborted", reason="aborted", exit_code=None, details=details
            )
        if result.ended_by == "timeout":
            assert timeout is not None
            raise BashCommandError(
                f"{text}\n\nCommand timed out after {_seconds(timeout)} seconds",
                reason="timeout",
                exit_code=None,
                details=details,
            )
        if result.exit_code != 0:
            raise BashCommandError(
                f"{text}\n\nExit code: {result.exit_code}",
                reason="exit",
                exit_code=result.exit_code,
                details=details,
            )
        return AgentToolResult(content=[TextContent(text=text)], details=details)

    return AgentTool(
        name="bash",
        label="bash",
        description=BASH_DESCRIPTION,
        parameters=BASH_PARAMETERS,
        execute=execute,
    )
