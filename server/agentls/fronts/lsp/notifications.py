"""The LSP front's wire for what sessions tell it: each typed event as its ``agent/*`` notification.

The params are built by :mod:`agentls.protocol`'s notification models (``protocol.md``); the
``agent/event`` of each kernel event, sent for every streamed delta, by
:func:`~agentls.fronts.lsp.event_wire.event_params`, which skips validation.
"""

from __future__ import annotations

from typing import Any

from agentls.ai import to_wire
from agentls.fronts.lsp.event_wire import event_params
from agentls.protocol_methods import (
    BashEndNotification,
    BashOutputNotification,
    BranchNotification,
    CompactionNotification,
    QueueNotification,
    SettledNotification,
)
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
    SessionEvent,
)

AGENT_EVENT = "agent/event"


def notification(event: SessionEvent | McpStatusChanged) -> tuple[str, dict[str, Any]]:
    """The method and params of the notification that tells ``event``."""
    if type(event) is KernelEvent:  # one for every streamed delta: no pattern matching's work
        return AGENT_EVENT, event_params(event.session_id, event.run_id, event.seq, event.event)
    match event:
        case QueueChanged(session_id, queue, seq):
            note = QueueNotification(
                session_id=session_id, seq=seq, steering=queue.steering, follow_up=queue.follow_up
            )
            return "agent/queue", note.wire()
        case RunSettled(session_id, run_id, stop_reason, error_message, budget, seq):
            settled = SettledNotification(
                session_id=session_id,
                seq=seq,
                run_id=run_id,
                stop_reason=stop_reason,
                error_message=error_message,
                budget=budget,
            )
            return "agent/settled", settled.wire()
        case CompactionStarted(session_id, run_id, reason, tokens_before, seq):
            started = CompactionNotification(
                session_id=session_id,
                seq=seq,
                run_id=run_id,
                phase="start",
                reason=reason,
                tokens_before=tokens_before,
            )
            return "agent/compaction", started.wire()
        case CompactionEnded():
            ended = CompactionNotification(
                session_id=event.session_id,
                seq=event.seq,
                run_id=event.run_id,
                phase="end",
                reason=event.reason,
                tokens_before=event.tokens_before,
                tokens_after=event.tokens_after,
                summary=event.summary,
                first_kept_entry_id=event.first_kept_entry_id,
                will_retry=event.will_retry,
                aborted=event.aborted,
                error_message=event.error_message,
            )
            return "agent/compaction", ended.wire()
        case BranchMoved(session_id, leaf_id, message_count, seq):
            branch = BranchNotification(
                session_id=session_id, seq=seq, leaf_id=leaf_id, message_count=message_count
            )
            return "agent/branch", branch.wire()
        case BashOutput(session_id, bash_id, chunk, seq):
            output = BashOutputNotification(session_id=session_id, seq=seq, bash_id=bash_id, chunk=chunk)
            return "agent/bashOutput", output.wire()
        case BashEnded(session_id, bash_id, message, seq):
            end = BashEndNotification(
                session_id=session_id, seq=seq, bash_id=bash_id, message=to_wire(message)
            )
            return "agent/bashEnd", end.wire()
        case McpStatusChanged(server):
            return "agent/mcpStatus", server.wire()
    raise TypeError(f"not a session event: {event!r}")
