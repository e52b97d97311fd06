"""What a broken or hostile client sends, in raw frames to the real server: every request is answered.

Each test plays one kind of bad input against ``agentls serve`` over stdio and checks
the answer JSON-RPC 2.0 prescribes, that the server stays alive and answers the next
request, and what it logs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.server.conftest import LONG_TEXT, FauxScript, tool_call, within
from tests.server.raw import RawServer, frame, notification, request, well_formed_response

pytestmark = pytest.mark.asyncio(loop_scope="module")

EDITOR = {
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
    "experimental": {"agent": {"requestPermission": True}},
}
"""An editor's capabilities: workspace/applyEdit with document changes, agent/requestPermission."""


@pytest_asyncio.fixture(loop_scope="module")
async def server(data_dir: Path, faux_script: FauxScript) -> AsyncIterator[RawServer]:
    started = await RawServer.start()
    await started.initialize({"dataDir": str(data_dir), "fauxScript": str(faux_script.path)})
    yield started
    await started.close()


async def alive(server: RawServer, msg_id: str = "alive") -> None:
    answer = await server.call(msg_id, "agent/listSessions", {})
    assert "result" in answer, answer


def error_of(message: dict[str, Any]) -> tuple[Any, int]:
    assert well_formed_response(message), message
    return message["id"], message["error"]["code"]


@pytest.mark.parametrize("length", [b"99999999999999999999", b"1000000000000"])
async def test_a_huge_content_length_is_refused_and_the_stream_resynchronises(
    server: RawServer, length: bytes
) -> None:
    await server.send(b"Content-Length: " + length + b"\r\n\r\n" + b'{"jsonrpc":"2.0","id":1,"method":"x"}')
    await alive(server)
    [refusal] = [m for m in server.responses() if m.get("id") is None]
    assert error_of(refusal) == (None, -32600)
    assert "exceeds the limit of 67108864 bytes" in refusal["error"]["message"]
    assert server.process.returncode is None


async def test_the_size_limit_is_configurable_and_an_oversized_body_sent_whole_is_skipped(
    data_dir: Path, faux_script: FauxScript
) -> None:
    server = await RawServer.start("--max-message-bytes", "2000")
    try:
        await server.initialize({"dataDir": str(data_dir)})
        big = request(7, "agent/listSessions", {"cwd": "x" * 5000})
        await server.send(big + request(8, "agent/listSessions", {}))
        assert "result" in await server.response(8)
        [refusal] = [m for m in server.responses() if m.get("id") is None]
        size = len(big) - len(b"Content-Length: 5082\r\n\r\n")
        assert f"of {size} bytes exceeds the limit of 2000 bytes" in refusal["error"]["message"]
        assert not [m for m in server.responses() if m.get("id") == 7]
    finally:
        await server.close()


async def test_garbage_between_frames_is_a_parse_error_and_the_next_frame_is_read(server: RawServer) -> None:
    await server.send(
        b"hello there\r\n\r\n" + b"\x00\xff" * 10000 + request("after", "agent/listSessions", {})
    )
    assert "result" in await server.response("after")
    [error] = [m for m in server.responses() if m.get("id") is None]
    assert error_of(error) == (None, -32700)
    assert "not a header line" in error["error"]["message"]


@pytest.mark.parametrize(
    ("body", "code", "reason"),
    [
        (b"[" * 10000 + b"]" * 10000, -32600, "nests deeper than 512 levels"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700, "Parse error"),
        (b'{"jsonrpc":"2.0","id":1,"method":"agent/listSessions","params":{"cwd":NaN}}', -32700, "NaN"),
        (b"\xff\xfe{}", -32700, "Parse error"),
        (b'"just a string"', -32600, "must be a JSON object"),
        (b"[]", -32600, "batches are not supported"),
    ],
)
async def test_unparseable_bodies_get_one_error_with_a_null_id(
    server: RawServer, body: bytes, code: int, reason: str
) -> None:
    await server.send(frame(body=body))
    await alive(server)
    [error] = [m for m in server.responses() if m.get("id") is None]
    assert error_of(error) == (None, code)
    assert reason in error["error"]["message"]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"id": 5, "method": "agent/listSessions"}, -32600),  # no "jsonrpc"
        ({"jsonrpc": "1.0", "id": 5, "method": "agent/listSessions"}, -32600),
        ({"jsonrpc": "2.0", "id": 5, "method": 17}, -32600),
        ({"jsonrpc": "2.0", "id": 5}, -32600),  # neither a request nor a response
        ({"jsonrpc": "2.0", "id": 5, "method": "agent/listSessions", "params": "cwd"}, -32602),
        (
            {"jsonrpc": "2.0", "id": 5, "method": "agent/prompt", "params": {"sessionId": 5, "text": []}},
            -32602,
        ),
        # an LSP request agentls does not offer
        ({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"textDocument": 5}}, -32601),
        ({"jsonrpc": "2.0", "id": 5, "method": "textDocument/didOpen", "params": {}}, -32600),  # notification
        (
            {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"capabilities": {}}},
            -32600,
        ),  # again
        ({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}, -32601),
        # an object with a "jsonrpc" key inside the params is data, not a message
        (
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "agent/getState",
                "params": {"sessionId": {"jsonrpc": "2.0"}},
            },
            -32602,
        ),
    ],
)
async def test_invalid_requests_with_an_id_are_answered_with_that_id(
    server: RawServer, message: dict[str, Any], code: int
) -> None:
    await server.send(frame(message))
    assert error_of(await server.response(5)) == (5, code)
    await alive(server)


async def test_a_nested_jsonrpc_object_in_valid_params_is_kept_as_data(
    server: RawServer, workspace: Path
) -> None:
    session_id = await server.new_session("new", workspace, permissions={"jsonrpc": "allow"})
    state = await server.call("state", "agent/getState", {"sessionId": session_id})
    assert state["result"]["sessionId"] == session_id


@pytest.mark.parametrize("msg_id", [None, 1.5, True, {"a": 1}, [1]])
async def test_a_request_with_an_unusable_id_is_answered_with_a_null_id(
    server: RawServer, msg_id: Any
) -> None:
    await server.send(frame({"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions"}))
    await alive(server)
    [error] = [m for m in server.responses() if m.get("id") is None]
    assert error_of(error) == (None, -32600)


async def test_a_batch_gets_an_error_for_each_request_in_it(server: RawServer) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": "b1", "method": "agent/listSessions"},
        {"jsonrpc": "2.0", "method": "agent/listSessions"},
        {"jsonrpc": "2.0", "id": "b2", "method": "agent/listModels"},
    ]
    await server.send(frame(batch))
    assert error_of(await server.response("b1")) == ("b1", -32600)
    assert error_of(await server.response("b2")) == ("b2", -32600)
    await alive(server)
    assert not [m for m in server.responses() if m.get("id") is None]


async def test_requests_before_initialize_and_after_shutdown_are_refused(data_dir: Path) -> None:
    server = await RawServer.start()
    try:
        assert error_of(await server.call(1, "agent/listSessions", {})) == (1, -32002)
        await server.initialize({"dataDir": str(data_dir)})
        await server.send(request(2, "shutdown") + request(3, "agent/listSessions", {}))
        assert (await server.response(2))["result"] is None
        assert error_of(await server.response(3)) == (3, -32600)
        await server.send(notification("exit"))
        assert await server.close() == 0
    finally:
        await server.close()


async def test_bad_requests_are_logged_as_one_line_without_a_traceback(server: RawServer) -> None:
    await server.send(frame(body=b"{oops") + request(9, "agent/prompt", {"sessionId": 1}))
    assert error_of(await server.response(9)) == (9, -32602)
    await alive(server)
    assert not server.notifications("window/logMessage")  # the client has the answers already
    await server.close()
    log = server.stderr.decode()
    assert log.count("\n") == 2, log
    assert "Parse error" in log and "request 9: Invalid params for agent/prompt" in log
    assert "Traceback" not in log


# --- the server's own requests -------------------------------------------------------------


async def run_with_an_editor(
    data_dir: Path,
    faux_script: FauxScript,
    workspace: Path,
    *calls: dict[str, Any],
    open_files: tuple[Path, ...] = (),
    **options: Any,
) -> tuple[RawServer, str, str]:
    """A server for an editor client with ``open_files`` open, a session in ``workspace`` and a run of
    ``calls``; (server, session, run)."""
    faux_script([{"content": [c], "stopReason": "toolUse"} for c in calls] + [{"content": "Done."}])
    server = await RawServer.start()
    await server.initialize(
        {"dataDir": str(data_dir), "fauxScript": str(faux_script.path), **options}, EDITOR
    )
    for path in open_files:
        document = {"uri": path.as_uri(), "languageId": "plaintext", "version": 1, "text": path.read_text()}
        await server.send(notification("textDocument/didOpen", {"textDocument": document}))
    session_id = await server.new_session("new", workspace)
    answer = await server.call("prompt", "agent/prompt", {"sessionId": session_id, "text": "go"})
    return server, session_id, answer["result"]["runId"]


async def write_an_open_file(
    data_dir: Path, faux_script: FauxScript, workspace: Path, **options: Any
) -> tuple[RawServer, str, str, Path]:
    """A run whose ``write`` changes ``notes.txt``, open in the editor; (server, session, run, the file)."""
    target = workspace / "notes.txt"
    target.write_text("old text\n")
    call = tool_call("w", "write", {"path": "notes.txt", "content": "new text\n"})
    server, session_id, run_id = await run_with_an_editor(
        data_dir, faux_script, workspace, call, open_files=(target,), **options
    )
    return server, session_id, run_id, target


def tool_results(server: RawServer, session_id: str) -> list[dict[str, Any]]:
    """The ``tool_execution_end`` events of a session."""
    return [e for e in server.events(session_id) if e["type"] == "tool_execution_end"]


def result_text(end: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in end["result"]["content"])


def stored_messages(data_dir: Path, session_id: str) -> list[dict[str, Any]]:
    lines = (data_dir / "sessions" / f"{session_id}.jsonl").read_text().splitlines()
    return [entry["message"] for entry in map(json.loads, lines[1:]) if entry.get("type") == "message"]


async def test_a_client_cancelling_a_permission_question_rejects_the_call(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    server, session_id, run_id = await run_with_an_editor(
        data_dir, faux_script, workspace, tool_call("b", "bash", {"command": "echo ran > ran.txt"})
    )
    try:
        question = await server.server_request("agent/requestPermission")
        await server.send(notification("$/cancelRequest", {"id": question["id"]}))
        settled = await server.settled(run_id)
        assert settled["stopReason"] == "stop"
        [result] = tool_results(server, session_id)
        assert "rejected" in result_text(result)
        kinds = [e["type"] for e in server.events(session_id)]
        assert kinds.count("tool_execution_end") == 1 and kinds[-1] == "agent_end"
        assert not (workspace / "ran.txt").exists()
        roles = [m["role"] for m in stored_messages(data_dir, session_id)]
        assert roles == ["user", "assistant", "toolResult", "assistant"]
    finally:
        await server.close()


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"result": None}, "does not say applied: true"),
        ({"result": 5}, "does not say applied: true"),
        ({"result": {"applied": "maybe"}}, "does not say applied: true"),
        ({"result": {"applied": False, "failureReason": "read-only buffer"}}, "read-only buffer"),
        ({"error": {"code": -32603, "message": "the editor broke"}}, "the editor broke"),
        ({"error": "not an error object"}, "malformed error"),
        ("cancel", "the editor cancelled the edit"),
    ],
)
async def test_an_apply_edit_answer_other_than_applied_true_writes_nothing(
    data_dir: Path, faux_script: FauxScript, workspace: Path, answer: Any, reason: str
) -> None:
    server, session_id, run_id, target = await write_an_open_file(data_dir, faux_script, workspace)
    try:
        edit = await server.server_request("workspace/applyEdit")
        if answer == "cancel":
            await server.send(notification("$/cancelRequest", {"id": edit["id"]}))
        else:
            await server.send(frame({"jsonrpc": "2.0", "id": edit["id"], **answer}))
        await server.settled(run_id)
        [result] = tool_results(server, session_id)
        assert result["isError"] is True and reason in result_text(result), result
        assert target.read_text() == "old text\n"
    finally:
        await server.close()


async def test_an_unanswered_apply_edit_times_out_with_a_tool_error(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    server, session_id, run_id, target = await write_an_open_file(
        data_dir, faux_script, workspace, applyEditTimeoutMs=200
    )
    try:
        edit = await server.server_request("workspace/applyEdit")
        await server.settled(run_id)
        [result] = tool_results(server, session_id)
        assert "did not answer workspace/applyEdit within 0.2 s" in result_text(result)
        assert target.read_text() == "old text\n"
        cancel = await server.wait_for(lambda m: m.get("method") == "$/cancelRequest")
        assert cancel["params"]["id"] == edit["id"]
        # a late answer is ignored
        await server.send(frame({"jsonrpc": "2.0", "id": edit["id"], "result": {"applied": True}}))
        await alive(server)
    finally:
        await server.close()


async def test_non_finite_numbers_go_on_the_wire_as_null(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    call = tool_call("n", "read", {"path": "x.txt", "offset": float("nan"), "limit": float("inf")})
    server, session_id, run_id = await run_with_an_editor(data_dir, faux_script, workspace, call)
    try:
        await server.settled(run_id)  # the reader refuses NaN: every message was read as strict JSON
        [start] = [e for e in server.events(session_id) if e["type"] == "tool_execution_start"]
        assert start["args"] == {"path": "x.txt", "offset": None, "limit": None}
    finally:
        await server.close()


@pytest.mark.parametrize("method", ["agent/newSession", "agent/listSessions", "agent/listPermissionRules"])
@pytest.mark.parametrize("cwd", ["a\u0000b", "~no-such-user-here/x"])
async def test_a_folder_no_file_system_takes_is_invalid_params(
    server: RawServer, method: str, cwd: str
) -> None:
    answer = await server.call(5, method, {"cwd": cwd})
    assert error_of(answer) == (5, -32000)
    assert answer["error"]["data"] == {"kind": "invalidParams"}
    assert "is not a usable path" in answer["error"]["message"]


async def test_a_failed_initialize_can_be_sent_again(data_dir: Path) -> None:
    server = await RawServer.start()
    try:
        bad = {"processId": None, "capabilities": {}, "initializationOptions": {"applyEditTimeoutMs": -5}}
        assert error_of(await server.call(1, "initialize", bad)) == (1, -32602)
        assert error_of(await server.call(2, "agent/listSessions", {})) == (2, -32002)
        good = {"processId": None, "capabilities": {}, "initializationOptions": {"dataDir": str(data_dir)}}
        assert "result" in await server.call(3, "initialize", good)
        assert (await server.call(4, "agent/listSessions", {}))["result"] == {"sessions": []}
    finally:
        await server.close()


async def test_sigterm_ends_the_server_as_the_end_of_input_does(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": LONG_TEXT}], slow=True)
    server = await RawServer.start()
    try:
        await server.initialize({"dataDir": str(data_dir), "fauxScript": str(faux_script.path)})
        session_id = await server.new_session("new", workspace)
        await server.call("prompt", "agent/prompt", {"sessionId": session_id, "text": "go"})
        await server.wait_for(
            lambda m: (
                m.get("params", {}).get("event", {}).get("assistantMessageEvent", {}).get("type")
                == "text_delta"
            )
        )
        server.process.terminate()
        assert await within(server.process.wait()) == 0
        *_, last = stored_messages(data_dir, session_id)
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    finally:
        await server.close()
