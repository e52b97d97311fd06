"""An ACP editor for the tests, on the official SDK's client side, and the ACP JSON schema to check against.

:class:`Editor` answers what an ACP editor answers: its buffers for ``fs/read_text_file``
(unsaved text the disk does not have), ``fs/write_text_file`` into them, terminals that
really run the command, and permission questions from a script of answers. Every
message ``agentls acp`` sends is kept, for the schema check.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from acp import spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    CreateTerminalResponse,
    DeniedOutcome,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

ACP_SDK_VERSION = "2.4.0"  # keep in step with scripts/test-servers.sh
SERVER_SOURCE = Path(__file__).resolve().parents[2] / "server"


def schema_path() -> Path:
    tools = os.environ.get("AGENTLS_TOOLS") or os.environ.get("AGENTLS_TOOL_CACHE")
    root = Path(tools) if tools else Path.home() / ".cache" / "agentls-tools"
    path = root / f"acp-sdk-{ACP_SDK_VERSION}" / "node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
    if not path.is_file():
        pytest.fail(f"the ACP schema is missing ({path}): run bash scripts/test-servers.sh")
    return path


def agent_validator() -> jsonschema.Validator:
    """Validates one message an agent sends (the schema's ``Agent`` branch)."""
    schema = json.loads(schema_path().read_text())
    [agent] = [branch for branch in schema["anyOf"] if branch.get("title") == "Agent"]
    return jsonschema.Draft202012Validator({**agent, "$defs": schema["$defs"]})


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None


class Editor:
    """The ACP client side: what a test editor answers, and what it was sent."""

    def __init__(self, buffers: dict[str, str] | None = None) -> None:
        self.buffers = dict(buffers or {})
        """Open buffers by absolute path: what ``fs/read_text_file`` answers, where writes land."""
        self.updates: list[tuple[str, Any]] = []
        self.questions: list[Any] = []
        self.answers: list[str] = []
        """The option ids to choose, in order ("cancelled" cancels); the questions after them hang."""
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, _Terminal] = {}
        self.changed = asyncio.Event()

    def _touch(self) -> None:
        self.changed.set()

    async def until(self, condition: Callable[[], Any], seconds: float = 10.0) -> Any:
        async def wait() -> Any:
            while not (found := condition()):
                self.changed.clear()
                await self.changed.wait()
            return found

        return await asyncio.wait_for(wait(), seconds)

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates if u.session_update == kind and session_id in (None, s)]

    # --- the Client protocol --------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))
        self._touch()

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **_: Any) -> Any:
        self.questions.append((tool_call, options))
        self._touch()
        if not self.answers:
            await asyncio.Event().wait()  # never answered (until the request is cancelled)
        answer = self.answers.pop(0)
        outcome = (
            DeniedOutcome(outcome="cancelled")
            if answer == "cancelled"
            else AllowedOutcome(outcome="selected", option_id=answer)
        )
        return RequestPermissionResponse(outcome=outcome)

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        text = self.buffers.get(path)
        if text is None:
            text = await asyncio.to_thread(Path(path).read_text)
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.buffers[path] = content
        self.writes.append((path, content))
        self._touch()
        return WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, cwd: str | None = None, **_: Any
    ) -> CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal = _Terminal(process)

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                terminal.output.extend(chunk)
                self._touch()

        terminal.reader = asyncio.ensure_future(read())
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        self._touch()
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        return WaitForTerminalExitResponse(
            exit_code=code if code >= 0 else None, signal="SIGKILL" if code < 0 else None
        )

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is not None and terminal.reader is not None:
            await terminal.reader
        code = terminal.process.returncode
        status = None if code is None else TerminalExitStatus(exit_code=code if code >= 0 else None)
        return TerminalOutputResponse(output=terminal.output.decode(), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> KillTerminalResponse:
        terminal = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            terminal.process.kill()
        await terminal.process.wait()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> ReleaseTerminalResponse:
        self.terminals[terminal_id].released = True  # type: ignore[attr-defined]
        return ReleaseTerminalResponse()


@contextlib.asynccontextmanager
async def agent(
    editor: Editor, data_dir: Path, faux_script: Path | None, env: dict[str, str] | None = None
) -> AsyncIterator[tuple[Any, list[dict[str, Any]]]]:
    """``agentls acp`` as a subprocess, its connection, and every message it sent (JSON).

    Without ``faux_script`` (and an ``env`` without API keys) no provider is configured.
    """
    sent: list[dict[str, Any]] = []

    def observe(event: Any) -> None:
        if event.direction.value == "incoming":
            sent.append(event.message)

    command = [sys.executable, "-m", "agentls", "acp", "--data-dir", str(data_dir)]
    # the SDK passes the agent a trimmed environment (no PYTHONPATH): name this checkout's agentls
    env = {"PYTHONPATH": str(SERVER_SOURCE), **(env or {})}
    if faux_script is not None:
        command += ["--faux-script", str(faux_script)]
    async with spawn_agent_process(
        editor, *command, env=env, observers=[observe], use_unstable_protocol=True
    ) as (
        connection,
        _process,
    ):
        yield connection, sent
