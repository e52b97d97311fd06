"""``agentls acp``'s modes and "reject always" against remembered "allow always" rules.

The read-only ``plan`` mode and a "reject always" answer deny, whatever the data
folder's ``permissions.json`` remembers for the folder (official ACP SDK client side).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from acp.schema import ClientCapabilities

from tests.acp.conftest import Editor, agent
from tests.acp.test_acp import calls_of, script, text
from tests.server.conftest import tool_call, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

DISK = ClientCapabilities()
"""An editor without fs or terminal: the tools work on the disk."""


def remembered(data_dir: Path, workspace: Path, *tools: str) -> None:
    """Rules an earlier server stored for the folder."""
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = [{"workspace": str(workspace), "toolName": tool} for tool in tools]
    (data_dir / "permissions.json").write_text(json.dumps({"rules": rules}))


async def test_plan_mode_denies_bash_and_write_despite_remembered_rules(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    remembered(tmp_path / "data", workspace, "bash", "write")
    faux = script(
        tmp_path / "faux.json",
        [tool_call("b1", "bash", {"command": "touch pwned"})],
        [tool_call("w1", "write", {"path": "written.txt", "content": "no"})],
        "Done.",
    )
    editor = Editor()
    async with agent(editor, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=DISK))
        session = (await within(connection.new_session(cwd=str(workspace), mcp_servers=[]))).session_id
        await within(connection.set_session_mode(session_id=session, mode_id="plan"))
        response = await within(connection.prompt(session_id=session, prompt=[text("try")]), 30)
        assert response.stop_reason == "end_turn"
        for call_id, tool in (("b1", "bash"), ("w1", "write")):
            [failed] = [u for u in calls_of(editor, session, call_id) if u.status == "failed"]
            assert failed.content[0].content.text == f"The permission policy denies the {tool} tool."
    assert editor.questions == []
    assert not (workspace / "pwned").exists() and not (workspace / "written.txt").exists()


async def test_reject_always_stands_after_another_session_allows_always(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    faux = script(
        tmp_path / "faux.json",
        [tool_call("b1", "bash", {"command": "touch first"})],
        "One.",
        [tool_call("b2", "bash", {"command": "touch second"})],
        "Two.",
    )
    editor = Editor()
    editor.answers = ["rejectAlways", "allowAlways"]
    async with agent(editor, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=DISK))
        rejecting = (await within(connection.new_session(cwd=str(workspace), mcp_servers=[]))).session_id
        allowing = (await within(connection.new_session(cwd=str(workspace), mcp_servers=[]))).session_id
        await within(connection.prompt(session_id=rejecting, prompt=[text("one")]), 30)
        assert not (workspace / "first").exists()
        await within(connection.prompt(session_id=allowing, prompt=[text("one")]), 30)
        assert (workspace / "first").exists()  # allowed always: the folder now has a bash rule
        rules = json.loads((tmp_path / "data" / "permissions.json").read_text())["rules"]
        assert rules == [{"workspace": str(workspace), "toolName": "bash"}]
        await within(connection.prompt(session_id=rejecting, prompt=[text("two")]), 30)
        [failed] = [u for u in calls_of(editor, rejecting, "b2") if u.status == "failed"]
        assert failed.content[0].content.text == "The permission policy denies the bash tool."
    assert len(editor.questions) == 2 and not (workspace / "second").exists()
