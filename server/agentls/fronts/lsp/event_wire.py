"""Agent events as the LSP front sends them: Pi's shapes, ``message_update`` as its delta only.

Apart from :mod:`agentls.fronts.lsp.notifications` so that the demo's printer (which reads these
shapes) needs the kernel's types only, not the session layer.
"""

from __future__ import annotations

from typing import Any

from agentls.agent import AgentEvent, MessageUpdateEvent


def event_to_wire(event: AgentEvent) -> dict[str, Any]:
    """An agent event in Pi's shape, less what a client can rebuild.

    ``message_update`` drops the cumulative partial message and the ``partial`` of
    its assistant message event: the delta and ``contentIndex`` are enough.
    """
    if isinstance(event, MessageUpdateEvent):
        # Left out while serialising, not dropped after: dumping the whole partial message for
        # every delta made a long answer cost the square of its length.
        update = event.assistant_message_event.model_dump(mode="python", by_alias=True, exclude={"partial"})
        return {"type": "message_update", "assistantMessageEvent": update}
    return event.model_dump(mode="python", by_alias=True)


def event_params(session_id: str, run_id: str | None, seq: int, event: AgentEvent) -> dict[str, Any]:
    """The params of ``event``'s ``agent/event``
    (:class:`~agentls.protocol_methods.EventNotification`), built as they are, not validated: one
    is sent for every delta a provider streams."""
    return {"sessionId": session_id, "runId": run_id, "seq": seq, "event": event_to_wire(event)}
