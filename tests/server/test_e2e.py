"""End to end: the real ``agentls serve`` subprocess, driven over stdio by :class:`AgentClient`.

Sessions run on the offline faux provider; each test writes the responses it needs.
There are no tools yet, so the scripted tool calls name tools that do not exist: the
kernel still goes through its whole tool sequence and answers each with an error result.
Tests that need only sessions of their own share one server (``shared``); the others
(restarts, persistence listings, server configuration, the end of the connection)
start their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient, AgentClientError
from agentls.protocol import PROTOCOL_VERSION, ResultModel
from agentls.protocol_methods import REQUESTS

from tests.server.conftest import (
    LONG_TEXT,
    WAIT,
    FauxScript,
    Recorder,
    Servers,
    Shared,
    server_options,
    server_process,
    tool_call,
    within,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

BUSY_TEXT = "Let me think about that for a moment, then answer."
"""At the slow pace: about 0.65 s of streaming, time enough to queue things during it."""


async def agent_error(awaitable: Any) -> AgentClientError:
    """The :class:`AgentClientError` a request fails with."""
    with pytest.raises(AgentClientError) as caught:
        await within(awaitable)
    return caught.value


def shape(events: list[dict]) -> list[str]:
    """Event params as short labels, consecutive deltas of one block collapsed into one label."""
    labels: list[str] = []
    for params in events:
        event = params["event"]
        kind = event["type"]
        if kind == "message_update":
            update = event["assistantMessageEvent"]
            label = f"update:{update['type']}:{update['contentIndex']}"
            if update["type"].endswith("_delta") and labels and labels[-1] == label:
                continue
        elif kind in ("message_start", "message_end"):
            message = event["message"]
            label = f"{kind}:{message['role']}"
            if message["role"] == "toolResult":
                label += f":{message['toolCallId']}"
        elif kind.startswith("tool_execution"):
            label = f"{kind}:{event['toolCallId']}"
        else:
            label = kind
        labels.append(label)
    return labels


def rebuild(events: list[dict]) -> list[list[dict]]:
    """Every assistant message's content, rebuilt from its ``message_update`` deltas as protocol.md says."""
    messages: list[list[dict]] = []
    for params in events:
        event = params["event"]
        if event["type"] == "message_start" and event["message"]["role"] == "assistant":
            messages.append([dict(block) for block in event["message"]["content"]])
        if event["type"] != "message_update":
            continue
        update = event["assistantMessageEvent"]
        blocks, index = messages[-1], update.get("contentIndex")
        kind = update["type"]
        if kind == "text_start":
            blocks.append({"type": "text", "text": ""})
        elif kind == "text_delta":
            blocks[index]["text"] += update["delta"]
        elif kind == "thinking_start":
            blocks.append({"type": "thinking", "thinking": ""})
        elif kind == "thinking_delta":
            blocks[index]["thinking"] += update["delta"]
        elif kind == "toolcall_start":
            blocks.append({"type": "toolCall"})
        elif kind == "toolcall_end":
            blocks[index] = update["toolCall"]
    return messages


def texts(message: dict) -> str:
    return "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")


def transcript(messages: list[dict]) -> list[tuple[str, str]]:
    """``(role, text)`` of each wire message."""
    return [(m["role"], texts(m)) for m in messages]


def queue_ids(params: dict) -> tuple[list[str], list[str]]:
    return [i["id"] for i in params["steering"]], [i["id"] for i in params["followUp"]]


# --- handshake -------------------------------------------------------------------------------


async def test_handshake_advertises_the_agent_capability(shared: Shared) -> None:
    client = shared.client
    agent = client.server_capabilities
    assert agent["version"] == PROTOCOL_VERSION
    assert agent["methods"] == sorted(REQUESTS)
    assert {"sessions", "persistence", "queue", "deltaEvents", "faux"} <= set(agent["features"])


# --- a run's events --------------------------------------------------------------------------


async def test_parallel_tool_calls_stream_the_kernel_event_sequence(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script(
        [
            {
                "content": [
                    {"type": "text", "text": "Let me look at both."},
                    tool_call("c1", "missing_one", {"path": "a.txt"}),
                    tool_call("c2", "missing_two", {}),
                ],
                "stopReason": "toolUse",
            },
            {"content": "Neither tool exists."},
            {"content": "Second run."},
        ]
    )
    session = await within(client.new_session())
    accepted = await within(client.prompt(session, "Look at a.txt"))
    run_id = accepted.run_id
    assert run_id and accepted.queued is None
    settled = await recorder.settled(run_id)
    assert settled == {"sessionId": session, "seq": settled["seq"], "runId": run_id, "stopReason": "stop"}

    events = recorder.events(session)
    assert shape(events) == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "update:text_start:0",
        "update:text_delta:0",
        "update:text_end:0",
        "update:toolcall_start:1",
        "update:toolcall_delta:1",
        "update:toolcall_end:1",
        "update:toolcall_start:2",
        "update:toolcall_delta:2",
        "update:toolcall_end:2",
        "message_end:assistant",
        # the parallel preparation pass: an unknown tool ends right where it starts
        "tool_execution_start:c1",
        "tool_execution_end:c1",
        "tool_execution_start:c2",
        "tool_execution_end:c2",
        # then the tool results, in call order
        "message_start:toolResult:c1",
        "message_end:toolResult:c1",
        "message_start:toolResult:c2",
        "message_end:toolResult:c2",
        "turn_end",
        "turn_start",
        "message_start:assistant",
        "update:text_start:0",
        "update:text_delta:0",
        "update:text_end:0",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ]
    numbered = recorder.of(session)
    assert [p["seq"] for p in numbered] == list(range(1, len(numbered) + 1))
    assert {p["runId"] for p in events} == {run_id}
    assert {p["sessionId"] for p in events} == {session}

    for params in events:
        event = params["event"]
        if event["type"] == "message_update":
            # no cumulative partial message on the wire, and no usage on every delta
            assert set(event) == {"type", "assistantMessageEvent"}
            assert "partial" not in event["assistantMessageEvent"]
            assert "usage" not in json.dumps(event)
    ends = {
        p["event"]["toolCallId"]: p["event"] for p in events if p["event"]["type"] == "tool_execution_end"
    }
    assert ends["c1"]["isError"] is True
    assert ends["c1"]["result"]["content"] == [{"type": "text", "text": "Tool missing_one not found"}]
    assert ends["c2"]["result"]["content"] == [{"type": "text", "text": "Tool missing_two not found"}]
    starts = [p["event"] for p in events if p["event"]["type"] == "tool_execution_start"]
    assert [(s["toolName"], s["args"]) for s in starts] == [
        ("missing_one", {"path": "a.txt"}),
        ("missing_two", {}),
    ]
    turn_end = next(p["event"] for p in events if p["event"]["type"] == "turn_end")
    assert [r["toolCallId"] for r in turn_end["toolResults"]] == ["c1", "c2"]

    # the deltas rebuild each assistant message exactly as its message_end carries it
    finals = [
        p["event"]["message"]["content"]
        for p in events
        if p["event"]["type"] == "message_end" and p["event"]["message"]["role"] == "assistant"
    ]
    assert rebuild(events) == finals
    assert finals[0][1] == tool_call("c1", "missing_one", {"path": "a.txt"})

    messages = (await within(client.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    agent_end = events[-1]["event"]
    assert agent_end["messages"] == messages

    # the next run of the session goes on counting where the first stopped
    second = await within(client.prompt(session, "Again", wait=True))
    assert second.stop_reason == "stop" and second.run_id != run_id
    more = recorder.events(session)[len(events) :]
    assert more[0]["seq"] > events[-1]["seq"]
    numbered = recorder.of(session)  # the first run's notifications, then the second's
    assert [p["seq"] for p in numbered] == list(range(1, len(numbered) + 1))
    assert {p["runId"] for p in more} == {second.run_id}
    assert len(recorder.of(session, "agent/settled")) == 2


# --- queues ----------------------------------------------------------------------------------


async def test_steer_and_follow_up_while_running_are_injected_and_leave_the_queue(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": BUSY_TEXT}, {"content": "Steered."}, {"content": "Followed up."}], slow=True)
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Start"))).run_id
    await recorder.wait_delta(session)

    steer_id = await within(client.steer(session, "Also check b.txt"))
    follow_id = await within(client.follow_up(session, "Then summarise"))
    assert steer_id != follow_id
    queue = await within(client.get_queue(session))
    assert [(i.id, i.kind, i.text) for i in queue.steering] == [(steer_id, "steering", "Also check b.txt")]
    assert [(i.id, i.kind, i.text) for i in queue.follow_up] == [(follow_id, "followUp", "Then summarise")]

    settled = await recorder.settled(run_id)
    assert settled["stopReason"] == "stop"
    assert len(recorder.of(session, "agent/settled")) == 1

    states = [queue_ids(p) for p in recorder.of(session, "agent/queue")]
    assert states[-4:] == [
        ([steer_id], []),
        ([steer_id], [follow_id]),
        ([], [follow_id]),  # the steering message was delivered
        ([], []),  # and then the follow-up
    ]
    assert all(state == ([], []) for state in states[:-4])
    queue = await within(client.get_queue(session))
    assert queue.steering == [] and queue.follow_up == []

    messages = (await within(client.get_messages(session))).messages
    assert transcript(messages) == [
        ("user", "Start"),
        ("assistant", BUSY_TEXT),
        ("user", "Also check b.txt"),
        ("assistant", "Steered."),
        ("user", "Then summarise"),
        ("assistant", "Followed up."),
    ]
    events = recorder.events(session)
    assert {p["runId"] for p in events} == {run_id}
    numbered = recorder.of(session)
    assert [p["seq"] for p in numbered] == list(range(1, len(numbered) + 1))
    assert shape(events).count("agent_start") == 1


async def test_when_busy_queues_or_rejects(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": LONG_TEXT}], slow=True)
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Start"))).run_id
    await recorder.wait_delta(session)

    steered = await within(client.prompt(session, "Steer me", when_busy="steer"))
    followed = await within(client.prompt(session, "Follow me", when_busy="followUp"))
    assert steered.run_id is None and steered.queued
    assert followed.run_id is None and followed.queued
    for when_busy in ("reject", None):
        error = await agent_error(client.prompt(session, "Not now", when_busy=when_busy))
        assert error.code == -32000 and error.kind == "busy" and error.data == {"kind": "busy"}
        assert run_id in str(error) and "when_busy" in str(error)
    error = await agent_error(client.continue_(session))
    assert error.kind == "busy"

    queue = await within(client.get_queue(session))
    assert [(i.id, i.kind, i.text) for i in queue.steering] == [(steered.queued, "steering", "Steer me")]
    assert [(i.id, i.kind, i.text) for i in queue.follow_up] == [(followed.queued, "followUp", "Follow me")]
    state = await within(client.get_state(session))
    assert state.is_running and state.run_id == run_id and state.queue == queue

    aborted = await within(client.abort(session))
    assert aborted.aborted and aborted.queue == queue


async def test_clear_queue_returns_the_removed_items(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": LONG_TEXT}], slow=True)
    session = await within(client.new_session())
    await within(client.prompt(session, "Start"))
    await recorder.wait_delta(session)
    s1 = await within(client.steer(session, "s1"))
    s2 = await within(client.steer(session, "s2"))
    f1 = await within(client.follow_up(session, "f1"))
    f2 = await within(client.follow_up(session, "f2"))

    removed = await within(client.clear_queue(session, item_id=s2))
    assert [i.id for i in removed.steering] == [s2] and removed.follow_up == []
    removed = await within(client.clear_queue(session, kind="followUp"))
    assert removed.steering == [] and [(i.id, i.text) for i in removed.follow_up] == [(f1, "f1"), (f2, "f2")]

    for item_id in ("item-nope", s2, f1):
        error = await agent_error(client.clear_queue(session, item_id=item_id))
        assert error.kind == "unknownQueueItem" and item_id in str(error)
    # an item of the other kind is not found either
    error = await agent_error(client.clear_queue(session, kind="followUp", item_id=s1))
    assert error.kind == "unknownQueueItem"

    removed = await within(client.clear_queue(session))
    assert [(i.id, i.kind, i.text) for i in removed.steering] == [(s1, "steering", "s1")]
    removed = await within(client.clear_queue(session))
    assert removed.steering == [] and removed.follow_up == []
    assert queue_ids(recorder.of(session, "agent/queue")[-1]) == ([], [])
    await within(client.abort(session))


# --- abort, continue -------------------------------------------------------------------------


async def test_abort_during_a_slow_stream(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": LONG_TEXT}, {"content": "Answered."}, {"content": "Followed up."}], slow=True)
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Write a lot"))).run_id
    await recorder.wait_delta(session)
    steer_id = await within(client.steer(session, "Steer later"))
    follow_id = await within(client.follow_up(session, "Follow later"))

    settled = asyncio.ensure_future(client.wait_settled(run_id))
    result = await within(client.abort(session))
    # the answer comes only after the run has settled
    assert settled.done()
    assert settled.result().stop_reason == "aborted"
    assert settled.result().error_message == "Request was aborted"
    assert result.aborted and result.run_id == run_id
    # queued items survive an abort and are reported
    assert [i.id for i in result.queue.steering] == [steer_id]
    assert [i.id for i in result.queue.follow_up] == [follow_id]
    assert len(recorder.of(session, "agent/settled")) == 1

    state = await within(client.get_state(session))
    assert not state.is_running and state.run_id is None
    assert state.queue == result.queue
    messages = (await within(client.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"
    assert LONG_TEXT.startswith(texts(messages[1])) and texts(messages[1]) != LONG_TEXT
    assert shape(recorder.events(session))[-3:] == ["message_end:assistant", "turn_end", "agent_end"]

    idle = await within(client.abort(session))
    assert not idle.aborted and idle.run_id is None and idle.queue == result.queue

    # a later prompt works, and takes the surviving items along
    later = await within(client.prompt(session, "Now answer", wait=True))
    assert later.stop_reason == "stop"
    messages = (await within(client.get_messages(session, since=2))).messages
    assert transcript(messages) == [
        ("user", "Now answer"),
        ("user", "Steer later"),
        ("assistant", "Answered."),
        ("user", "Follow later"),
        ("assistant", "Followed up."),
    ]
    queue = await within(client.get_queue(session))
    assert queue.steering == [] and queue.follow_up == []


async def test_continue_after_a_provider_error(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": "x", "stopReason": "error", "errorMessage": "boom"}, {"content": "Recovered."}])
    session = await within(client.new_session())
    failed = await within(client.prompt(session, "Try", wait=True))
    assert failed.stop_reason == "error" and failed.error_message == "boom"
    state = await within(client.get_state(session))
    assert state.error_message == "boom" and not state.is_running

    # the transcript ends with the assistant's error: nothing to continue from
    error = await agent_error(client.continue_(session))
    assert error.code == -32000 and error.kind == "cannotContinue"
    assert "assistant" in str(error) and "Send a new prompt, or queue a steering or follow-up" in str(error)

    # with a queued follow-up, continue runs it
    item_id = await within(client.follow_up(session, "Try again"))
    assert [i.id for i in (await within(client.get_queue(session))).follow_up] == [item_id]
    run = await within(client.continue_(session))
    settled = await within(client.wait_settled(run.run_id))
    assert settled.stop_reason == "stop" and settled.error_message is None
    messages = (await within(client.get_messages(session))).messages
    assert transcript(messages) == [
        ("user", "Try"),
        ("assistant", "x"),
        ("user", "Try again"),
        ("assistant", "Recovered."),
    ]
    assert messages[1]["stopReason"] == "error" and messages[1]["errorMessage"] == "boom"
    assert queue_ids(recorder.of(session, "agent/queue")[-1]) == ([], [])

    fresh = await within(client.new_session())
    error = await agent_error(client.continue_(fresh))
    assert (
        error.kind == "cannotContinue" and "No messages" in str(error) and "Send a prompt first" in str(error)
    )


# --- many sessions ---------------------------------------------------------------------------


async def test_two_sessions_stream_at_once(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": BUSY_TEXT}], slow=True)
    first = await within(client.new_session())
    second = await within(client.new_session())
    assert first != second
    run_a = (await within(client.prompt(first, "One"))).run_id
    run_b = (await within(client.prompt(second, "Two"))).run_id
    assert (await recorder.settled(run_a))["stopReason"] == "stop"
    assert (await recorder.settled(run_b))["stopReason"] == "stop"

    for session, run_id in ((first, run_a), (second, run_b)):
        events = recorder.events(session)
        numbered = recorder.of(session)  # every notification of the session, agent/event's and the others
        assert [p["seq"] for p in numbered] == list(range(1, len(numbered) + 1))
        assert {p["runId"] for p in events} == {run_id}
        assert texts(events[-1]["event"]["messages"][-1]) == BUSY_TEXT
    # the two streams interleave
    owners = [
        n.session_id for n in recorder.notes if n.method == "agent/event" and n.session_id in (first, second)
    ]
    last_a = max(i for i, owner in enumerate(owners) if owner == first)
    first_b = owners.index(second)
    assert first_b < last_a
    switches = sum(1 for a, b in itertools.pairwise(owners) if a != b)
    assert switches > 4


# --- errors ----------------------------------------------------------------------------------


INVALID_PARAMS: list[tuple[str, Any, str]] = [
    ("agent/getState", {}, "sessionId"),
    ("agent/getState", None, "sessionId"),
    ("agent/getState", {"sessionId": 42}, "sessionId"),
    ("agent/getState", {"sessionId": ""}, "sessionId"),
    ("agent/prompt", {"sessionId": "s"}, "text"),
    ("agent/prompt", {"sessionId": "s", "text": ["x"]}, "text"),
    ("agent/prompt", {"sessionId": "s", "text": "x", "whenBusy": "later"}, "whenBusy"),
    (
        "agent/prompt",
        {
            "sessionId": "s",
            "text": "x",
            "images": [{"type": "image", "data": "AA", "mimeType": "text/plain"}],
        },
        "images.0.mimeType",
    ),
    ("agent/steer", {"sessionId": "s", "text": None}, "text"),
    ("agent/getMessages", {"sessionId": "s", "since": -1}, "since"),
    ("agent/setThinkingLevel", {"sessionId": "s", "level": "extreme"}, "level"),
    ("agent/setQueueModes", {"sessionId": "s", "steering": "some"}, "steering"),
    ("agent/setPermissionPreset", {"sessionId": "s", "preset": "yolo"}, "preset"),
    ("agent/clearQueue", {"sessionId": "s", "kind": "everything"}, "kind"),
    ("agent/setModel", {"sessionId": "s", "provider": "faux"}, "id"),
    ("agent/newSession", {"model": {"provider": "faux"}}, "model.id"),
    ("agent/newSession", {"colour": "blue"}, "colour"),
    ("agent/getState", ["s"], "params"),
    ("agent/prompt", "hello", "params"),
    ("agent/listSessions", 7, "params"),
]


async def test_invalid_params_name_the_field(shared: Shared) -> None:
    client = shared.client
    shared.faux_script([{"content": "Hello!"}])
    session = await within(client.new_session())
    for method, params, field in INVALID_PARAMS:
        case = f"{method} {params!r}"
        error = await agent_error(client.request(method, params, ResultModel))
        assert error.code == -32602, case
        assert error.kind == "invalidParams", case
        assert str(error).startswith(f"Invalid params for {method}: "), case
        if field == "params":
            assert "params must be an object" in str(error), case
        else:
            assert f"{field}: " in str(error), case
            assert any(problem.startswith(f"{field}: ") for problem in error.data["errors"]), case
    # nothing of it hurt the server or the session
    assert await within(client.prompt(session, "Hi", wait=True)) is not None
    assert (await within(client.get_state(session))).message_count == 2


async def test_unknown_method(shared: Shared) -> None:
    client = shared.client
    error = await agent_error(client.request("agent/doTheImpossible", {}, ResultModel))
    assert error.code == -32601 and "agent/doTheImpossible" in str(error)
    # an unknown notification is ignored
    client._rpc.notify("agent/nonsense", {"x": 1})
    assert isinstance(await within(client.list_sessions()), list)


SESSION_REQUESTS: dict[str, dict[str, Any]] = {
    "agent/loadSession": {},
    "agent/prompt": {"text": "hi"},
    "agent/steer": {"text": "hi"},
    "agent/followUp": {"text": "hi"},
    "agent/getQueue": {},
    "agent/clearQueue": {},
    "agent/abort": {},
    "agent/continue": {},
    "agent/getState": {},
    "agent/getMessages": {"since": 0},
    "agent/setModel": {"provider": "faux", "id": "faux-1"},
    "agent/listModels": {},
    "agent/setThinkingLevel": {"level": "low"},
    "agent/setQueueModes": {"steering": "all"},
    "agent/setBudget": {"budget": {"maxTurns": 3}},
    "agent/setPermissionPreset": {"preset": "plan"},
    "agent/getStats": {},
    "agent/listCommands": {},
    "agent/compact": {},
    "agent/bash": {"command": "echo hi"},
    "agent/abortBash": {},
    "agent/editQueueItem": {"itemId": "item-1", "text": "hi"},
    "agent/moveQueueItem": {"itemId": "item-1", "index": 0},
    "agent/fork": {"entryId": "entry-1"},
    "agent/getTree": {},
    "agent/rewind": {"entryId": None},
    "agent/switchBranch": {"entryId": "entry-1"},
    "agent/setLabel": {"entryId": "entry-1", "label": "a label"},
    "agent/getChanges": {},
    "agent/revertChanges": {"files": ["a.txt"]},
    "agent/listMcpServers": {},
    "agent/restartMcpServer": {"name": "a-server"},
    "agent/renameSession": {"name": "A name"},
    "agent/attach": {"since": 0},
    "agent/detach": {},
}


async def test_unknown_session(shared: Shared) -> None:
    client = shared.client
    # every request about a session is tried
    without_session = {
        "agent/newSession",
        "agent/listSessions",
        "agent/deleteSession",
        "agent/listPermissionRules",
        "agent/revokePermissionRule",
    }
    assert set(SESSION_REQUESTS) == set(REQUESTS) - without_session
    for method, extra in SESSION_REQUESTS.items():
        error = await agent_error(
            client.request(method, {"sessionId": "no-such-session", **extra}, ResultModel)
        )
        assert error.code == -32000 and error.kind == "unknownSession", method
        assert "no-such-session" in str(error), method
    # deleting one is not an error: there was nothing to delete
    assert await within(client.delete_session("no-such-session")) is False
    assert await within(client.delete_session("../../etc/passwd")) is False


# --- state -----------------------------------------------------------------------------------


async def test_state_messages_stats_models_and_settings(shared: Shared, workspace: Path) -> None:
    client, faux_script = shared.client, shared.faux_script
    faux_script([{"content": "Hello!"}])
    session = await within(
        client.new_session(
            cwd=str(workspace), model=("faux", "faux-1"), thinking_level="low", system_prompt="Be brief."
        )
    )
    state = await within(client.get_state(session))
    assert state.session_id == session
    assert state.cwd == str(workspace)
    assert (state.model.provider, state.model.id) == ("faux", "faux-1")
    assert state.thinking_level == "low" and state.system_prompt.startswith("Be brief.\n")
    assert state.system_prompt.endswith(f"\nCurrent working directory: {workspace}\n")
    assert not state.is_running and state.run_id is None and state.error_message is None
    assert (state.steering_mode, state.follow_up_mode) == ("one-at-a-time", "one-at-a-time")
    assert state.message_count == 0 and state.pending_tool_calls == []
    assert state.queue.steering == [] and state.queue.follow_up == []

    models = await within(client.list_models())
    assert [(m["provider"], m["id"]) for m in models] == [("faux", "faux-1")]
    assert {"name", "api", "reasoning", "input", "cost", "contextWindow", "maxTokens"} <= set(models[0])
    assert await within(client.list_models(session)) == models

    error = await agent_error(client.set_model(session, "faux", "faux-9"))
    assert error.kind == "unknownModel" and "faux/faux-9" in str(error) and "faux/faux-1" in str(error)
    error = await agent_error(client.set_model(session, "openai", "gpt"))
    assert error.kind == "unknownModel"
    state = await within(client.set_model(session, "faux", "faux-1"))
    assert (state.model.provider, state.model.id) == ("faux", "faux-1")

    state = await within(client.set_thinking_level(session, "high"))
    assert state.thinking_level == "high"
    state = await within(client.set_queue_modes(session, steering="all"))
    assert (state.steering_mode, state.follow_up_mode) == ("all", "one-at-a-time")
    state = await within(client.set_queue_modes(session, follow_up="all"))
    assert (state.steering_mode, state.follow_up_mode) == ("all", "all")

    stats = await within(client.get_stats(session))
    assert stats.tokens.total == 0 and stats.cost == 0 and stats.context.tokens == 0
    assert stats.context.context_window == 128000

    settled = await within(client.prompt(session, "Hi", wait=True))
    assert settled.stop_reason == "stop"
    assert (await within(client.get_state(session))).message_count == 2

    everything = await within(client.get_messages(session))
    assert everything.total == 2 and transcript(everything.messages) == [
        ("user", "Hi"),
        ("assistant", "Hello!"),
    ]
    assert everything.messages[1]["model"] == "faux-1" and everything.messages[1]["stopReason"] == "stop"
    tail = await within(client.get_messages(session, since=1))
    assert tail.total == 2 and tail.messages == everything.messages[1:]
    beyond = await within(client.get_messages(session, since=5))
    assert beyond.total == 2 and beyond.messages == []

    stats = await within(client.get_stats(session))
    usage = everything.messages[1]["usage"]
    assert stats.tokens.input == usage["input"] and stats.tokens.output == usage["output"]
    assert stats.tokens.total == usage["totalTokens"] > 0
    assert stats.context.tokens == usage["totalTokens"]
    assert stats.context.percent == round(100 * usage["totalTokens"] / 128000, 2)


async def test_new_session_errors(
    servers: Servers, data_dir: Path, faux_script: FauxScript, tmp_path: Path
) -> None:
    client = await servers.start(server_options(data_dir, faux_script))
    error = await agent_error(client.new_session(cwd=str(tmp_path / "not-there")))
    assert error.kind == "invalidParams" and "not-there" in str(error) and "not a folder" in str(error)
    error = await agent_error(client.new_session(model=("faux", "faux-2")))
    assert error.kind == "unknownModel"
    faux_script.path.write_text("{not json")
    error = await agent_error(client.new_session())
    assert error.kind == "noModel" and "not valid JSON" in str(error)


async def test_new_session_without_a_faux_script_names_the_setting(servers: Servers, data_dir: Path) -> None:
    client = await servers.start(server_options(data_dir, None))
    error = await agent_error(client.new_session())
    assert error.code == -32000 and error.kind == "noModel"
    assert "AGENTLS_FAUX_SCRIPT" in str(error) and "fauxScript" in str(error)
    assert await within(client.list_models()) == []
    assert await within(client.list_sessions()) == []


async def test_invalid_initialization_options_name_the_field(servers: Servers, data_dir: Path) -> None:
    for options, field in (
        ({"dataDir": 5}, "initializationOptions.dataDir"),
        ({"dataDir": str(data_dir), "thinkingLevel": "huge"}, "initializationOptions.thinkingLevel"),
    ):
        error = await agent_error(servers.start(options))
        assert error.code == -32602 and error.kind == "invalidParams"
        assert str(error).startswith(f"Invalid params for initialize: {field}: ")


async def test_the_faux_script_can_come_from_the_environment(
    servers: Servers, data_dir: Path, faux_script: FauxScript
) -> None:
    client = await servers.start(
        server_options(data_dir, None), env={"AGENTLS_FAUX_SCRIPT": str(faux_script.path)}
    )
    session = await within(client.new_session())
    assert (await within(client.prompt(session, "Hi", wait=True))).stop_reason == "stop"


# --- sessions and persistence ----------------------------------------------------------------


async def test_list_load_and_delete_sessions(
    servers: Servers,
    client: AgentClient,
    data_dir: Path,
    faux_script: FauxScript,
    workspace: Path,
    tmp_path: Path,
) -> None:
    faux_script([{"content": "Hello!"}])
    kept = await within(client.new_session(cwd=str(workspace)))
    await within(client.prompt(kept, "First question", wait=True))
    await within(client.set_thinking_level(kept, "medium"))
    dropped = await within(client.new_session(cwd=str(tmp_path)))

    sessions = {info.session_id: info for info in await within(client.list_sessions())}
    assert set(sessions) == {kept, dropped}
    info = sessions[kept]
    assert info.cwd == str(workspace) and info.title == "First question"
    assert info.message_count == 2 and info.loaded
    assert (info.model.provider, info.model.id) == ("faux", "faux-1")
    assert info.updated_at >= info.created_at
    assert sessions[dropped].message_count == 0 and sessions[dropped].title is None
    assert [i.session_id for i in await within(client.list_sessions(cwd=str(workspace)))] == [kept]

    loaded = await within(client.load_session(kept))  # already loaded: the same session
    assert loaded.session_id == kept and loaded.message_count == 2

    assert await within(client.delete_session(dropped)) is True
    assert await within(client.delete_session(dropped)) is False
    assert (await agent_error(client.get_state(dropped))).kind == "unknownSession"
    assert (await agent_error(client.load_session(dropped))).kind == "unknownSession"
    assert [i.session_id for i in await within(client.list_sessions())] == [kept]
    before = (await within(client.get_messages(kept))).messages

    # a fresh server on the same data dir
    other = await servers.start(server_options(data_dir, faux_script))
    [info] = await within(other.list_sessions())
    assert info.session_id == kept and not info.loaded and info.message_count == 2
    error = await agent_error(other.get_state(kept))
    assert error.kind == "unknownSession" and "load_session()" in str(error)
    loaded = await within(other.load_session(kept))
    assert loaded.session_id == kept and loaded.message_count == 2
    assert (await within(other.get_messages(kept))).messages == before
    state = await within(other.get_state(kept))
    assert state.thinking_level == "medium" and state.cwd == str(workspace)
    assert (await within(other.list_sessions()))[0].loaded
    # and it goes on from there
    settled = await within(other.prompt(kept, "Second question", wait=True))
    assert settled.stop_reason == "stop"
    assert (await within(other.get_messages(kept))).total == 4


async def test_a_session_is_named_and_its_name_is_listed_kept_and_cleared(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "Hello!"}])
    session = await within(client.new_session(cwd=str(workspace)))
    await within(client.prompt(session, "First question", wait=True))
    assert await within(client.rename_session(session, "  Refactor\nauth  ")) == "Refactor auth"
    [info] = await within(client.list_sessions(cwd=str(workspace)))
    assert info.title == "Refactor auth"

    other = await servers.start(server_options(data_dir, faux_script))  # stored, not loaded there
    [info] = await within(other.list_sessions(cwd=str(workspace)))
    assert info.title == "Refactor auth" and not info.loaded
    assert await within(other.rename_session(session, "")) is None  # loads it, then clears the name
    [info] = await within(other.list_sessions(cwd=str(workspace)))
    assert info.title == "First question" and info.loaded
    error = await agent_error(other.rename_session("nope", "x"))
    assert error.kind == "unknownSession"
    error = await agent_error(other.rename_session(session, "x" * 201))
    assert error.kind == "invalidParams"


def open_files(pid: int) -> list[str] | None:
    """The files a process has open (Linux only; ``None`` elsewhere)."""
    fds = Path(f"/proc/{pid}/fd")
    if not fds.is_dir():
        return None
    return [os.readlink(fd) for fd in fds.iterdir()]


async def test_concurrent_loads_make_one_session(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript
) -> None:
    session = await within(client.new_session())
    await within(client.prompt(session, "x" * 200_000, wait=True))  # a file that takes a while to read
    other = await servers.start(server_options(data_dir, faux_script))
    results = await within(asyncio.gather(*(other.load_session(session) for _ in range(6))))
    assert {(r.session_id, r.message_count) for r in results} == {(session, 2)}
    files = open_files(other._rpc._server.pid)
    if files is not None:  # one session, so one writer (which holds its file open only while writing)
        assert sum(1 for f in files if f.endswith(f"{session}.jsonl")) <= 1
    assert (await within(other.prompt(session, "Again", wait=True))).stop_reason == "stop"
    assert (await within(other.get_messages(session))).total == 4


async def test_deleting_a_running_session_aborts_it(shared: Shared) -> None:
    client, recorder, faux_script = shared.client, shared.recorder, shared.faux_script
    faux_script([{"content": LONG_TEXT}], slow=True)
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Write a lot"))).run_id
    await recorder.wait_delta(session)
    assert await within(client.delete_session(session)) is True
    assert (await recorder.settled(run_id))["stopReason"] == "aborted"
    assert session not in [info.session_id for info in await within(client.list_sessions())]


async def test_a_server_killed_mid_run_leaves_every_ended_message(
    servers: Servers, client: AgentClient, recorder: Recorder, data_dir: Path, faux_script: FauxScript
) -> None:
    faux_script(
        [
            {
                "content": [tool_call("c1", "missing_one", {"n": 1}), tool_call("c2", "missing_two", {})],
                "stopReason": "toolUse",
            },
            {"content": LONG_TEXT},
        ],
        slow=True,
    )
    session = await within(client.new_session(thinking_level="high"))
    await within(client.set_thinking_level(session, "minimal"))
    await within(client.prompt(session, "Remember this"))
    await recorder.wait_delta(session, count=2)  # the second response is streaming

    process = client._rpc._server
    process.kill()
    assert await within(process.wait()) == -9
    ended = [p["event"]["message"] for p in recorder.events(session) if p["event"]["type"] == "message_end"]
    assert [m["role"] for m in ended] == ["user", "assistant", "toolResult", "toolResult"]

    faux_script([{"content": "Answered after the restart."}])
    other = await servers.start(server_options(data_dir, faux_script))
    [info] = await within(other.list_sessions())
    assert info.session_id == session and info.message_count == 4 and info.title == "Remember this"
    loaded = await within(other.load_session(session))
    assert loaded.message_count == 4
    assert (await within(other.get_messages(session))).messages == ended
    state = await within(other.get_state(session))
    assert state.thinking_level == "minimal" and not state.is_running

    # the transcript ends with tool results: continue answers them
    run = await within(other.continue_(session))
    settled = await within(other.wait_settled(run.run_id))
    assert settled.stop_reason == "stop"
    messages = (await within(other.get_messages(session))).messages
    assert transcript(messages[4:]) == [("assistant", "Answered after the restart.")]


# --- the end of the connection ---------------------------------------------------------------


async def test_end_of_input_ends_the_server_while_it_runs(
    servers: Servers, client: AgentClient, recorder: Recorder, data_dir: Path, faux_script: FauxScript
) -> None:
    faux_script([{"content": LONG_TEXT}], slow=True)
    session = await within(client.new_session())
    await within(client.prompt(session, "Write a lot"))
    await recorder.wait_delta(session)
    process = client._rpc._server
    process.stdin.close()
    assert await within(process.wait()) == 0
    # the client notices: no hanging on a server that is gone
    error = await agent_error(client.get_state(session))
    assert error.kind == "connection"

    # the message being streamed was saved as aborted, with the text so far
    other = await servers.start(server_options(data_dir, faux_script))
    await within(other.load_session(session))
    messages = (await within(other.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted" and LONG_TEXT.startswith(messages[1]["content"][0]["text"])


async def test_shutdown_aborts_running_work_and_exits(
    client: AgentClient, recorder: Recorder, faux_script: FauxScript
) -> None:
    faux_script([{"content": LONG_TEXT}], slow=True)
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Write a lot"))).run_id
    await recorder.wait_delta(session)
    await within(client.close())
    assert client._rpc._server.returncode == 0  # exited on `exit`, not killed
    await recorder.settled(run_id)
    assert recorder.of(session, "agent/settled") == [
        {
            "sessionId": session,
            "seq": recorder.of(session)[-1]["seq"],
            "runId": run_id,
            "stopReason": "aborted",
            "errorMessage": "Request was aborted",
        }
    ]


# --- raw JSON-RPC ----------------------------------------------------------------------------


class RawConnection:
    """``agentls serve`` spoken to byte by byte."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    def send(self, message: dict[str, Any] | bytes) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def receive(self) -> dict[str, Any]:
        """The next message; every byte on stdout must be part of a framed message."""
        assert self.process.stdout is not None
        length = None
        while True:
            header = await within(self.process.stdout.readline())
            assert header.endswith(b"\r\n"), f"not a header line: {header!r}"
            if header == b"\r\n":
                break
            name, _, value = header.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        return json.loads(await within(self.process.stdout.readexactly(length)))

    async def response(self, msg_id: Any) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if message.get("id") == msg_id and "method" not in message:
                return message


@contextlib.asynccontextmanager
async def raw_server(env: dict[str, str]) -> Any:
    process = await server_process(stderr=asyncio.subprocess.DEVNULL, env={**os.environ, **env})
    try:
        yield RawConnection(process)
    finally:
        if process.returncode is None:
            process.kill()
            await within(process.wait())


async def test_raw_requests_may_leave_out_params_and_garbage_is_survived(data_dir: Path) -> None:
    async with raw_server({"AGENTLS_DATA_DIR": str(data_dir)}) as server:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        initialized = await server.response(1)
        assert initialized["result"]["capabilities"]["experimental"]["agent"]["version"] == PROTOCOL_VERSION
        server.send({"jsonrpc": "2.0", "method": "initialized"})  # no params: allowed
        server.send({"jsonrpc": "2.0", "id": 2, "method": "agent/listModels"})
        assert (await server.response(2))["result"] == {"models": []}
        server.send({"jsonrpc": "2.0", "id": 3, "method": "agent/getState"})
        error = (await server.response(3))["error"]
        assert error["code"] == -32602 and "sessionId: Field required" in error["message"]
        server.send({"jsonrpc": "2.0", "id": 4, "method": "agent/whatever"})
        assert (await server.response(4))["error"]["code"] == -32601
        server.send(b"{this is not json")
        server.send({"jsonrpc": "2.0", "id": 5, "method": "agent/listSessions", "params": {}})
        assert (await server.response(5))["result"] == {"sessions": []}
        server.send({"jsonrpc": "2.0", "id": 6, "method": "shutdown"})
        assert (await server.response(6))["result"] is None
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await within(server.process.wait(), WAIT) == 0


async def test_queued_items_are_edited_in_place_and_moved(
    client: AgentClient, recorder: Recorder, faux_script: FauxScript
) -> None:
    faux_script([{"content": LONG_TEXT}, {"content": "a"}, {"content": "b"}, {"content": "c"}], slow=True)
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Write a lot"))).run_id
    await recorder.wait_delta(session, run_id=run_id)
    first = await within(client.follow_up(session, "first"))
    second = await within(client.follow_up(session, "second"))
    third = await within(client.follow_up(session, "third"))

    queue = await within(client.edit_queue_item(session, second, "second, reworded"))
    assert [(i.id, i.text) for i in queue.follow_up] == [
        (first, "first"),
        (second, "second, reworded"),
        (third, "third"),
    ]
    queue = await within(client.move_queue_item(session, third, 0))
    assert [i.id for i in queue.follow_up] == [third, first, second]
    queue = await within(client.move_queue_item(session, third, 99))
    assert [i.id for i in queue.follow_up] == [first, second, third]
    assert [i.id for i in (await within(client.get_queue(session))).follow_up] == [first, second, third]
    error = await agent_error(client.move_queue_item(session, "item-nope", 0))
    assert error.kind == "unknownQueueItem"
    error = await agent_error(client.move_queue_item(session, first, -1))
    assert error.kind == "invalidParams"

    await within(client.abort(session))
    await within(client.wait_settled(run_id))
    run = await within(client.continue_(session))  # the follow-ups, in their new order
    await within(client.wait_settled(run.run_id))
    result = await within(client.get_messages(session))
    users = [m["content"][0]["text"] for m in result.messages if m["role"] == "user"]
    assert users[1:] == ["first", "second, reworded", "third"]
    assert len(result.entry_ids) == len(result.messages) == result.total
    assert len(set(result.entry_ids)) == len(result.entry_ids)


async def test_a_fork_continues_from_an_entry_and_leaves_the_original_as_it_was(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "One."}, {"content": "Two."}])  # every session replays it from the start
    session = await within(client.new_session(cwd=str(workspace)))
    await within(client.prompt(session, "First", wait=True))
    await within(client.prompt(session, "Second", wait=True))
    original = await within(client.get_messages(session))
    assert [m["role"] for m in original.messages] == ["user", "assistant", "user", "assistant"]

    fork = await within(client.fork(session, original.entry_ids[1]))  # after the first answer
    assert fork != session
    forked = await within(client.get_messages(fork))
    assert forked.messages == original.messages[:2] and forked.entry_ids == original.entry_ids[:2]
    settled = await within(client.prompt(fork, "Instead", wait=True))
    assert settled.stop_reason == "stop"
    texts = [m["content"][0]["text"] for m in (await within(client.get_messages(fork))).messages]
    assert texts == ["First", "One.", "Instead", "One."]
    assert (await within(client.get_messages(session))).messages == original.messages

    state = await within(client.get_state(fork))
    assert state.cwd == str(workspace)
    stored = json.loads((data_dir / "sessions" / f"{fork}.jsonl").read_text().splitlines()[0])
    assert stored["forkedFrom"] == {"sessionId": session, "entryId": original.entry_ids[1]}

    other = await servers.start(server_options(data_dir, faux_script))  # and it loads like any other
    loaded = await within(other.load_session(fork))
    assert loaded.message_count == 4
    error = await agent_error(client.fork(session, "no-such-entry"))
    assert error.kind == "invalidParams" and "no entry 'no-such-entry'" in str(error)
    error = await agent_error(client.fork("no-such-session", "x"))
    assert error.kind == "unknownSession"
