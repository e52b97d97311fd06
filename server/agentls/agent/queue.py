"""The agent's steering and follow-up queues: Pi's ``PendingMessageQueue`` (in its ``agent.js``).

Pi's queue holds single messages, drains the first one (``one-at-a-time``) or all of them
(``all``), and keeps its list to itself. Ours holds *items*: the messages one ``steer`` or
``follow_up`` queued, delivered together (a host may queue a context message with the
user's; delivered apart, the model would get a turn with the context and no question), each
under an id, so that a host can remove, replace or move an item while it waits. An item of
one message, as :meth:`Agent.steer` queues, behaves exactly as Pi's message.

The list stays private: every change goes through a method, and one that names an item the
loop has already taken (or that never was queued) raises :class:`UnknownQueueItem`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from agentls.agent.types import QueueMode
from agentls.ai import AgentMessage

__all__ = ["PendingMessageQueue", "QueuedItem", "UnknownQueueItem"]


@dataclass(frozen=True)
class QueuedItem:
    """What one call queued: its messages, delivered together, under an id."""

    id: str
    messages: tuple[AgentMessage, ...]


class UnknownQueueItem(LookupError):
    """No item with this id is queued: it never was, was removed, or the loop has taken it."""

    def __init__(self, item_id: str) -> None:
        super().__init__(f"No queued item {item_id!r}")
        self.item_id = item_id


class PendingMessageQueue:
    """A queue of steering or follow-up messages, drained one item at a time or all at once."""

    def __init__(self, mode: QueueMode) -> None:
        self.mode: QueueMode = mode
        self._items: list[QueuedItem] = []
        self._numbers = itertools.count(1)

    @property
    def items(self) -> tuple[QueuedItem, ...]:
        """The queued items, the next to be delivered first."""
        return tuple(self._items)

    @property
    def messages(self) -> tuple[AgentMessage, ...]:
        """Every queued message, in the order they would be delivered."""
        return tuple(message for item in self._items for message in item.messages)

    def __contains__(self, item_id: object) -> bool:
        return any(item.id == item_id for item in self._items)

    def item(self, item_id: str) -> QueuedItem:
        return self._items[self._index(item_id)]

    def enqueue(self, *messages: AgentMessage, item_id: str | None = None) -> str:
        """Queue ``messages`` as one item (Pi: one message); its id, ``item_id`` if given."""
        if not messages:
            raise ValueError("a queue item needs at least one message")
        if item_id is None:
            item_id = next(f"queued-{n}" for n in self._numbers if f"queued-{n}" not in self)
        elif item_id in self:
            raise ValueError(f"An item {item_id!r} is already queued; give each item its own id")
        self._items.append(QueuedItem(item_id, messages))
        return item_id

    def has_items(self) -> bool:
        return bool(self._items)

    def drain(self) -> list[AgentMessage]:
        """Take what the loop delivers next: every message (``all``) or the first item's."""
        if self.mode == "all":
            drained, self._items = self._items, []
            return [message for item in drained for message in item.messages]
        if not self._items:
            return []
        return list(self._items.pop(0).messages)

    def clear(self) -> None:
        self._items = []

    def remove(self, item_id: str) -> QueuedItem:
        """Take an item out of the queue; the item removed."""
        return self._items.pop(self._index(item_id))

    def replace(self, item_id: str, *messages: AgentMessage) -> QueuedItem:
        """Give an item other messages; it keeps its id and its place."""
        if not messages:
            raise ValueError("a queue item needs at least one message")
        index = self._index(item_id)
        self._items[index] = item = QueuedItem(item_id, messages)
        return item

    def move(self, item_id: str, index: int) -> None:
        """Move an item to ``index`` among the others (0: delivered first; past the end: last)."""
        item = self._items.pop(self._index(item_id))
        self._items.insert(index, item)

    def _index(self, item_id: str) -> int:
        for index, item in enumerate(self._items):
            if item.id == item_id:
                return index
        raise UnknownQueueItem(item_id)
