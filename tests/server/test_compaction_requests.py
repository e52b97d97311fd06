"""What the model is sent around a compaction: ``agentls serve`` on the Anthropic provider, a mock API.

The session's model is an Anthropic model of ``models.json`` with a 20 000-token window
and ``reserveTokens`` 18 000, so compaction starts above 2 000 tokens (a window of 2 000
would leave no room to answer after the provider's safety margin), and the mock reports
the usage each test needs. Every request body is kept, so the tests check the summary
request (Pi's summariser prompt, the conversation as text) and that, after it, the model
gets the system prompt, the summary and the kept messages, and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient
from agentls.protocol import CompactionSettings
from agentls.session.compaction.summary import SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT
from agentls.session.messages import COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text, a_tool
from tests.ai.providers.mock_http import MockServer, Reply, json_reply
from tests.server.conftest import Recorder, Servers, within
from tests.server.test_providers_e2e import NO_KEYS

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODEL = "claude-small"
SETTINGS = CompactionSettings(reserve_tokens=18_000, keep_recent_tokens=300)
SECOND = "Now the second question, with its long details: " + "y" * 1_200  # about 310 tokens
SUMMARY = "## Goal\nAnswer two questions."
OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


def point_at(data_dir: Path, url: str) -> None:
    model = {"id": MODEL, "contextWindow": 20_000, "maxTokens": 16_000}
    config = {"providers": {"anthropic": {"baseUrl": url, "apiKey": "test-key", "models": [model]}}}
    (data_dir / "models.json").write_text(json.dumps(config), encoding="utf-8")


def says(text: str, input_tokens: int = 100) -> Reply:
    return a_reply(a_start(input_tokens=input_tokens, model=MODEL), a_text(0, text), a_end())


def overflow() -> Reply:
    return json_reply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": OVERFLOW}})


def flat(message: dict[str, Any]) -> list[Any]:
    """An Anthropic message's content as a list of (type, text-or-id) pairs."""
    content = message["content"]
    if isinstance(content, str):
        return [("text", content)]
    out = []
    for block in content:
        if block["type"] == "text":
            out.append(("text", block["text"]))
        elif block["type"] == "tool_use":
            out.append(("tool_use", block["id"]))
        elif block["type"] == "tool_result":
            out.append(("tool_result", block["tool_use_id"]))
    return out


def conversation(body: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    return [(m["role"], flat(m)) for m in body["messages"]]


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


SUMMARY_MESSAGE = ("text", COMPACTION_SUMMARY_PREFIX + SUMMARY + COMPACTION_SUMMARY_SUFFIX)


async def start(servers: Servers, data_dir: Path, workspace: Path) -> tuple[AgentClient, Recorder, str]:
    client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
    recorder = await Recorder(client).start()
    session = await within(
        client.new_session(cwd=str(workspace), model=("anthropic", MODEL), compaction=SETTINGS)
    )
    return client, recorder, session


async def test_a_tool_loop_compacts_between_turns_and_goes_on_with_the_summary(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("n" * 400 + "\n")
    replies = [
        says("First answer."),
        # the tool call's usage puts the context at 1 950 tokens; the file's 100 more cross 2 000
        a_reply(
            a_start(input_tokens=1_900, model=MODEL),
            a_tool(0, "toolu_1", "read", '{"path": "notes.txt"}'),
            a_end("tool_use", output_tokens=50),
        ),
        says(SUMMARY),
        says("The notes are all n."),
    ]
    async with MockServer(replies) as mock:
        point_at(data_dir, mock.url)
        client, recorder, session = await start(servers, data_dir, workspace)
        assert (await within(client.prompt(session, "First question?", wait=True))).stop_reason == "stop"
        run = await within(client.prompt(session, SECOND))
        assert (await recorder.settled(run.run_id))["stopReason"] == "stop"
        messages = (await within(client.get_messages(session))).messages
        notes = recorder.of(session, "agent/compaction")
        events = [p["event"] for p in recorder.events(session, run.run_id)]
    first, tool_turn, summary_request, after = (request.json() for request in mock.requests)
    # between the tool batch's turn and the next one, the summary joins the transcript
    kinds = ("turn_end", "turn_start", "message_end")
    ended = [(e["type"], e.get("message", {}).get("role")) for e in events if e["type"] in kinds]
    assert ended[-6:] == [
        ("message_end", "toolResult"),
        ("turn_end", "assistant"),
        ("message_end", "compactionSummary"),
        ("turn_start", None),
        ("message_end", "assistant"),
        ("turn_end", "assistant"),
    ]

    # the summary request: Pi's summariser, the summarised part as text, no tools
    assert system_text(summary_request) == SUMMARIZATION_SYSTEM_PROMPT and "tools" not in summary_request
    assert conversation(summary_request) == [
        (
            "user",
            [
                (
                    "text",
                    "<conversation>\n[User]: First question?\n\n[Assistant]: First answer.\n"
                    "</conversation>\n\n" + SUMMARIZATION_PROMPT,
                )
            ],
        )
    ]
    assert summary_request["max_tokens"] == 14_400  # 80% of reserveTokens

    # the next turn: the system prompt, the summary, the kept messages, nothing else
    assert system_text(after) == system_text(tool_turn) and after["tools"] == tool_turn["tools"]
    assert conversation(after) == [
        ("user", [SUMMARY_MESSAGE]),
        ("user", [("text", SECOND)]),
        ("assistant", [("tool_use", "toolu_1")]),
        ("user", [("tool_result", "toolu_1")]),
    ]
    assert conversation(first) == [("user", [("text", "First question?")])]

    start_note, end_note = notes
    assert (start_note["runId"], start_note["reason"]) == (run.run_id, "threshold")
    assert start_note["tokensBefore"] > 2_000 and end_note["summary"] == SUMMARY
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant", "toolResult", "compactionSummary", "assistant"]
    assert messages[5]["summary"] == SUMMARY
    entries = [
        json.loads(line) for line in (data_dir / "sessions" / f"{session}.jsonl").read_text().splitlines()
    ]
    [compaction] = [e for e in entries if e["type"] == "compaction"]
    kept = next(e for e in entries if e["id"] == compaction["firstKeptEntryId"])
    assert kept["message"]["content"][0]["text"] == SECOND
    assert compaction["details"] == {"readFiles": [], "modifiedFiles": []}  # the read came after the cut


async def test_compact_with_instructions_then_load_the_compacted_session(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    replies = [says("First answer."), says("Second answer.", 600), says(SUMMARY), says("Third answer.")]
    async with MockServer(replies) as mock:
        point_at(data_dir, mock.url)
        client, recorder, session = await start(servers, data_dir, workspace)
        assert (await within(client.prompt(session, "First question?", wait=True))).stop_reason == "stop"
        assert (await within(client.prompt(session, SECOND, wait=True))).stop_reason == "stop"
        result = await within(client.compact(session, "the second question"))
        assert result.summary == SUMMARY and result.tokens_before == 600 + 20
        await recorder.stop()
        await within(client.close(), 15)

        other = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
        assert (await within(other.load_session(session))).message_count == 5
        messages = (await within(other.get_messages(session))).messages
        assert [m["role"] for m in messages][-1] == "compactionSummary"
        assert (await within(other.prompt(session, "Third question?", wait=True))).stop_reason == "stop"
    summary_request, after_load = mock.requests[2].json(), mock.requests[3].json()
    text = summary_request["messages"][0]["content"][0]["text"]
    assert text.endswith(SUMMARIZATION_PROMPT + "\n\nAdditional focus: the second question")
    assert conversation(after_load) == [
        ("user", [SUMMARY_MESSAGE]),
        ("user", [("text", SECOND)]),
        ("assistant", [("text", "Second answer.")]),
        ("user", [("text", "Third question?")]),
    ]


async def test_a_context_overflow_is_compacted_and_asked_again_once(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    replies = [says("First answer."), overflow(), says(SUMMARY), says("Second answer.")]
    async with MockServer(replies) as mock:
        point_at(data_dir, mock.url)
        client, recorder, session = await start(servers, data_dir, workspace)
        assert (await within(client.prompt(session, "First question?", wait=True))).stop_reason == "stop"
        run = await within(client.prompt(session, SECOND))
        settled = await recorder.settled(run.run_id)
        messages = (await within(client.get_messages(session))).messages
        start_note, end_note = recorder.of(session, "agent/compaction")
    assert settled["stopReason"] == "stop"
    assert (start_note["reason"], start_note["runId"]) == ("overflow", run.run_id)
    assert end_note["willRetry"] is True and end_note["summary"] == SUMMARY
    retry = mock.requests[3].json()
    assert conversation(retry) == [("user", [SUMMARY_MESSAGE]), ("user", [("text", SECOND)])]  # no failure
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant", "compactionSummary", "assistant"]
    assert messages[3]["stopReason"] == "error" and OVERFLOW in messages[3]["errorMessage"]
    assert messages[5]["content"] == [{"type": "text", "text": "Second answer."}]


async def test_a_second_overflow_is_not_retried(servers: Servers, data_dir: Path, workspace: Path) -> None:
    replies = [says("First answer."), overflow(), says(SUMMARY), overflow()]
    async with MockServer(replies) as mock:
        point_at(data_dir, mock.url)
        client, recorder, session = await start(servers, data_dir, workspace)
        assert (await within(client.prompt(session, "First question?", wait=True))).stop_reason == "stop"
        run = await within(client.prompt(session, SECOND))
        settled = await recorder.settled(run.run_id)
        notes = recorder.of(session, "agent/compaction")
    assert len(mock.requests) == 4
    assert settled["stopReason"] == "error" and OVERFLOW in settled["errorMessage"]
    # the compaction and its retry, then the retry's failure: no second compaction
    assert [n["phase"] for n in notes] == ["start", "end", "end"] and {n["reason"] for n in notes} == {
        "overflow"
    }
    assert notes[-1]["errorMessage"].startswith(
        "Context overflow recovery failed after one compact-and-retry"
    )
