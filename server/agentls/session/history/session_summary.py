"""What a session list shows of a session file, read without checking every message against its model.

A listing reads each session file no index knows (:mod:`~agentls.session.history.session_index`),
and checking every message against its model was most of that reading (0.47 s of the 0.5 s for
1,000 sessions of 5 turns). A summary is read line by line as loading reads the file: the same
strict JSON, and every entry checked by :func:`~agentls.session.history.entries.read_entry` but
a message entry whose id is new, whose time is in range and whose message is an object with a
string ``role``: :class:`SummaryReader` takes that one as it is. The messages the summary shows
something of are checked once the branch is known (:func:`summarize`): the first user message (the
title) and the assistant messages from the end back to the one that names the model. If one of
them is damaged, :class:`UncheckedMessage` says so and the file is read again as loading reads it.

So the summary is what loading the file gives, but for a message elsewhere on the branch that is JSON
its model refuses (a hand-edited file, a newer agentls's content type): loading skips it with a
warning, the summary counts it (and its time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from pydantic import TypeAdapter

from agentls.ai.types import AgentMessage, UserMessage
from agentls.session.history.entries import MAX_TIMESTAMP, SessionEntry, StoredMessage, read_entry
from agentls.session.history.header import SessionHeader
from agentls.session.history.session_index import SessionSummary
from agentls.session.history.tree import Node, SessionTree, answered_by

__all__ = ["TITLE_LENGTH", "ListedMessage", "SummaryReader", "UncheckedMessage", "summarize", "title"]

TITLE_LENGTH = 80

_MESSAGE: TypeAdapter[AgentMessage] = TypeAdapter(StoredMessage)
_NUMBER = (int, float)
_READ_LATER = ("user", "assistant")
"""The roles of the messages :func:`summarize` may read."""

MessageOf: TypeAlias = Callable[[Node], AgentMessage | None]
"""The message of a node of the summary's tree (``None`` for one the summary never reads)."""


class UncheckedMessage(Exception):
    """A message :class:`SummaryReader` took unchecked is damaged: read the file as loading does."""


class ListedMessage:
    """A message entry taken as it is (its message is in :attr:`SummaryReader.messages`)."""

    __slots__ = ("id", "parent_id", "timestamp")

    def __init__(self, entry_id: str, parent_id: Any, timestamp: float) -> None:
        self.id = entry_id
        self.parent_id = parent_id
        self.timestamp = timestamp

    def to_node(self, parent_id: str | None) -> Node:
        return Node(self.id, parent_id, "message", int(self.timestamp))


class SummaryReader:
    """:func:`~agentls.session.history.entries.read_entry` for a summary: a message entry with its id,
    time and role in order is a :class:`ListedMessage`, its message read when :func:`summarize` needs it."""

    def __init__(self) -> None:
        self.messages: dict[str, dict[str, Any]] = {}
        """The user and assistant messages taken unchecked, by entry id."""

    def read(self, data: Any, tree: SessionTree) -> SessionEntry | ListedMessage:
        if type(data) is dict and data.get("type") == "message":
            entry_id, timestamp, message = data.get("id"), data.get("timestamp"), data.get("message")
            if (
                type(entry_id) is str
                and entry_id
                and entry_id not in tree
                and type(timestamp) in _NUMBER
                and 0 <= timestamp <= MAX_TIMESTAMP
                and type(message) is dict
                and type(role := message.get("role")) is str
            ):
                if role in _READ_LATER:
                    self.messages[entry_id] = message
                return ListedMessage(entry_id, data.get("parentId"), timestamp)
        return read_entry(data, tree)  # the rest, and what is wrong with a damaged message entry

    def message_of(self, node: Node) -> AgentMessage | None:
        """``node``'s message, checked now if it was taken unchecked; :class:`UncheckedMessage` if damaged."""
        if node.message is not None:
            return node.message
        data = self.messages.get(node.id)
        if data is None:
            return None
        try:
            return _MESSAGE.validate_python(data)
        except Exception:  # as read_entry: anything a validator raises is a damaged message
            raise UncheckedMessage(node.id) from None


def summarize(
    session_id: str,
    header: SessionHeader,
    tree: SessionTree,
    name: str | None,
    updated_at: int,
    message_of: MessageOf,
) -> SessionSummary:
    """The summary of a session read into ``tree`` (the branch is its leaf's, as loading has it).

    ``message_of`` gives each node's message; for a tree read as loading reads it, ``Node.message``.
    """
    branch = tree.branch()
    return SessionSummary(
        session_id=session_id,
        cwd=header.cwd,
        title=name or _first_prompt(branch, message_of),
        created_at=header.created_at,
        updated_at=updated_at,
        message_count=sum(1 for node in branch if node.type == "message" or node.message is not None),
        model=_model(branch, header, message_of),
    )


def _first_prompt(branch: list[Node], message_of: MessageOf) -> str | None:
    for node in branch:
        if node.type == "message" and isinstance(message := message_of(node), UserMessage):
            return title(message)
    return None


def _model(branch: list[Node], header: SessionHeader, message_of: MessageOf) -> tuple[str, str] | None:
    """The model :func:`~agentls.session.history.tree.settings_on` gives the branch: the last one set."""
    for node in reversed(branch):
        if node.type == "model_change":
            return node.data  # type: ignore[no-any-return]
        if node.type == "message" and (model := answered_by(message_of(node))) is not None:
            return model
    return header.model


def title(message: UserMessage) -> str:
    """A user message's text on one line, at most :data:`TITLE_LENGTH` characters."""
    if isinstance(message.content, str):
        text = message.content
    else:
        text = " ".join(block.text for block in message.content if block.type == "text")
    text = " ".join(text.split())
    if len(text) > TITLE_LENGTH:
        text = text[: TITLE_LENGTH - 1].rstrip() + "…"
    return text
