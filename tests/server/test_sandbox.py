"""The sandbox end to end: the real server runs the agent's ``bash`` confined, reports the sandbox in
``agent/getState``, asks to run a denied call once outside it, and refuses where it cannot confine."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClientError
from agentls.protocol_methods import BashEndNotification, SettledNotification

from tests.mcp.conftest import git_command
from tests.server.conftest import Answers, FauxScript, Recorder, tool_call, within
from tests.server.test_mcp import calls, ready, results, stdio, text
from tests.server.test_permissions import bash_then_answer, tool_result
from tests.server.test_providers_e2e import connected_to

pytestmark = pytest.mark.asyncio(loop_scope="module")

WORKSPACE_WRITE = {"mode": "workspace-write"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """``$HOME`` of the server (so of its commands): a folder outside the workspace."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def start_with_home(start: Any, home: Path) -> Any:
    """``start``, with ``bash`` allowed and the commands' ``$HOME`` outside the workspace."""

    async def start_client(answers: Answers | None = None, env: dict[str, str] | None = None, **options: Any):
        options = {"permissions": {"bash": "allow"}, **options}
        return await start(answers, env={"HOME": str(home), **(env or {})}, **options)

    return start_client


def result_text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


async def test_get_state_reports_the_sandbox_of_the_session_or_the_server(
    start_with_home: Any, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    client = await start_with_home(sandbox={"mode": "read-only", "network": True})
    server_default = await within(client.new_session(cwd=str(workspace)))
    own = await within(
        client.new_session(cwd=str(workspace), sandbox={**WORKSPACE_WRITE, "writableRoots": ["out"]})
    )
    state = (await within(client.get_state(server_default))).sandbox
    assert state is not None and state.mode == "read-only" and state.network is True
    assert state.status == "enforced" and state.read_only == []
    state = (await within(client.get_state(own))).sandbox
    assert state is not None and state.mode == "workspace-write" and state.network is False
    assert state.writable_roots == [str(workspace), str(workspace / "out")]
    assert state.read_only == [str(workspace / ".git")] and state.fallback == "refuse"


async def test_bad_sandbox_settings_are_invalid_params_naming_the_field(
    start_with_home: Any, workspace: Path
) -> None:
    client = await start_with_home()
    for sandbox, field in (
        ({"mode": "sandboxed"}, "sandbox.mode"),
        ({"mode": "read-only", "network": "perhaps"}, "sandbox.network"),
        ({"mode": "read-only", "writableRoots": [""]}, "sandbox.writableRoots.0"),
        ({"mode": "read-only", "fallback": "maybe"}, "sandbox.fallback"),
        ({"mode": "read-only", "netwrok": False}, "sandbox.netwrok"),
    ):
        with pytest.raises(AgentClientError) as caught:
            await within(client._call("agent/newSession", {"cwd": str(workspace), "sandbox": sandbox}))
        assert caught.value.code == -32602 and field in str(caught.value), str(caught.value)


async def test_a_denied_write_asks_to_run_once_outside_and_the_answer_is_recorded(
    start_with_home: Any, faux_script: FauxScript, workspace: Path, home: Path, tmp_path: Path
) -> None:
    faux_script(bash_then_answer('echo x > "$HOME/outside"'))
    answers = Answers("runUnsandboxed")
    client = await start_with_home(answers)
    session = await within(client.new_session(cwd=str(workspace), sandbox=WORKSPACE_WRITE))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification) and settled.stop_reason == "stop"
    [question] = answers.asked
    assert question.kind == "sandbox" and question.tool_call_id == "b0" and question.tool_name == "bash"
    assert [option.id for option in question.options] == ["runUnsandboxed", "reject"]
    assert "Permission denied" in question.title and f"{home}/outside" in question.title
    result = await tool_result(client, session)
    assert result["isError"] is False and "outside the sandbox, once" in result_text(result)
    assert (home / "outside").read_text() == "x\n"
    lines = (tmp_path / "data" / "sessions" / f"{session}.jsonl").read_text().splitlines()
    recorded = [json.loads(line) for line in lines if "agentls/sandboxEscalation" in line]
    assert [entry["data"] for entry in recorded] == [
        {"toolCallId": "b0", "command": 'echo x > "$HOME/outside"', "allowed": True}
    ]


async def test_a_rejected_escalation_keeps_the_failure_with_what_was_denied(
    start_with_home: Any, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(bash_then_answer("touch ../escaped"))
    answers = Answers("reject")
    client = await start_with_home(answers)
    session = await within(client.new_session(cwd=str(workspace), sandbox=WORKSPACE_WRITE))
    await within(client.prompt(session, "go", wait=True))
    result = await tool_result(client, session)
    assert result["isError"] is True and "The sandbox (workspace-write) may have denied this" in result_text(
        result
    )
    assert "touch: cannot touch '../escaped': Permission denied" in result_text(result)
    assert not (workspace.parent / "escaped").exists() and len(answers.asked) == 1


async def test_no_network_from_the_agents_bash_with_network_from_the_users_own_command(
    start_with_home: Any, faux_script: FauxScript, workspace: Path, home: Path
) -> None:
    async with connected_to() as (port, connected):
        child = f"import socket; socket.create_connection(('127.0.0.1', {port})).close()"
        faux_script(bash_then_answer(f'{sys.executable} -c "{child}"'))
        client = await start_with_home(Answers("reject"))
        session = await within(client.new_session(cwd=str(workspace), sandbox=WORKSPACE_WRITE))
        await within(client.prompt(session, "go", wait=True))
        result = await tool_result(client, session)
        assert result["isError"] is True and "PermissionError" in result_text(result)
        assert not connected.is_set()
        # the user's own !cmd is never confined: it connects, and writes outside the folder
        end = await within(
            client.bash(session, f'{sys.executable} -c "{child}" && echo y > "$HOME/mine"', wait=True)
        )
        assert isinstance(end, BashEndNotification) and end.message["exitCode"] == 0
        await within(connected.wait())
        assert (home / "mine").read_text() == "y\n"


async def test_a_kernel_without_support_refuses_with_a_clear_message_unless_the_fallback_allows(
    start_with_home: Any, faux_script: FauxScript, workspace: Path, home: Path
) -> None:
    faux_script(bash_then_answer('echo x > "$HOME/outside"'))
    unsupported = {"AGENTLS_SANDBOX_PROBE": "unsupported"}
    client = await start_with_home(Answers(), env=unsupported, sandbox=WORKSPACE_WRITE)
    session = await within(client.new_session(cwd=str(workspace)))
    state = (await within(client.get_state(session))).sandbox
    assert state is not None and state.status == "refused" and "no Landlock" in (state.reason or "")
    await within(client.prompt(session, "go", wait=True))
    result = await tool_result(client, session)
    assert result["isError"] is True and result_text(result).startswith(
        "The command was not run: this kernel has no Landlock, which the workspace-write sandbox needs."
    )
    assert not (home / "outside").exists()

    fallback = await within(
        client.new_session(cwd=str(workspace), sandbox={**WORKSPACE_WRITE, "fallback": "unconfined"})
    )
    state = (await within(client.get_state(fallback))).sandbox
    assert state is not None and state.status == "unconfined"
    await within(client.prompt(fallback, "go", wait=True))
    assert (await tool_result(client, fallback))["isError"] is False
    assert (home / "outside").read_text() == "x\n"


async def test_a_loaded_session_keeps_its_sandbox_where_it_narrows_the_servers(
    start_with_home: Any, workspace: Path
) -> None:
    first = await start_with_home()
    confined = await within(first.new_session(cwd=str(workspace), sandbox=WORKSPACE_WRITE))
    wide = await within(
        first.new_session(cwd=str(workspace), sandbox={**WORKSPACE_WRITE, "writableRoots": ["/"]})
    )
    await within(first.close())

    unconfined_server = await start_with_home()
    loaded = await within(unconfined_server.load_session(confined))
    assert loaded.warnings is None
    state = (await within(unconfined_server.get_state(confined))).sandbox
    assert state is not None and state.mode == "workspace-write" and state.status == "enforced"

    read_only_server = await start_with_home(sandbox={"mode": "read-only"})
    loaded = await within(read_only_server.load_session(wide))
    assert loaded.warnings == [
        "The session file's sandbox was not applied (it would let bash do more than this server's); "
        "the server's applies."
    ]
    state = (await within(read_only_server.get_state(wide))).sandbox
    assert state is not None and state.mode == "read-only" and state.writable_roots == []


async def test_sandboxed_stdio_mcp_servers_cannot_commit_in_git_and_a_kernel_without_support_fails_them(
    start_with_home: Any, faux_script: FauxScript, workspace: Path
) -> None:
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.txt").write_text("a\n")
    await asyncio.to_thread(subprocess.run, ["git", "-C", str(workspace), "add", "a.txt"], check=True)
    commit = {"repo_path": str(workspace), "message": "from the MCP server"}
    faux_script(calls(tool_call("g1", "mcp__git__git_commit", commit)))
    options = {
        "mcpServers": {"git": stdio(git_command(workspace))},
        "permissions": {"mcp__git__*": "allow"},
        "sandbox": WORKSPACE_WRITE,
        "sandboxMcpServers": True,
    }
    client = await start_with_home(**options)
    recorder = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "git")
    await within(client.prompt(session, "commit", wait=True))
    await recorder.stop()
    [result] = await results(client, session)
    assert result["isError"] is True and "Read-only file system" in text(result)
    assert list((workspace / ".git" / "refs" / "heads").iterdir()) == []

    refusing = await start_with_home(env={"AGENTLS_SANDBOX_PROBE": "unsupported"}, **options)
    session = await within(refusing.new_session(cwd=str(workspace)))
    await within(refusing.prompt(session, "commit", wait=True))
    [git] = (await within(refusing.list_mcp_servers(session))).servers
    assert git.status == "failed" and "no Landlock" in (git.error or "")
