"""What a session tells its subscribers (Pi's ``AgentSessionEvent``), in the session's own terms.

Fronts subscribe with :meth:`AgentSession.subscribe <agentls.session.session.AgentSession.subscribe>`
and translate each event to their wire: the LSP front to its ``agent/*`` notifications
(``protocol.md``), the ACP front to ``session/update``s. No event knows a method name or a
wire shape.

Plain slotted dataclasses, not validated models: one :class:`KernelEvent` is made for every
delta a provider streams, so an event must cost no more than the kernel's event it carries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from agentls.agent import AgentEvent
from agentls.ai import AgentMessage
from agentls.mcp.hub import McpStatusChanged
from agentls.protocol import BudgetUsage, CompactionReason, QueueState


@dataclass(slots=True)
class KernelEvent:
    """An event of the session's agent (Pi's agent events), numbered in the session."""

    session_id: str
    run_id: str | None
    """``None`` for the events of a message that joins the transcript between runs (a user's command)."""
    seq: int
    """1, 2, ... over the session's life, shared by every event of the session: a subscriber sees
    every event, in this order."""
    event: AgentEvent


@dataclass(slots=True)
class QueueChanged:
    """The queued steering and follow-up items changed (sent only when they did)."""

    session_id: str
    queue: QueueState
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


@dataclass(slots=True)
class RunSettled:
    """A run is over: nothing it queued is left to do, its processes are ended."""

    session_id: str
    run_id: str
    stop_reason: str
    """The last response's (``stop`` without one), ``error`` when the run failed outside the model."""
    error_message: str | None = None
    """Only when ``stop_reason`` is ``error`` or ``aborted``."""
    budget: BudgetUsage | None = None
    """The limit that stopped the run, when one did."""
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


@dataclass(slots=True)
class BranchMoved:
    """A rewind or a branch switch moved the session's position in its tree."""

    session_id: str
    leaf_id: str | None
    message_count: int
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


@dataclass(slots=True)
class BashOutput:
    """The next piece of a user's command's output, as it arrives."""

    session_id: str
    bash_id: str
    chunk: str
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


@dataclass(slots=True)
class BashEnded:
    """A user's command ended; ``message`` is its ``bashExecution`` message."""

    session_id: str
    bash_id: str
    message: AgentMessage
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


@dataclass(slots=True)
class CompactionStarted:
    session_id: str
    run_id: str | None
    """The run it happens in; ``None`` for a compaction the user asked for."""
    reason: CompactionReason
    tokens_before: int
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


@dataclass(slots=True)
class CompactionEnded:
    """A compaction is over: it succeeded (``summary`` set), failed (``error_message``) or was aborted."""

    session_id: str
    run_id: str | None
    reason: CompactionReason
    tokens_before: int
    tokens_after: int | None = None
    summary: str | None = None
    first_kept_entry_id: str | None = None
    will_retry: bool | None = None
    """After an ``overflow`` compaction that succeeded: the failed request is sent again."""
    aborted: bool | None = None
    error_message: str | None = None
    seq: int = 0
    """Set by the session when it publishes the event (one numbering with :class:`KernelEvent`'s)."""


SessionEvent: TypeAlias = (
    KernelEvent
    | QueueChanged
    | RunSettled
    | BranchMoved
    | BashOutput
    | BashEnded
    | CompactionStarted
    | CompactionEnded
)
"""Everything :meth:`AgentSession.subscribe` delivers. The MCP servers' :class:`McpStatusChanged`
(re-exported here) comes from the hub to the front instead: a folder's sessions share their servers."""

SessionListener: TypeAlias = Callable[[SessionEvent], None]
"""Called in order for each event, synchronously (as Pi's listeners are): it must not block."""

__all__ = [
    "BashEnded",
    "BashOutput",
    "BranchMoved",
    "CompactionEnded",
    "CompactionStarted",
    "KernelEvent",
    "McpStatusChanged",
    "QueueChanged",
    "RunSettled",
    "SessionEvent",
    "SessionListener",
]
