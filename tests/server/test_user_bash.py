"""``agent/bash`` and ``agent/abortBash`` end to end: the user's own commands (Pi's ``!cmd`` / ``!!cmd``).

Through the real server: the output streams as ``agent/bashOutput``, the ``bashExecution``
message joins the transcript at once when the agent is idle (events with ``runId: null``)
or after the running run (before its ``agent/settled``), is persisted, and reaches the
model as Pi's text, which the Anthropic provider against a mock server on 127.0.0.1 shows;
a ``!!`` command never does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient, AgentClientError
from agentls.protocol import RequestPermissionParams
from agentls.protocol_methods import BashEndNotification, BashResult

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text, a_tool
from tests.ai.providers.mock_http import MockServer
from tests.server.conftest import Recorder, Servers, Shared, server_options, tool_call, within
from tests.server.test_providers_e2e import MODEL, NO_KEYS, point_anthropic_at
from tests.tools.test_bash import gone

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def run_bash(
    client: AgentClient, recorder: Recorder, session: str, command: str, **options: Any
) -> dict:
    """Run a command to its end; the ``agent/bashEnd`` params once the recorder has them too."""
    started = await within(client.bash(session, command, **options))
    assert isinstance(started, BashResult)
    return await bash_end(recorder, started.bash_id)


async def bash_end(recorder: Recorder, bash_id: str) -> dict:
    note = await recorder.wait_for(lambda n: n.method == "agent/bashEnd" and n.params["bashId"] == bash_id)
    return note.params


def output_of(recorder: Recorder, session: str, bash_id: str) -> str:
    return "".join(p["chunk"] for p in recorder.of(session, "agent/bashOutput") if p["bashId"] == bash_id)


async def test_a_command_streams_its_output_and_joins_the_idle_transcript_at_once(
    shared: Shared, workspace: Path
) -> None:
    client, recorder = shared.client, shared.recorder
    (workspace / "a.txt").write_text("x")
    session = await within(client.new_session(cwd=str(workspace)))
    end = await run_bash(client, recorder, session, "pwd; ls; echo oops >&2; exit 3")
    message = end["message"]
    assert message == {
        "role": "bashExecution",
        "command": "pwd; ls; echo oops >&2; exit 3",
        "output": f"{workspace}\na.txt\noops\n",  # as Pi: the final newline kept
        "exitCode": 3,
        "cancelled": False,
        "truncated": False,
        "timestamp": message["timestamp"],
    }
    assert output_of(recorder, session, end["bashId"]) == f"{workspace}\na.txt\noops\n"
    methods = [n.method for n in recorder.notes if n.session_id == session]
    assert set(methods[:-3]) == {"agent/bashOutput"}
    assert methods[-3:] == ["agent/event", "agent/event", "agent/bashEnd"]
    events = recorder.events(session)
    assert [(e["runId"], e["event"]["type"]) for e in events] == [
        (None, "message_start"),
        (None, "message_end"),
    ]
    numbered = recorder.of(session)  # the output, the message's events and bashEnd, numbered in one row
    assert [n["seq"] for n in numbered] == list(range(1, len(numbered) + 1))
    assert events[0]["event"]["message"] == events[1]["event"]["message"] == message
    assert (await within(client.get_messages(session))).messages == [message]

    # The next run's events go on from there.
    last_seq = numbered[-1]["seq"]
    run = await within(client.prompt(session, "hi"))
    assert run.run_id is not None
    await recorder.settled(run.run_id)
    assert recorder.events(session, run.run_id)[0]["seq"] > last_seq
    numbered = recorder.of(session)
    assert [n["seq"] for n in numbered] == list(range(1, len(numbered) + 1))
    roles = [m["role"] for m in (await within(client.get_messages(session))).messages]
    assert roles == ["bashExecution", "user", "assistant"]


async def test_a_long_output_is_cut_as_the_bash_tool_cuts_it(shared: Shared, workspace: Path) -> None:
    client, recorder = shared.client, shared.recorder
    session = await within(client.new_session(cwd=str(workspace)))
    end = await run_bash(client, recorder, session, "seq 1 3000")
    message = end["message"]
    assert message["truncated"] is True and message["exitCode"] == 0
    assert message["output"] == "\n".join(str(n) for n in range(1001, 3001))
    full = "".join(f"{n}\n" for n in range(1, 3001))
    assert await asyncio.to_thread(Path(message["fullOutputPath"]).read_text) == full
    assert output_of(recorder, session, end["bashId"]) == full


async def test_abort_bash_stops_the_command_and_keeps_its_output(shared: Shared, workspace: Path) -> None:
    client, recorder = shared.client, shared.recorder
    session = await within(client.new_session(cwd=str(workspace)))
    started = await within(client.bash(session, "echo started; sleep 1000 & echo $!; wait"))
    assert isinstance(started, BashResult)
    await recorder.wait_for(lambda n: output_of(recorder, session, started.bash_id).count("\n") == 2)
    pid = int(output_of(recorder, session, started.bash_id).split()[1])
    assert not gone(pid)

    assert await within(client.abort_bash(session)) is True
    end = await bash_end(recorder, started.bash_id)  # sent before the answer
    assert gone(pid)
    message = end["message"]
    assert (message["output"], message["exitCode"], message["cancelled"]) == (f"started\n{pid}\n", None, True)
    assert (await within(client.get_messages(session))).messages == [message]
    assert await within(client.abort_bash(session)) is False


async def test_background_processes_of_a_command_outlive_runs_and_end_with_the_session(
    shared: Shared, workspace: Path
) -> None:
    client, recorder = shared.client, shared.recorder
    shared.faux_script([{"content": "Hello!"}])
    session = await within(client.new_session(cwd=str(workspace)))
    end = await run_bash(client, recorder, session, "sleep 1000 >/dev/null 2>&1 & echo $!")
    pid = int(end["message"]["output"])
    run = await within(client.prompt(session, "hi"))
    assert run.run_id is not None
    await recorder.settled(run.run_id)  # a run's end ends the processes of its bash tool calls only
    assert not gone(pid)
    assert await within(client.delete_session(session))
    assert gone(pid)


async def test_bad_requests(shared: Shared, workspace: Path) -> None:
    client, recorder = shared.client, shared.recorder
    session = await within(client.new_session(cwd=str(workspace)))
    with pytest.raises(AgentClientError) as caught:
        await within(client.bash("no-such-session", "echo hi"))
    assert caught.value.kind == "unknownSession"
    with pytest.raises(AgentClientError) as caught:
        await within(client.abort_bash("no-such-session"))
    assert caught.value.kind == "unknownSession"
    for empty in ("", "  \n"):
        with pytest.raises(AgentClientError) as caught:
            await within(client.bash(session, empty))
        assert caught.value.kind == "invalidParams"
    with pytest.raises(AgentClientError) as caught:
        await within(client.request("agent/bash", {"sessionId": session}, BashResult))
    assert caught.value.code == -32602 and "command" in str(caught.value)

    first = await within(client.bash(session, "sleep 1000"))
    assert isinstance(first, BashResult)
    with pytest.raises(AgentClientError) as caught:
        await within(client.bash(session, "echo second"))
    assert caught.value.kind == "busy" and first.bash_id in str(caught.value)
    assert await within(client.abort_bash(session))
    second = await run_bash(client, recorder, session, "echo second")  # free again after the first's end
    assert second["message"]["output"] == "second\n"
    assert [m["command"] for m in (await within(client.get_messages(session))).messages] == [
        "sleep 1000",
        "echo second",
    ]


async def test_a_command_that_ends_during_a_run_joins_the_transcript_after_the_run(
    servers: Servers, data_dir: Path, faux_script: Any, workspace: Path
) -> None:
    """The run waits for a permission answer, so the command surely ends while it is going."""
    call = tool_call("c1", "bash", {"command": "echo tool"})
    faux_script([{"content": [call], "stopReason": "toolUse"}, {"content": "Done."}])
    asked = asyncio.Event()
    answer = asyncio.Event()

    async def gate(request: RequestPermissionParams) -> str:
        asked.set()
        await answer.wait()
        return "allowOnce"

    client = await servers.start(server_options(data_dir, faux_script), on_permission=gate)
    recorder = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace)))
    run = await within(client.prompt(session, "run it"))
    assert run.run_id is not None
    await within(asked.wait())

    end = await run_bash(client, recorder, session, "echo user")
    assert end["message"]["output"] == "user\n"
    roles = [m["role"] for m in (await within(client.get_messages(session))).messages]
    assert roles == ["user", "assistant"]  # waiting: not between the tool call and its result
    assert not [
        e for e in recorder.events(session) if e["event"].get("message", {}).get("role") == "bashExecution"
    ]

    answer.set()
    settled = await recorder.settled(run.run_id)
    assert settled["stopReason"] == "stop"
    messages = (await within(client.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant", "bashExecution"]
    assert messages[-1] == end["message"]
    notes = [n for n in recorder.notes if n.session_id == session]
    tail = [(n.method, n.params.get("runId"), n.params.get("event", {}).get("type")) for n in notes[-4:]]
    assert tail == [
        ("agent/event", run.run_id, "agent_end"),
        ("agent/event", run.run_id, "message_start"),
        ("agent/event", run.run_id, "message_end"),
        ("agent/settled", run.run_id, None),
    ]
    await recorder.stop()


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text blocks of the user turns of an Anthropic request, in order."""
    texts = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            texts += [b["text"] for b in blocks if b["type"] == "text"]
    return texts


def answer(text: str) -> Any:
    return a_reply(a_start(model=MODEL), a_text(0, text), a_end())


async def test_the_model_gets_a_command_as_pis_text_and_never_a_double_bang_one_also_after_loading(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    printf = r"printf '\033[31mred\033[0m\r\nplain\x01\n'"
    async with MockServer([answer("I see."), answer("Still.")]) as mock:
        point_anthropic_at(data_dir, mock.url)
        client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
        recorder = await Recorder(client).start()
        session = await within(client.new_session(cwd=str(workspace)))
        await run_bash(client, recorder, session, "echo visible")
        colored = await run_bash(client, recorder, session, printf)
        assert colored["message"]["output"] == "red\nplain\n"
        hidden = await run_bash(client, recorder, session, "echo secret-output", exclude_from_context=True)
        assert hidden["message"]["excludeFromContext"] is True
        run = await within(client.prompt(session, "What did I run?"))
        assert run.run_id is not None
        assert (await recorder.settled(run.run_id))["stopReason"] == "stop"
        before = (await within(client.get_messages(session))).messages
        await recorder.stop()
        await within(client.close(), 15)

        again = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
        loaded = await within(again.load_session(session))
        assert loaded.message_count == 5
        assert (await within(again.get_messages(session))).messages == before
        second = await within(again.prompt(session, "And now?", wait=True))
        assert second.stop_reason == "stop"  # type: ignore[union-attr]
        await within(again.close(), 15)

    first, after_load = (request.json() for request in mock.requests)
    # Pi's bashExecutionToText of an output that ends with a newline: the newline is kept
    ran = ["Ran `echo visible`\n```\nvisible\n\n```", f"Ran `{printf}`\n```\nred\nplain\n\n```"]
    assert user_texts(first) == [*ran, "What did I run?"]
    assert user_texts(after_load) == [*ran, "What did I run?", "And now?"]
    for body in (first, after_load):
        assert "secret-output" not in json.dumps(body)


async def test_wait_returns_the_end_of_the_command(shared: Shared, workspace: Path) -> None:
    session = await within(shared.client.new_session(cwd=str(workspace)))
    end = await within(shared.client.bash(session, "echo done", wait=True))
    assert isinstance(end, BashEndNotification)
    assert end.message["output"] == "done\n" and end.session_id == session


async def test_the_full_output_of_a_cut_command_is_a_file_the_sessions_read_opens(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    """Pi's text tells the model where a cut command's whole output is: its ``read`` can open it."""
    async with MockServer() as mock:
        point_anthropic_at(data_dir, mock.url)
        client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
        recorder = await Recorder(client).start()
        session = await within(client.new_session(cwd=str(workspace)))
        end = await run_bash(client, recorder, session, "seq 1 30000")
        path = end["message"]["fullOutputPath"]
        assert end["message"]["truncated"] and path and not path.startswith(str(workspace))
        call = json.dumps({"path": path, "offset": 2, "limit": 2})
        mock.replies += [
            a_reply(a_start(model=MODEL), a_tool(0, "r1", "read", call), a_end("tool_use")),
            answer("Read it."),
        ]
        run = await within(client.prompt(session, "Look at the whole output.", wait=True))
        assert run.stop_reason == "stop"  # type: ignore[union-attr]
        await recorder.stop()
        await within(client.close(), 15)
    result = next(m for m in mock.requests[1].json()["messages"][-1]["content"] if m["type"] == "tool_result")
    assert not result["is_error"] and result["content"].startswith("     2\t2\n     3\t3\n")
