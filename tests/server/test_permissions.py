"""The permission policy end to end: the real server asks the client before ``bash`` runs.

Also the last flow of the server issue: an abort while a slow tool runs.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient
from agentls.protocol import RequestPermissionParams
from agentls.protocol_methods import SettledNotification

from tests.server.conftest import FauxScript, tool_call, within

pytestmark = pytest.mark.asyncio(loop_scope="module")


def bash_then_answer(command: str, *, calls: int = 1) -> list[Any]:
    responses: list[Any] = []
    for n in range(calls):
        call = tool_call(f"b{n}", "bash", {"command": command})
        responses += [{"content": [call], "stopReason": "toolUse"}, {"content": f"done {n}"}]
    return responses


class Answers:
    """A client's permission answers, and the questions it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[RequestPermissionParams] = []
        self.was_asked = asyncio.Event()
        self.never = asyncio.Event()

    async def __call__(self, request: RequestPermissionParams) -> str:
        self.asked.append(request)
        self.was_asked.set()
        if not self.answers:
            await self.never.wait()  # a client that never answers
        return self.answers.pop(0)


async def tool_result(client: AgentClient, session: str) -> dict[str, Any]:
    messages = (await within(client.get_messages(session))).messages
    return next(m for m in messages if m["role"] == "toolResult")


async def test_bash_asks_and_runs_when_allowed_once(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script(bash_then_answer("echo hello from bash"))
    answers = Answers("allowOnce")
    client = await start(answers)
    session = await within(client.new_session(cwd=str(tmp_path)))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification) and settled.stop_reason == "stop"
    (question,) = answers.asked
    assert question.tool_name == "bash" and question.title == "Run the command: echo hello from bash"
    assert [o.id for o in question.options] == ["allowOnce", "allowAlways", "reject"]
    result = await tool_result(client, session)
    assert not result["isError"] and "hello from bash" in result["content"][0]["text"]


async def test_a_rejection_blocks_the_call(start: Any, faux_script: FauxScript, tmp_path: Path) -> None:
    faux_script(bash_then_answer("touch created-by-bash"))
    client = await start(Answers("reject"))
    session = await within(client.new_session(cwd=str(tmp_path)))
    await within(client.prompt(session, "go", wait=True))
    result = await tool_result(client, session)
    assert result["isError"] and result["content"][0]["text"] == "The user rejected the bash call."
    assert not (tmp_path / "created-by-bash").exists()


async def test_allow_always_is_remembered_for_the_workspace_and_can_be_revoked(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script(bash_then_answer("true", calls=3))
    answers = Answers("allowAlways", "reject")
    client = await start(answers)
    session = await within(client.new_session(cwd=str(tmp_path)))
    await within(client.prompt(session, "first", wait=True))
    await within(client.prompt(session, "second", wait=True))
    assert len(answers.asked) == 1  # the second call was allowed by the rule
    rules = await within(client._call("agent/listPermissionRules", {"cwd": str(tmp_path)}))
    assert rules == {"rules": [{"workspace": str(tmp_path), "toolName": "bash"}]}
    assert (tmp_path / "data" / "permissions.json").is_file()
    revoked = await within(
        client._call("agent/revokePermissionRule", {"workspace": str(tmp_path), "toolName": "bash"})
    )
    assert revoked == {"revoked": True}
    await within(client.prompt(session, "third", wait=True))
    assert len(answers.asked) == 2


async def test_policy_from_initialization_options_can_deny_or_allow(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script(bash_then_answer("echo no"))
    answers = Answers()
    client = await start(answers, permissions={"bash": "deny"})
    session = await within(client.new_session(cwd=str(tmp_path)))
    await within(client.prompt(session, "go", wait=True))
    result = await tool_result(client, session)
    assert result["isError"] and result["content"][0]["text"] == "The permission policy denies the bash tool."
    assert answers.asked == []


async def test_without_the_capability_the_server_asks_with_show_message_request(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script(bash_then_answer("echo no"))
    client = await start(None)  # answers window/showMessageRequest with no choice
    session = await within(client.new_session(cwd=str(tmp_path)))
    await within(client.prompt(session, "go", wait=True))
    result = await tool_result(client, session)
    assert result["isError"] and result["content"][0]["text"] == "The user rejected the bash call."


async def test_abort_while_the_question_is_pending_rejects_it(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script(bash_then_answer("echo never"))
    answers = Answers()  # never answers
    client = await start(answers)
    session = await within(client.new_session(cwd=str(tmp_path)))
    accepted = await within(client.prompt(session, "go"))
    await within(answers.was_asked.wait())
    aborted = await within(client.abort(session))
    assert aborted.aborted
    settled = await within(client.wait_settled(accepted.run_id))
    assert settled.stop_reason == "aborted"
    result = await tool_result(client, session)
    assert result["isError"]


async def test_abort_during_a_slow_tool_settles_and_a_later_prompt_works(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script([*bash_then_answer("sleep 30"), {"content": "still here"}])
    client = await start(Answers(), permissions={"bash": "allow"})
    session = await within(client.new_session(cwd=str(tmp_path)))
    async with client.subscribe(session) as notes:
        accepted = await within(client.prompt(session, "go"))
        async for note in notes:
            if note.method == "agent/event" and note.params["event"]["type"] == "tool_execution_start":
                break
    started = time.monotonic()
    aborted = await within(client.abort(session))
    assert aborted.aborted and aborted.run_id == accepted.run_id
    assert time.monotonic() - started < 10
    settled = await within(client.wait_settled(accepted.run_id))
    assert settled.stop_reason == "aborted"
    result = await tool_result(client, session)
    assert result["isError"] and "Command aborted" in result["content"][0]["text"]
    later = await within(client.prompt(session, "again", wait=True))
    assert isinstance(later, SettledNotification) and later.stop_reason == "stop"


async def test_the_file_tools_run_without_questions_inside_the_workspace(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    calls = [
        tool_call("w", "write", {"path": "notes/todo.txt", "content": "one\ntwo\n"}),
        tool_call("e", "edit", {"path": "notes/todo.txt", "edits": [{"oldText": "two", "newText": "three"}]}),
        tool_call("g", "grep", {"pattern": "three"}),
        tool_call("x", "write", {"path": "../outside.txt", "content": "no"}),
    ]
    faux_script([{"content": [c], "stopReason": "toolUse"} for c in calls] + [{"content": "done"}])
    answers = Answers()
    client = await start(answers)
    session = await within(client.new_session(cwd=str(tmp_path)))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification) and settled.stop_reason == "stop"
    assert answers.asked == []
    assert (tmp_path / "notes" / "todo.txt").read_text() == "one\nthree\n"
    messages = (await within(client.get_messages(session))).messages
    results = {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}
    assert "+three" in results["e"]["content"][0]["text"]
    assert "notes/todo.txt:2: three" in results["g"]["content"][0]["text"]
    assert results["x"]["isError"] and "outside the workspace" in results["x"]["content"][0]["text"]
    assert not (tmp_path.parent / "outside.txt").exists()


async def test_a_sessions_own_policy_is_stored_with_it_and_applies_after_loading(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script(bash_then_answer("echo ran >> ran.txt", calls=2))
    answers = Answers()
    first = await start(answers)
    allowed = await within(first.new_session(cwd=str(tmp_path), permissions={"bash": "allow"}))
    denied = await within(first.new_session(cwd=str(tmp_path), permissions={"bash": "deny"}))
    await within(first.prompt(allowed, "first", wait=True))
    await within(first.close())
    second = await start(answers)  # a new server: the policy comes from the session file...
    await within(second.load_session(denied))
    await within(second.prompt(denied, "second", wait=True))
    result = await tool_result(second, denied)
    assert result["content"][0]["text"] == "The permission policy denies the bash tool."
    # ... where it narrows the server's; a widening one applies when the load passes it
    await within(second.load_session(allowed, permissions={"bash": "allow"}))
    await within(second.prompt(allowed, "second", wait=True))
    assert answers.asked == []
    assert (tmp_path / "ran.txt").read_text() == "ran\nran\n"


async def test_a_session_may_allow_outside_paths_and_writes_there_ask_first(
    start: Any, faux_script: FauxScript, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "outside.txt").write_text("from outside\n")
    calls = [
        tool_call("r", "read", {"path": "../outside.txt"}),
        tool_call("w", "write", {"path": "../written.txt", "content": "hi\n"}),
        tool_call("i", "write", {"path": "inside.txt", "content": "in\n"}),
    ]
    faux_script([{"content": [c], "stopReason": "toolUse"} for c in calls] + [{"content": "done"}])
    answers = Answers("allowOnce")
    client = await start(answers)
    session = await within(client.new_session(cwd=str(workspace), allow_outside_workspace=True))
    await within(client.prompt(session, "go", wait=True))
    results = [m for m in (await within(client.get_messages(session))).messages if m["role"] == "toolResult"]
    assert [r["isError"] for r in results] == [False, False, False]
    assert "from outside" in results[0]["content"][0]["text"]
    [question] = answers.asked  # only the write outside asked
    assert question.tool_name == "write" and "outside the workspace" in question.title
    assert (tmp_path / "written.txt").read_text() == "hi\n" and (workspace / "inside.txt").is_file()
