"""``agentls acp`` driven by the official ACP SDK's client side, on the faux model.

The editor (``tests/acp/conftest.py``) has an unsaved buffer, real terminals and
scripted permission answers; every message agentls sends is checked against the ACP
JSON schema of ``@agentclientprotocol/sdk``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    McpServerStdio,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from tests.acp.conftest import Editor, agent, agent_validator
from tests.mcp.conftest import quirky_command
from tests.server.conftest import tool_call, within
from tests.server.test_providers_e2e import NO_KEYS

pytestmark = pytest.mark.asyncio(loop_scope="module")

CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


def script(path: Path, *turns: Any) -> Path:
    """A faux script: a list of tool calls is one turn, a string an answer."""
    responses = [
        {"content": turn, "stopReason": "toolUse"} if isinstance(turn, list) else {"content": turn}
        for turn in turns
    ]
    path.write_text(json.dumps({"responses": responses}))
    return path


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


def calls_of(editor: Editor, session: str, call_id: str) -> list[Any]:
    return [u for s, u in editor.updates if s == session and getattr(u, "tool_call_id", None) == call_id]


async def test_a_prompt_reads_the_unsaved_buffer_edits_through_the_editor_and_runs_bash_in_its_terminal(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = workspace / "notes.txt"
    notes.write_text("saved on disk\n")
    editor = Editor({str(notes): "unsaved in the editor\n"})
    editor.answers = ["allowOnce", "reject"]
    faux = script(
        tmp_path / "faux.json",
        [tool_call("r1", "read", {"path": "notes.txt"})],
        [
            tool_call(
                "e1", "edit", {"path": "notes.txt", "edits": [{"oldText": "unsaved", "newText": "edited"}]}
            )
        ],
        [tool_call("b1", "bash", {"command": "echo from the terminal"})],
        [tool_call("b2", "bash", {"command": "echo never"})],
        "All done.",
    )
    async with agent(editor, tmp_path / "data", faux) as (connection, sent):
        init = await within(connection.initialize(protocol_version=1, client_capabilities=CAPABILITIES))
        assert init.protocol_version == 1 and init.agent_capabilities.load_session
        assert init.agent_capabilities.prompt_capabilities.embedded_context
        assert init.auth_methods == []
        session = (await within(connection.new_session(cwd=str(workspace), mcp_servers=[]))).session_id
        response = await within(connection.prompt(session_id=session, prompt=[text("Go")]), 30)
        assert response.stop_reason == "end_turn"
        await editor.until(lambda: editor.of("usage_update", session))
        [read_start, *read_rest] = calls_of(editor, session, "r1")
        assert (read_start.title, read_start.kind, read_start.status) == ("Read notes.txt", "read", "pending")
        assert read_start.locations[0].path == str(notes)
        [read_end] = [u for u in read_rest if u.status == "completed"]
        assert "unsaved in the editor" in read_end.content[0].content.text
        # the edit went to the editor's buffer, and its diff is in the update
        assert editor.writes == [(str(notes), "edited in the editor\n")]
        assert notes.read_text() == "saved on disk\n"
        [edit_end] = [u for u in calls_of(editor, session, "e1") if u.status == "completed"]
        [diff] = [c for c in edit_end.content if c.type == "diff"]
        assert (diff.path, diff.old_text, diff.new_text) == (
            str(notes),
            "unsaved in the editor\n",
            "edited in the editor\n",
        )
        # bash: asked, allowed once, run in the editor's terminal
        (first_call, first_options), _ = editor.questions
        assert first_call.title == "Run the command: echo from the terminal" and first_call.kind == "execute"
        assert {o.kind for o in first_options} == {
            "allow_once",
            "allow_always",
            "reject_once",
            "reject_always",
        }
        [terminal] = editor.terminals.values()
        assert terminal.output.decode() == "from the terminal\n"
        statuses = [u.status for u in calls_of(editor, session, "b1") if u.status]
        assert statuses == ["pending", "in_progress", "completed"]
        assert any(c.type == "terminal" for u in calls_of(editor, session, "b1") for c in u.content or [])
        [rejected] = [u for u in calls_of(editor, session, "b2") if u.status == "failed"]
        assert "reject" in rejected.content[0].content.text.lower()
        assert "".join(u.content.text for u in editor.of("agent_message_chunk", session)) == "All done."
        assert editor.of("available_commands_update", session)
    # the session's updates come after the answer that gave it (answers go out at once, updates gather)
    answered = next(i for i, m in enumerate(sent) if (m.get("result") or {}).get("sessionId") == session)
    updated = next(i for i, m in enumerate(sent) if m.get("method") == "session/update")
    assert answered < updated
    validator = agent_validator()
    for message in sent:
        validator.validate(message)
    assert len(sent) > 20


async def test_cancel_during_a_slow_bash_kills_its_terminal_and_resolves_cancelled(tmp_path: Path) -> None:
    editor = Editor()
    faux = script(tmp_path / "faux.json", [tool_call("s1", "bash", {"command": "sleep 30"})], "spare")
    async with agent(editor, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=CAPABILITIES))
        session = (await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))).session_id
        await within(connection.set_session_mode(session_id=session, mode_id="bypass"))
        prompt = asyncio.ensure_future(connection.prompt(session_id=session, prompt=[text("sleep")]))
        await editor.until(lambda: editor.terminals)
        await within(connection.cancel(session_id=session))
        assert (await within(prompt)).stop_reason == "cancelled"
        [terminal] = editor.terminals.values()
        assert terminal.process.returncode is not None and terminal.process.returncode < 0
        assert [u.status for u in calls_of(editor, session, "s1") if u.status][-1] == "failed"


async def test_load_replays_list_finds_and_modes_and_options_switch(tmp_path: Path) -> None:
    faux = script(tmp_path / "faux.json", [tool_call("l1", "ls", {})], "Listed.")
    later = script(
        tmp_path / "later.json",
        "Second answer.",
        [tool_call("w1", "write", {"path": "x.txt", "content": "x"})],
        "spare",
    )
    first = Editor()
    async with agent(first, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities()))
        session = (await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))).session_id
        await within(connection.prompt(session_id=session, prompt=[text("List it")]))
    editor = Editor()
    async with agent(editor, tmp_path / "data", later) as (connection, sent):
        await within(connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities()))
        listed = await within(connection.list_sessions(cwd=str(tmp_path)))
        assert [s.session_id for s in listed.sessions] == [session] and listed.sessions[0].title == "List it"
        loaded = await within(connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[]))
        kinds = [u.session_update for s, u in editor.updates if s == session]
        assert kinds[:4] == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
        assert editor.of("user_message_chunk")[0].content.text == "List it"
        assert loaded.modes.current_mode_id == "acceptEdits"
        assert {m.id for m in loaded.modes.available_modes} == {"ask", "acceptEdits", "plan", "bypass"}
        [model, thinking] = loaded.config_options
        assert model.id == "model" and thinking.id == "thinking"

        changed = await within(
            connection.set_config_option(config_id="thinking", session_id=session, value="high")
        )
        assert changed.config_options[1].current_value == "high"
        await within(connection.set_session_mode(session_id=session, mode_id="plan"))
        await editor.until(lambda: editor.of("current_mode_update", session))
        await within(connection.prompt(session_id=session, prompt=[text("again")]))
        await within(connection.prompt(session_id=session, prompt=[text("write")]))
        [denied] = [u for u in calls_of(editor, session, "w1") if u.status == "failed"]
        assert "denies" in denied.content[0].content.text and editor.questions == []
        with pytest.raises(RequestError) as bad:
            await within(connection.set_session_mode(session_id=session, mode_id="yolo"))
        assert "Unknown mode 'yolo'" in str(bad.value.data)
    validator = agent_validator()
    for message in sent:
        validator.validate(message)


async def test_an_mcp_server_passed_in_session_new_and_resources_in_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text("# On disk\n")
    faux = script(
        tmp_path / "faux.json", [tool_call("m1", "mcp__quirky__echo", {"text": "via mcp"})], "Echoed."
    )
    editor = Editor()
    command = quirky_command()
    async with agent(editor, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=CAPABILITIES))
        server = McpServerStdio(name="quirky", command=command[0], args=command[1:], env=[])
        session = (await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[server]))).session_id
        await within(connection.set_session_mode(session_id=session, mode_id="bypass"))
        # the server starts in the background: its tools join once it is ready
        await within(_ready(connection, session))
        blocks = [
            text("Look at these"),
            ResourceContentBlock(type="resource_link", uri=(tmp_path / "doc.md").as_uri(), name="doc.md"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri=(tmp_path / "doc.md").as_uri(), text="# Unsaved\n"),
            ),
        ]
        assert (
            await within(connection.prompt(session_id=session, prompt=blocks), 30)
        ).stop_reason == "end_turn"
        [echo] = [u for u in calls_of(editor, session, "m1") if u.status == "completed"]
        assert echo.content[0].content.text == "via mcp"
        assert calls_of(editor, session, "m1")[0].title == "quirky · echo"


async def _ready(connection: Any, session: str) -> None:
    """Until the session's MCP servers have started (agentls's ``_agentls/mcpServers`` extension)."""
    listing = await connection.ext_method("agentls/mcpServers", {"sessionId": session, "wait": True})
    assert [(s["name"], s["status"]) for s in listing["servers"]] == [("quirky", "ready")]


async def test_bad_input_gets_clear_errors_and_the_agent_keeps_running(tmp_path: Path) -> None:
    faux = script(tmp_path / "faux.json", "Still here.")
    editor = Editor()
    async with agent(editor, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities()))
        with pytest.raises(RequestError) as unknown:
            await within(connection.prompt(session_id="no-such-session", prompt=[text("hi")]))
        assert unknown.value.code == -32602 and "Unknown session" in str(unknown.value.data)
        session = (await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))).session_id
        with pytest.raises(RequestError) as unsupported:
            await within(
                connection.prompt(
                    session_id=session,
                    prompt=[
                        EmbeddedResourceContentBlock(
                            type="resource",
                            resource={
                                "uri": "file:///x.bin",
                                "blob": "AAAA",
                                "mimeType": "application/octet-stream",
                            },  # type: ignore[arg-type]
                        )
                    ],
                )
            )
        assert "binary resource" in str(unsupported.value.data)
        assert (
            await within(connection.prompt(session_id=session, prompt=[text("hi")]))
        ).stop_reason == "end_turn"


async def acp_process(tmp_path: Path, faux: Path) -> asyncio.subprocess.Process:
    """``agentls acp`` on pipes, its data in ``tmp_path``, its model the faux script ``faux``."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls", "acp", "--data-dir", str(tmp_path / "data"),
        "--faux-script", str(faux),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    return process


async def test_malformed_lines_are_answered_with_json_rpc_errors(tmp_path: Path) -> None:
    process = await acp_process(tmp_path, script(tmp_path / "faux.json", "ok"))
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(
        b'{"not json\n[1, 2]\n{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}\n'
    )
    await process.stdin.drain()
    answers = [json.loads(await within(process.stdout.readline())) for _ in range(3)]
    assert [a["error"]["code"] for a in answers[:2]] == [-32700, -32600]
    assert answers[2]["id"] == 7 and answers[2]["result"]["protocolVersion"] == 1
    process.stdin.close()
    _, stderr = await within(process.communicate())
    assert process.returncode == 0, stderr


async def test_requests_read_from_a_file_or_dev_null_as_from_a_pipe(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}\nnope'
    )
    for source in (requests, Path(os.devnull)):
        with source.open("rb") as stdin:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agentls", "acp", "--data-dir", str(tmp_path / "data"),
                stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            stdout, stderr = await within(process.communicate())
        assert process.returncode == 0, stderr
        answers = sorted((json.loads(line) for line in stdout.splitlines()), key=lambda a: a["id"] or 0)
        if source == requests:  # the last line, without its newline, is read too
            assert [a["error"]["code"] for a in answers[:1]] == [-32700]
            assert answers[1]["id"] == 3 and answers[1]["result"]["protocolVersion"] == 1
        else:
            assert answers == []


async def test_requests_read_before_the_end_of_input_are_answered_and_runs_aborted(tmp_path: Path) -> None:
    faux = tmp_path / "faux.json"  # an answer that would stream for minutes
    faux.write_text(json.dumps({"responses": [{"content": "word " * 5000}], "tokensPerSecond": 20}))
    process = await acp_process(tmp_path, faux)
    assert process.stdin is not None and process.stdout is not None

    def send(msg_id: int, method: str, params: dict[str, Any]) -> None:
        assert process.stdin is not None
        request = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        process.stdin.write(json.dumps(request).encode() + b"\n")

    send(1, "initialize", {"protocolVersion": 1})
    send(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    answers: dict[int, Any] = {}
    while 2 not in answers:
        message = json.loads(await within(process.stdout.readline()))
        if "id" in message and "method" not in message:
            answers[message["id"]] = message
    session = answers[2]["result"]["sessionId"]
    # the last lines: a prompt, a second session, and the end of input right after them
    send(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "talk"}]})
    send(4, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
    process.stdin.close()
    stdout, stderr = await within(process.communicate())
    assert process.returncode == 0, stderr
    for line in stdout.splitlines():
        message = json.loads(line)
        if "id" in message and "method" not in message:
            answers[message["id"]] = message
    assert answers[3]["result"]["stopReason"] == "cancelled"
    assert answers[4]["result"]["sessionId"] not in (None, session)
    assert b"failed" not in stderr


async def test_a_permission_question_never_answered_then_cancelled_resolves_cancelled(tmp_path: Path) -> None:
    # the faux model answers the aborted run's next call too (as aborted): one answer for it
    faux = script(
        tmp_path / "faux.json", [tool_call("q1", "bash", {"command": "echo hi"})], "spare", "Next one."
    )
    editor = Editor()  # answers nothing: the question hangs
    async with agent(editor, tmp_path / "data", faux) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=CAPABILITIES))
        session = (await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))).session_id
        prompt = asyncio.ensure_future(connection.prompt(session_id=session, prompt=[text("run it")]))
        await editor.until(lambda: editor.questions)
        await within(connection.cancel(session_id=session))
        assert (await within(prompt)).stop_reason == "cancelled"
        assert editor.terminals == {}  # never run
        after = await within(connection.prompt(session_id=session, prompt=[text("and now?")]))
        assert after.stop_reason == "end_turn"
        assert editor.of("agent_message_chunk", session)[-1].content.text == "Next one."
        # the model option: the session's models, switched by value
        options = await within(
            connection.set_config_option(config_id="model", session_id=session, value="faux/faux-1")
        )
        assert options.config_options[0].current_value == "faux/faux-1"
        with pytest.raises(RequestError) as unknown:
            await within(
                connection.set_config_option(config_id="model", session_id=session, value="faux/none")
            )
        assert "Unknown model" in str(unknown.value.data)


async def test_without_a_provider_initialize_offers_auth_methods_and_authenticate_says_what_is_missing(
    tmp_path: Path,
) -> None:
    editor = Editor()
    async with agent(editor, tmp_path / "data", None, env=NO_KEYS) as (connection, sent):
        init = await within(
            connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
        )
        assert [(m.id, m.vars[0].name) for m in init.auth_methods] == [
            ("anthropic", "ANTHROPIC_API_KEY"),
            ("openai", "OPENAI_API_KEY"),
        ]
        with pytest.raises(RequestError) as missing:
            await within(connection.authenticate(method_id="anthropic"))
        assert missing.value.code == -32000 and "ANTHROPIC_API_KEY is not set" in str(missing.value.data)
        with pytest.raises(RequestError) as no_model:
            await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))
        assert no_model.value.code == -32000 and "No model provider" in str(no_model.value.data)
    validator = agent_validator()
    for message in sent:
        validator.validate(message)
