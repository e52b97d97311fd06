"""What a session list shows of a session file, read without checking every message against its model.

A listing reads each session file no index knows (:mod:`~agentls.session.history.session_index`),
and checking every message against its model was the largest part of that reading (0.47 s for
1,000 sessions of 5 turns). A summary is read as loading reads the file (its lines' values from
:class:`~agentls.session.history.session_lines.LineValues`): strict JSON, every entry checked by
:func:`~agentls.session.history.entries.read_entry` but a message entry that only its message could
make invalid (:func:`~agentls.session.history.entries.message_envelope`), taken as it is, and as
``orjson`` reads its line: that gives its envelope as the strict reading does, without the checks
that find where the two readings differ (:func:`~agentls.session.history.session_lines.exact_value`,
15% of a first listing's reading). The messages the summary shows something of are checked once
the branch is known (:func:`summarize`): the first user message (the title) and the assistant
messages from the end back to the one that names the model. If one of them is damaged, or holds
what ``orjson`` reads otherwise (an integer beyond 64 bits, as a float), :class:`UncheckedMessage`
says so and the file is read again as loading reads it.

So the summary is what loading the file gives, but for a message elsewhere on the branch that
loading skips with a warning and the summary counts (and its time): one that is JSON its model
refuses (a hand-edited file, a newer agentls's content type), or one nested deeper than the strict
parser's stack allows but within ``orjson``'s 1,024 levels (agentls writes at most 100).
"""

from __future__ import annotations

from typing import Any, TypeAlias

from pydantic import TypeAdapter

from agentls.ai.types import AgentMessage, UserMessage
from agentls.session.history.entries import StoredMessage
from agentls.session.history.header import SessionHeader
from agentls.session.history.session_index import SessionSummary
from agentls.session.history.tree import Node, SessionTree, answered_by

__all__ = ["TITLE_LENGTH", "Unchecked", "UncheckedMessage", "summarize", "title"]

TITLE_LENGTH = 80

Unchecked: TypeAlias = dict[str, dict[str, Any]]
"""The JSON of the user and assistant messages read without checking, by entry id (their nodes have
no message)."""

_MESSAGE: TypeAdapter[AgentMessage] = TypeAdapter(StoredMessage)


class UncheckedMessage(Exception):
    """A message taken unchecked that the summary shows something of is damaged: read the file as
    loading does."""


class _Messages:
    """The messages of a summary's nodes: a node's own, or the JSON it was read with, checked now."""

    def __init__(self, unchecked: Unchecked) -> None:
        self._unchecked = unchecked

    def of(self, node: Node) -> AgentMessage | None:
        """``node``'s message (``None`` for one the summary never reads); :class:`UncheckedMessage`."""
        if node.message is not None:
            return node.message
        data = self._unchecked.get(node.id)
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
    unchecked: Unchecked,
) -> SessionSummary:
    """The summary of a session read into ``tree`` (the branch is its leaf's, as loading has it);
    :class:`UncheckedMessage` when an unchecked message it shows something of is damaged."""
    branch = tree.branch()
    messages = _Messages(unchecked)
    return SessionSummary(
        session_id=session_id,
        cwd=header.cwd,
        title=name or _first_prompt(branch, messages),
        created_at=header.created_at,
        updated_at=updated_at,
        message_count=sum(1 for node in branch if node.type == "message" or node.message is not None),
        model=_model(branch, header, messages),
    )


def _first_prompt(branch: list[Node], messages: _Messages) -> str | None:
    for node in branch:
        if node.type == "message" and isinstance(message := messages.of(node), UserMessage):
            return title(message)
    return None


def _model(branch: list[Node], header: SessionHeader, messages: _Messages) -> tuple[str, str] | None:
    """The model :func:`~agentls.session.history.tree.settings_on` gives the branch: the last one set."""
    for node in reversed(branch):
        if node.type == "model_change":
            return node.data  # type: ignore[no-any-return]
        if node.type == "message" and (model := answered_by(messages.of(node))) is not None:
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
