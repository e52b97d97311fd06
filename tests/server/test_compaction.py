"""Compaction end to end on the faux model: the real ``agentls serve``, its session files, its notifications.

The faux model's window is its default (128 000 tokens); each session sets ``reserveTokens``
so that the threshold (window minus reserve) is 9 000 tokens: a short prompt stays under
it, a 40 000-character one (10 000 tokens) crosses it. With ``keepRecentTokens`` 1 000
the cut falls before the long prompt, so the first prompt and its answer are summarised.
The summary is the next scripted response; what the model is sent is checked in
``test_compaction_requests.py``, on a mock Anthropic server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient, AgentClientError
from agentls.protocol import CompactionSettings

from tests.server.conftest import LONG_TEXT, FauxScript, Recorder, Servers, Shared, server_options, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

SETTINGS = CompactionSettings(reserve_tokens=128_000 - 9_000, keep_recent_tokens=1_000)
LONG_PROMPT = "Please read this: " + "x" * 40_000
SUMMARY = "## Goal\nAnswer the user's two questions."
ANSWERS = [{"content": "First answer."}, {"content": "Second answer."}]


def compactions(recorder: Recorder, session: str) -> list[dict[str, Any]]:
    return recorder.of(session, "agent/compaction")


async def error_of(awaitable: Any) -> AgentClientError:
    with pytest.raises(AgentClientError) as caught:
        await within(awaitable)
    return caught.value


async def two_prompts(client: AgentClient, session: str) -> str:
    """A short prompt, then a long one whose answer crosses the threshold; the second run's id."""
    assert (await within(client.prompt(session, "Hi", wait=True))).stop_reason == "stop"
    accepted = await within(client.prompt(session, LONG_PROMPT))
    assert accepted.run_id is not None
    return accepted.run_id


def compaction_lines(data_dir: Path, session: str) -> list[dict[str, Any]]:
    lines = (data_dir / "sessions" / f"{session}.jsonl").read_text().splitlines()
    return [entry for entry in map(json.loads, lines) if entry["type"] == "compaction"]


async def test_a_run_that_crosses_the_threshold_is_compacted_before_it_settles(shared: Shared) -> None:
    client, recorder = shared.client, shared.recorder
    shared.faux_script([*ANSWERS, {"content": SUMMARY}, {"content": "Third answer."}])
    session = await within(client.new_session(compaction=SETTINGS))
    run_id = await two_prompts(client, session)
    settled = await recorder.settled(run_id)
    assert settled["stopReason"] == "stop"

    start, end = compactions(recorder, session)
    assert start == {
        "sessionId": session,
        "seq": start["seq"],
        "runId": run_id,
        "phase": "start",
        "reason": "threshold",
        "tokensBefore": start["tokensBefore"],
    }
    assert start["tokensBefore"] > 9_000
    messages = (await within(client.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "compactionSummary"]
    summary = messages[4]
    assert summary["summary"] == SUMMARY and summary["tokensBefore"] == start["tokensBefore"]
    assert end["phase"] == "end" and end["runId"] == run_id and end["summary"] == SUMMARY
    assert 10_000 <= end["tokensAfter"] < start["tokensBefore"]  # the long prompt is kept
    assert "errorMessage" not in end and "aborted" not in end
    # the summary is streamed as a message of the run, between the compaction's start and end; then it settles
    of_run = [n for n in recorder.notes if n.session_id == session and n.params.get("runId") == run_id]
    labels = [n.params["event"]["type"] if n.method == "agent/event" else n.method for n in of_run]
    assert labels[-5:] == [
        "agent/compaction",
        "message_start",
        "message_end",
        "agent/compaction",
        "agent/settled",
    ]
    assert of_run[-3].params["event"]["message"] == summary

    state = await within(client.get_state(session))
    assert state.message_count == 5 and not state.is_compacting
    stats = await within(client.get_stats(session))
    assert stats.context.tokens == end["tokensAfter"]  # no response since: estimated

    # the transcript only grows: a client's cursor stays valid
    assert (await within(client.prompt(session, "And?", wait=True))).stop_reason == "stop"
    tail = await within(client.get_messages(session, since=4))
    assert tail.total == 7 and [m["role"] for m in tail.messages] == [
        "compactionSummary",
        "user",
        "assistant",
    ]


async def test_kill_9_during_a_compaction_loses_nothing(
    servers: Servers, client: AgentClient, recorder: Recorder, data_dir: Path, faux_script: FauxScript
) -> None:
    faux_script([*ANSWERS, {"content": LONG_TEXT}], slow=True)  # the summary takes half a minute
    session = await within(client.new_session(compaction=SETTINGS))
    await two_prompts(client, session)
    await recorder.wait_for(lambda n: n.method == "agent/compaction" and n.params["phase"] == "start")
    before = (await within(client.get_messages(session))).messages

    process = client._rpc._server
    assert process is not None
    process.kill()
    assert await within(process.wait()) == -9
    assert compaction_lines(data_dir, session) == []

    faux_script([{"content": SUMMARY}])
    other = await servers.start(server_options(data_dir, faux_script))
    [info] = await within(other.list_sessions())
    assert info.message_count == 4
    assert (await within(other.load_session(session))).message_count == 4
    assert (await within(other.get_messages(session))).messages == before
    # the settings were stored with the session: it compacts as before
    result = await within(other.compact(session))
    assert result.summary == SUMMARY and result.tokens_before > 9_000
    [entry] = compaction_lines(data_dir, session)
    assert entry["firstKeptEntryId"] == result.first_kept_entry_id and entry["summary"] == SUMMARY


async def test_an_abort_stops_a_compaction_and_loses_nothing(shared: Shared) -> None:
    client, recorder = shared.client, shared.recorder
    shared.faux_script([*ANSWERS, {"content": LONG_TEXT}], slow=True)
    session = await within(client.new_session(compaction=SETTINGS))
    run_id = await two_prompts(client, session)
    await recorder.wait_for(
        lambda n: n.method == "agent/compaction" and n.session_id == session and n.params["phase"] == "start"
    )
    assert (await within(client.get_state(session))).is_compacting
    before = (await within(client.get_messages(session))).messages

    aborted = await within(client.abort(session))
    assert aborted.aborted and aborted.run_id == run_id
    settled = await recorder.settled(run_id)
    assert settled["stopReason"] == "stop"  # the last response ended well; only the compaction was cut
    [_, end] = compactions(recorder, session)
    assert end["phase"] == "end" and end["aborted"] is True and "summary" not in end
    assert (await within(client.get_messages(session))).messages == before
    state = await within(client.get_state(session))
    assert not state.is_compacting and not state.is_running


async def test_a_failed_summary_leaves_the_session_as_it_was(shared: Shared) -> None:
    client, recorder = shared.client, shared.recorder
    failure = {"content": "", "stopReason": "error", "errorMessage": "overloaded"}
    shared.faux_script([*ANSWERS, failure, {"content": SUMMARY}, {"content": "Third answer."}])
    session = await within(client.new_session(compaction=SETTINGS))
    run_id = await two_prompts(client, session)
    assert (await recorder.settled(run_id))["stopReason"] == "stop"
    [_, end] = compactions(recorder, session)
    assert end["errorMessage"] == "Auto-compaction failed: Summarization failed: overloaded"
    messages = (await within(client.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]

    # the context is still over the threshold: the next prompt compacts before it is sent
    run = await within(client.prompt(session, "And?"))
    assert (await recorder.settled(run.run_id))["stopReason"] == "stop"
    [*_, start, end] = compactions(recorder, session)
    assert (start["runId"], start["reason"], end["summary"]) == (run.run_id, "threshold", SUMMARY)
    messages = (await within(client.get_messages(session))).messages
    roles = ["user", "assistant", "user", "assistant", "compactionSummary", "user", "assistant"]
    assert [m["role"] for m in messages] == roles
    # the compaction came first, then the prompt's run
    of_run = [n for n in recorder.notes if n.session_id == session and n.params.get("runId") == run.run_id]
    labels = [n.params["event"]["type"] if n.method == "agent/event" else n.method for n in of_run]
    assert labels[:5] == [
        "agent/compaction",
        "message_start",
        "message_end",
        "agent/compaction",
        "agent_start",
    ]


async def test_compact_on_request(shared: Shared) -> None:
    client, recorder = shared.client, shared.recorder
    shared.faux_script(
        [{"content": "First answer."}, {"content": LONG_TEXT}, {"content": SUMMARY}], slow=True
    )
    session = await within(client.new_session(compaction=CompactionSettings(keep_recent_tokens=100)))
    error = await error_of(client.compact(session))
    assert error.kind == "compactionFailed" and str(error) == "Nothing to compact (session too small)"
    [start, end] = compactions(recorder, session)
    assert start["reason"] == "manual" and "runId" not in start
    assert end["errorMessage"] == "Compaction failed: Nothing to compact (session too small)"

    assert (await within(client.prompt(session, "Hi", wait=True))).stop_reason == "stop"
    running = await within(client.prompt(session, "Say a lot " + "y" * 1_000))
    await recorder.wait_delta(session, count=2)
    error = await error_of(client.compact(session))
    assert error.kind == "busy"
    await within(client.abort(session))
    assert (await recorder.settled(running.run_id))["stopReason"] == "aborted"

    result = await within(client.compact(session, "the greeting"))
    assert result.summary == SUMMARY and result.tokens_after is not None
    assert result.tokens_after < result.tokens_before
    error = await error_of(client.compact(session))
    assert error.kind == "compactionFailed" and str(error) == "Already compacted"
    roles = [m["role"] for m in (await within(client.get_messages(session))).messages]
    assert roles == ["user", "assistant", "user", "assistant", "compactionSummary"]


async def test_prompts_wait_for_a_compaction_on_request(shared: Shared) -> None:
    client, recorder = shared.client, shared.recorder
    shared.faux_script(
        [{"content": "First."}, {"content": "Second."}, {"content": SUMMARY}, {"content": "After."}],
        slow=True,
    )
    session = await within(client.new_session(compaction=CompactionSettings(keep_recent_tokens=100)))
    assert (await within(client.prompt(session, "Hi", wait=True))).stop_reason == "stop"
    assert (await within(client.prompt(session, "z" * 1_000, wait=True))).stop_reason == "stop"

    compacting = asyncio.ensure_future(client.compact(session))
    await recorder.wait_for(
        lambda n: n.method == "agent/compaction" and n.session_id == session and n.params["phase"] == "start"
    )
    error = await error_of(client.prompt(session, "Now?"))
    assert error.kind == "busy" and "compacting" in str(error)
    queued = await within(client.prompt(session, "Then this.", when_busy="followUp"))
    assert queued.queued is not None
    assert (await within(compacting)).summary == SUMMARY
    # the queued prompt runs once the compaction is in
    note = await recorder.wait_for(lambda n: n.method == "agent/settled" and n.session_id == session, count=3)
    assert note.params["stopReason"] == "stop"
    messages = (await within(client.get_messages(session))).messages
    assert [m["role"] for m in messages][-3:] == ["compactionSummary", "user", "assistant"]
    assert messages[-2]["content"][0]["text"] == "Then this."
