"""Permission presets over the LSP front, a rejection's reason, the ``demo`` option and a first
prompt that waits for the folder's trust answer: through the real server (``agentls serve``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClientError
from agentls.protocol import RequestPermissionParams, RequestPermissionResult

from tests.mcp.conftest import quirky_command
from tests.server.conftest import FauxScript, Recorder, Servers, server_options, tool_call, within
from tests.server.test_hardening_permissions import DENIED, Questions, bash, calls, results, run
from tests.server.test_mcp import stdio, text

pytestmark = pytest.mark.asyncio(loop_scope="module")


# --- presets ---------------------------------------------------------------------------------


async def test_get_state_names_the_preset_and_lists_every_one_in_cycle_order(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "hi"}])
    client = await servers.start(server_options(data_dir, faux_script))
    session = await within(client.new_session(cwd=str(workspace)))
    state = await within(client.get_state(session))
    assert state.permission_preset == "acceptEdits"
    assert [p.id for p in state.permission_presets] == ["ask", "acceptEdits", "plan", "bypass"]
    assert [p.name for p in state.permission_presets] == [
        "Ask before edits",
        "Accept edits",
        "Read-only",
        "Bypass permissions",
    ]
    assert all(p.description for p in state.permission_presets)


async def test_a_session_started_read_only_refuses_bash_and_write_and_reads(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("kept\n")
    calls(
        faux_script,
        bash("touch made-by-bash"),
        tool_call("w1", "write", {"path": "made.txt", "content": "x"}),
        tool_call("r1", "read", {"path": "notes.txt"}),
    )
    questions = Questions("allowOnce")
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    session = await within(client.new_session(cwd=str(workspace), permission_preset="plan"))
    assert (await within(client.get_state(session))).permission_preset == "plan"
    denied_bash, denied_write, read = await run(client, session)
    assert text(denied_bash) == DENIED.format("bash")
    assert text(denied_write) == DENIED.format("write")
    assert "kept" in text(read)
    assert not (workspace / "made-by-bash").exists() and not (workspace / "made.txt").exists()
    assert questions.asked == []


async def test_switching_to_bypass_runs_bash_unasked_and_back_to_accept_edits_asks_again(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        [
            {"content": [bash("echo ran > bypassed.txt")], "stopReason": "toolUse"},
            {"content": "done"},
            {"content": [bash("echo again > again.txt", "b2")], "stopReason": "toolUse"},
            {"content": "done"},
        ]
    )
    questions = Questions("reject")
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    session = await within(client.new_session(cwd=str(workspace)))
    state = await within(client.set_permission_preset(session, "bypass"))
    assert state.permission_preset == "bypass"
    [ran] = await run(client, session)
    assert not ran["isError"] and (workspace / "bypassed.txt").read_text() == "ran\n"
    assert questions.asked == []

    state = await within(client.set_permission_preset(session, "acceptEdits"))
    assert state.permission_preset == "acceptEdits"
    await run(client, session)
    assert [q.tool_name for q in questions.asked] == ["bash"]
    assert not (workspace / "again.txt").exists()


async def test_an_unknown_preset_is_refused_naming_the_presets_and_changes_nothing(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "hi"}])
    client = await servers.start(server_options(data_dir, faux_script))
    session = await within(client.new_session(cwd=str(workspace)))
    with pytest.raises(AgentClientError) as refused:
        await within(client._call("agent/setPermissionPreset", {"sessionId": session, "preset": "yolo"}))
    assert refused.value.code == -32602
    for name in ("ask", "acceptEdits", "plan", "bypass"):
        assert name in str(refused.value)
    assert (await within(client.get_state(session))).permission_preset == "acceptEdits"
    with pytest.raises(AgentClientError) as unknown_session:
        await within(client.set_permission_preset("nope", "plan"))
    assert unknown_session.value.kind == "unknownSession"


# --- a rejection's reason ----------------------------------------------------------------------

NO_ONE_TO_ASK = "no terminal to ask on; --allow bash allows it"


async def test_a_rejection_with_a_reason_tells_the_model_that_reason_not_that_a_user_refused(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    def no_one_to_ask(request: RequestPermissionParams) -> RequestPermissionResult:
        return RequestPermissionResult(outcome="reject", reason=NO_ONE_TO_ASK)

    calls(faux_script, bash("echo hi"))
    client = await servers.start(server_options(data_dir, faux_script), on_permission=no_one_to_ask)
    session = await within(client.new_session(cwd=str(workspace)))
    [rejected] = await run(client, session)
    assert rejected["isError"]
    assert text(rejected) == f"The bash call was rejected: {NO_ONE_TO_ASK}"


async def test_a_reason_too_long_to_be_one_is_a_plain_rejection(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    calls(faux_script, bash("echo hi"))
    client = await servers.start(
        server_options(data_dir, faux_script),
        on_permission=lambda _: RequestPermissionResult.model_construct(outcome="reject", reason="x" * 5000),
    )
    session = await within(client.new_session(cwd=str(workspace)))
    [rejected] = await run(client, session)
    assert text(rejected) == "The user rejected the bash call."


# --- the demo option -------------------------------------------------------------------------


async def test_the_demo_option_answers_with_the_bundled_script_which_reads_the_readme(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    (workspace / "README.md").write_text("# A project\n\nIts readme, read by the demo.\n")
    client = await servers.start({"dataDir": str(data_dir), "demo": True})
    session = await within(client.new_session(cwd=str(workspace)))
    assert (await within(client.get_state(session))).model.provider == "faux"
    settled = await within(client.prompt(session, "what is this project?", wait=True))
    assert settled.stop_reason == "stop"
    [read] = await results(client, session)
    assert "Its readme, read by the demo." in text(read)
    messages = (await within(client.get_messages(session))).messages
    assert "scripted by the offline faux model" in json.dumps(messages[-1])


# --- a first prompt waits for the trust answer -------------------------------------------------


async def test_a_prompt_sent_while_an_mcp_json_waits_for_trust_uses_the_trusted_servers_tools(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    """The folder's only project file is its ``.mcp.json``: the first turn still waits for the answer
    (before, the run went on at once and the model's call got "Tool mcp__quirky__echo not found")."""
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"quirky": stdio(quirky_command())}}))
    calls(faux_script, tool_call("e1", "mcp__quirky__echo", {"text": "trusted"}))
    asked = asyncio.Event()
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def answering(request: RequestPermissionParams) -> str:
        if request.tool_name != "mcp":
            return "allowOnce"
        asked.set()
        return await answer

    client = await servers.start(server_options(data_dir, faux_script), on_permission=answering)
    recorder = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace)))
    await within(asked.wait())
    run_id = (await within(client.prompt(session, "echo"))).run_id
    state = await within(client.get_state(session))
    assert state.is_running and state.project_trust == "trusted"  # nothing but the servers to trust
    events = [n.params["event"]["type"] for n in recorder.notes if n.method == "agent/event"]
    assert "turn_start" not in events
    answer.set_result("allowAlways")
    settled = await within(client.wait_settled(run_id))
    assert settled.stop_reason == "stop"
    [echoed] = await results(client, session)
    assert not echoed["isError"] and text(echoed) == "trusted"


async def test_an_abort_ends_the_wait_for_the_trust_answer(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"quirky": stdio(quirky_command())}}))
    faux_script([{"content": "never"}])
    asked = asyncio.Event()
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def answering(request: RequestPermissionParams) -> str:
        asked.set()
        return await never

    client = await servers.start(server_options(data_dir, faux_script), on_permission=answering)
    session = await within(client.new_session(cwd=str(workspace)))
    await within(asked.wait())
    await within(client.prompt(session, "hi"))
    aborted = await within(client.abort(session))
    assert aborted.aborted
    assert not (await within(client.get_state(session))).is_running
