"""``bash`` in the ACP client's terminal, when it offers ``terminal``: the editor shows the command live.

The tool keeps the name, description and arguments of agentls's own ``bash``; the
command runs as ``bash -c COMMAND`` in the session's folder through ``terminal/create``,
its first partial result names the terminal (``details.terminalId``, which the front
puts in the tool call as ``{"type": "terminal"}`` content), and it ends with the
terminal's exit. An abort or the timeout kills the terminal; the terminal is released
whatever happens.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, TextContent
from agentls.ai.abort import AbortError, unless_aborted
from agentls.tools.bash import BASH_DESCRIPTION, BASH_PARAMETERS, BashCommandError
from agentls.tools.shell import MAX_BYTES
from agentls.tools.workspace import ToolInputError


def terminal_bash_tool(connection: Any, session_id: str, cwd: str) -> AgentTool:
    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None:
            signal.throw_if_aborted()
        if (
            not isinstance(args, dict)
            or not isinstance(args.get("command"), str)
            or not args["command"].strip()
        ):
            raise ToolInputError("bash needs a non-empty string 'command'")
        timeout = args.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise ToolInputError(f"timeout must be a positive number of seconds, got {timeout!r}")
        created = await connection.create_terminal(
            session_id=session_id,
            command="bash",
            args=["-c", args["command"]],
            cwd=cwd,
            output_byte_limit=MAX_BYTES,
        )
        terminal = created.terminal_id
        if on_update is not None:
            on_update(AgentToolResult(content=[], details={"terminalId": terminal}))
        ended_by = None
        try:
            waiting = connection.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal)
            try:
                await unless_aborted(asyncio.wait_for(waiting, timeout), signal)
            except AbortError:
                ended_by = "aborted"
            except TimeoutError:
                ended_by = "timeout"
            if ended_by is not None:
                await connection.kill_terminal(session_id=session_id, terminal_id=terminal)
            output = await connection.terminal_output(session_id=session_id, terminal_id=terminal)
        finally:
            await asyncio.shield(connection.release_terminal(session_id=session_id, terminal_id=terminal))
        status = output.exit_status
        exit_code = status.exit_code if status is not None else None
        text = output.output or "(no output)"
        if output.truncated:
            text = f"[Output truncated by the terminal to its last {MAX_BYTES} bytes]\n{text}"
        details = {"terminalId": terminal, "exitCode": exit_code, "truncated": output.truncated}
        if ended_by == "aborted":
            raise BashCommandError(
                f"{text}\n\nCommand aborted", reason="aborted", exit_code=None, details=details
            )
        if ended_by == "timeout":
            raise BashCommandError(
                f"{text}\n\nCommand timed out after {timeout} seconds",
                reason="timeout",
                exit_code=None,
                details=details,
            )
        if exit_code != 0:
            what = (
                f"Exit code: {exit_code}"
                if exit_code is not None
                else f"Killed by {status.signal if status else '?'}"
            )
            raise BashCommandError(f"{text}\n\n{what}", reason="exit", exit_code=exit_code, details=details)
        return AgentToolResult(content=[TextContent(text=text)], details=details)

    return AgentTool(
        name="bash", label="bash", description=BASH_DESCRIPTION, parameters=BASH_PARAMETERS, execute=execute
    )
