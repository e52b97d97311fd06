"""The LSP front's notifications of typed session events: the shapes protocol.md gives, key for key."""

from __future__ import annotations

import json
from typing import Any

from agentls.agent import MessageUpdateEvent, TurnStartEvent
from agentls.ai import AssistantMessage, TextContent, TextDeltaEvent
from agentls.fronts.lsp.notifications import notification
from agentls.protocol import McpServerInfo, QueueItem, QueueState
from agentls.session.events import (
    BashEnded,
    BashOutput,
    BranchMoved,
    CompactionEnded,
    CompactionStarted,
    KernelEvent,
    McpStatusChanged,
    QueueChanged,
    RunSettled,
)
from agentls.session.messages import bash_execution_message


def sent(event: Any) -> tuple[str, str]:
    """The method and the params as the encoder writes them (key order included)."""
    method, params = notification(event)
    return method, json.dumps(params)


def test_message_update_is_sent_without_the_partial_message() -> None:
    partial = AssistantMessage(content=[TextContent(text="Hel")], api="faux", provider="faux", model="m")
    delta = TextDeltaEvent(content_index=0, delta="lo", partial=partial)
    event = MessageUpdateEvent(message=partial, assistant_message_event=delta)
    method, params = notification(KernelEvent("s", "run-1", 7, event))
    assert method == "agent/event"
    assert params == {
        "sessionId": "s",
        "runId": "run-1",
        "seq": 7,
        "event": {
            "type": "message_update",
            "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "lo"},
        },
    }
    assert notification(KernelEvent("s", None, 8, TurnStartEvent()))[1]["event"] == {"type": "turn_start"}


def test_session_notifications_keep_their_shapes() -> None:
    item = QueueItem(id="item-1", kind="steering", text="now")
    queue = QueueState(steering=[item], follow_up=[])
    assert sent(QueueChanged("s", queue, 3)) == (
        "agent/queue",
        json.dumps(
            {
                "sessionId": "s",
                "seq": 3,
                "steering": [{"id": "item-1", "kind": "steering", "text": "now"}],
                "followUp": [],
            }
        ),
    )
    assert sent(RunSettled("s", "run-1", "stop", seq=4)) == (
        "agent/settled",
        json.dumps({"sessionId": "s", "seq": 4, "runId": "run-1", "stopReason": "stop"}),
    )
    assert sent(RunSettled("s", "run-1", "error", "boom", seq=5))[1] == json.dumps(
        {"sessionId": "s", "seq": 5, "runId": "run-1", "stopReason": "error", "errorMessage": "boom"}
    )
    assert sent(BranchMoved("s", None, 0, 6)) == (
        "agent/branch",
        json.dumps({"sessionId": "s", "seq": 6, "leafId": None, "messageCount": 0}),
    )
    assert sent(BashOutput("s", "bash-1", "out\n", 7)) == (
        "agent/bashOutput",
        json.dumps({"sessionId": "s", "seq": 7, "bashId": "bash-1", "chunk": "out\n"}),
    )
    message = bash_execution_message("ls", output="a\n", exit_code=0, cancelled=False, truncated=False)
    method, params = notification(BashEnded("s", "bash-1", message, 8))
    assert method == "agent/bashEnd"
    assert params == {
        "sessionId": "s",
        "seq": 8,
        "bashId": "bash-1",
        "message": message.model_dump(by_alias=True),
    }


def test_compaction_and_mcp_status() -> None:
    assert sent(CompactionStarted("s", "run-1", "threshold", 100, 9)) == (
        "agent/compaction",
        json.dumps(
            {
                "sessionId": "s",
                "seq": 9,
                "runId": "run-1",
                "phase": "start",
                "reason": "threshold",
                "tokensBefore": 100,
            }
        ),
    )
    ended = CompactionEnded(
        "s", None, "manual", 100, tokens_after=10, summary="S", first_kept_entry_id="e1", seq=10
    )
    assert json.loads(sent(ended)[1]) == {
        "sessionId": "s",
        "seq": 10,
        "phase": "end",
        "reason": "manual",
        "tokensBefore": 100,
        "tokensAfter": 10,
        "summary": "S",
        "firstKeptEntryId": "e1",
    }
    info = McpServerInfo(name="n", source="x", transport="stdio", status="ready", tools=[], cwd="/w")
    assert notification(McpStatusChanged(info)) == ("agent/mcpStatus", info.wire())
