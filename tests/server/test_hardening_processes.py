"""End to end: what ``bash`` leaves running lives until its run ends, and no longer.

A faux-scripted ``bash`` call starts ``sleep 1000 &`` (in the call's process group)
and ``setsid sleep 1000 &`` (out of it, in a session of its own) and prints their
pids; the tests look them up in ``/proc`` once the run has settled, been aborted, its
session deleted, or the server has exited.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient, Notification

from tests.server.conftest import FauxScript, Recorder, Shared, tool_call, within
from tests.tools.test_bash import gone

pytestmark = pytest.mark.asyncio(loop_scope="module")

BACKGROUND = "sleep 1000 & echo $!; setsid sleep 1000 & echo $!"
"""Two background processes holding the output pipe, one of them out of the call's group and session."""


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"content": [tool_call(call_id, "bash", {"command": command})], "stopReason": "toolUse"}


def output(event: dict[str, Any]) -> list[str]:
    result = event.get("partialResult") or event.get("result") or {}
    return "".join(block.get("text", "") for block in result.get("content", [])).split("\n")


async def pids_shown(recorder: Recorder, session: str, call_id: str, count: int) -> list[int]:
    """The first ``count`` pids a bash call printed, as soon as its (streamed) output shows them."""

    def match(note: Notification) -> bool:
        if note.method != "agent/event" or note.session_id != session:
            return False
        event = note.params["event"]
        return (
            event["type"] in ("tool_execution_update", "tool_execution_end")
            and event["toolCallId"] == call_id
            and len([line for line in output(event) if line.isdigit()]) >= count
        )

    event = (await recorder.wait_for(match)).params["event"]
    return [int(line) for line in output(event) if line.isdigit()][:count]


async def bash_session(client: AgentClient, workspace: Path) -> str:
    return await within(client.new_session(cwd=str(workspace), permissions={"bash": "allow"}))


async def test_background_processes_live_until_the_run_settles(shared: Shared, workspace: Path) -> None:
    shared.faux_script(
        [
            bash("b1", "sleep 1000 & echo $! >> pids; setsid sleep 1000 & echo $! >> pids; cat pids"),
            bash("b2", "for pid in $(cat pids); do kill -0 $pid && echo alive; done"),
            {"content": "Both are running."},
        ]
    )
    session = await bash_session(shared.client, workspace)
    run_id = (await within(shared.client.prompt(session, "start two servers"))).run_id
    pids = await pids_shown(shared.recorder, session, "b1", 2)
    settled = await shared.recorder.settled(run_id)
    assert settled["stopReason"] == "stop"
    # the second call of the run still saw both; once the run has settled, neither runs
    checked = await shared.recorder.wait_event(session, "tool_execution_end", toolCallId="b2")
    assert output(checked["event"]) == ["alive", "alive"]
    assert [pid for pid in pids if not gone(pid)] == []


async def test_abort_ends_the_running_call_and_what_it_started(shared: Shared, workspace: Path) -> None:
    shared.faux_script([bash("b1", f"{BACKGROUND}; sleep 1000"), {"content": "unreached"}])
    session = await bash_session(shared.client, workspace)
    run_id = (await within(shared.client.prompt(session, "start and wait"))).run_id
    pids = await pids_shown(shared.recorder, session, "b1", 2)
    aborted = await within(shared.client.abort(session))  # answers once the run has settled
    assert aborted.aborted and aborted.run_id == run_id
    assert (await shared.recorder.settled(run_id))["stopReason"] == "aborted"
    assert [pid for pid in pids if not gone(pid)] == []


async def test_deleting_a_session_ends_its_processes(shared: Shared, workspace: Path) -> None:
    shared.faux_script([bash("b1", f"{BACKGROUND}; sleep 1000"), {"content": "unreached"}])
    session = await bash_session(shared.client, workspace)
    await within(shared.client.prompt(session, "start and wait"))
    pids = await pids_shown(shared.recorder, session, "b1", 2)
    assert await within(shared.client.delete_session(session))
    assert [pid for pid in pids if not gone(pid)] == []


async def test_end_of_input_ends_every_process_of_the_runs(
    client: AgentClient, recorder: Recorder, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        [
            bash("b1", "setsid sleep 1000 & echo $!"),  # a finished call, its run goes on
            bash("b2", "sleep 1000 & echo $!; sleep 1000"),  # a running call
            {"content": "unreached"},
        ]
    )
    session = await bash_session(client, workspace)
    await within(client.prompt(session, "start and wait"))
    pids = [*await pids_shown(recorder, session, "b1", 1), *await pids_shown(recorder, session, "b2", 1)]
    process = client._rpc._server
    assert process is not None and process.stdin is not None
    process.stdin.close()
    assert await within(process.wait()) == 0
    assert [pid for pid in pids if not gone(pid)] == []


async def test_a_message_queued_while_the_run_ends_its_processes_is_delivered_by_that_run(
    shared: Shared, workspace: Path
) -> None:
    # a process that ignores SIGTERM holds the run's end for the kill grace: the client still
    # sees the session busy, and its steering message must not be left in an idle queue
    stubborn = "sh -c \"trap '' TERM; exec sleep 1000\" >/dev/null 2>&1 & echo $!"
    shared.faux_script([bash("b1", stubborn), {"content": "Left it running."}, {"content": "Linted."}])
    session = await bash_session(shared.client, workspace)
    run_id = (await within(shared.client.prompt(session, "start a server"))).run_id
    pids = await pids_shown(shared.recorder, session, "b1", 1)
    await shared.recorder.wait_event(session, "agent_end")
    item = await within(shared.client.steer(session, "then lint"))
    settled = await shared.recorder.settled(run_id)
    assert settled["stopReason"] == "stop"
    texts = [
        (m["role"], m["content"] if isinstance(m["content"], str) else m["content"][0].get("text"))
        for m in (await within(shared.client.get_messages(session))).messages
    ]
    assert texts[-3:] == [("assistant", "Left it running."), ("user", "then lint"), ("assistant", "Linted.")]
    queue = await within(shared.client.get_queue(session))
    assert item and queue.steering == [] and queue.follow_up == []
    assert [pid for pid in pids if not gone(pid)] == []
