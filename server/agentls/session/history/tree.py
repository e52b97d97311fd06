"""A session's entries as a tree (Pi's session tree): ``parentId`` links, and the leaf where it is now.

Every entry of a session file names its parent; appending makes a child of the leaf and
moves the leaf to it, and rewinding moves the leaf back, so the next entry starts a new
branch. The transcript (what ``agent/getMessages`` returns) and the model's context
follow the path from the root to the leaf. A loaded file's leaf is its last entry, as
in Pi.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from agentls.ai.types import AgentMessage, AssistantMessage
from agentls.session.history.transcript import Compaction, Transcript, TranscriptEntry

FILE_CHANGES = "agentls/fileChanges"
"""The ``customType`` of the entry that records what a ``write``/``edit`` call changed."""
WORKSPACE_CHANGES = "agentls/workspaceChanges"
"""The ``customType`` of the entry that records a pair of snapshots of the folder (around bash, MCP tools)."""
RUN = "agentls/run"
"""The ``customType`` of the entry that starts each run: ``{runId, tree?}``."""
REWIND = "agentls/rewind"
"""The ``customType`` of the marker a rewind or branch switch writes at its new position."""
REWIND_DONE = "agentls/rewindDone"
"""The ``customType`` of the marker written once a rewind's files are reverted."""


@dataclass(slots=True)
class Node:
    """One entry of the session (the header is not one); nothing changes a node once made.

    Not a frozen dataclass: one is made for every entry of every file read (a listing reads
    thousands), and a frozen one takes five times as long to make.
    """

    id: str
    parent_id: str | None
    type: str
    """The entry's ``type``: ``message``, ``compaction``, ``branch_summary``, ``custom``, ``label``,
    ``model_change``, ``thinking_level_change``, ``system_prompt_change`` or ``session_info``."""
    timestamp: int
    message: AgentMessage | None = None
    """What the entry puts in the transcript: a message, or a compaction's or branch summary's."""
    compaction: Compaction | None = None
    custom_type: str | None = None
    data: Any = None
    """A ``custom`` entry's ``data``; a ``label`` entry's ``{"targetId", "label"}``; a ``model_change``'s
    ``(provider, model id)``, a ``thinking_level_change``'s level, a ``system_prompt_change``'s text."""


class SessionTree:
    """The entries of one session in file order, and its leaf."""

    def __init__(self) -> None:
        self._nodes: dict[str, Node] = {}
        self.leaf_id: str | None = None
        """The current position: the newest entry of the branch the session is on (``None``: the start)."""

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes.values())

    def get(self, entry_id: str) -> Node | None:
        return self._nodes.get(entry_id)

    def new_id(self) -> str:
        """An id no entry of the session has (8 hex digits, as Pi's)."""
        while True:
            entry_id = secrets.token_hex(4)
            if entry_id not in self._nodes:
                return entry_id

    def add(self, node: Node) -> Node:
        """Add an entry (its parent must already be in the tree, or ``None``) and move the leaf to it."""
        self._nodes[node.id] = node
        self.leaf_id = node.id
        return node

    def grow(self, entry_type: str, timestamp: int, **fields: Any) -> Node:
        """A new entry below the leaf, with a fresh id; the leaf moves to it."""
        return self.add(Node(self.new_id(), self.leaf_id, entry_type, timestamp, **fields))

    def path(self, leaf_id: str | None) -> list[Node]:
        """The entries from the root to ``leaf_id`` (empty for ``None``)."""
        path: list[Node] = []
        node = self._nodes.get(leaf_id) if leaf_id is not None else None
        while node is not None:
            path.append(node)
            node = self._nodes.get(node.parent_id) if node.parent_id is not None else None
        path.reverse()
        return path

    def branch(self) -> list[Node]:
        """The path to the leaf."""
        return self.path(self.leaf_id)

    def common_ancestor(self, a: str | None, b: str | None) -> str | None:
        """The deepest entry on both paths (``None``: they part at the root)."""
        on_a = {node.id for node in self.path(a)}
        for node in reversed(self.path(b)):
            if node.id in on_a:
                return node.id
        return None

    def left_behind(self, from_id: str | None, to_id: str | None) -> list[Node]:
        """The entries on the path to ``from_id`` below where it parts from the path to ``to_id``."""
        ancestor = self.common_ancestor(from_id, to_id)
        path = self.path(from_id)
        start = next((i + 1 for i, node in enumerate(path) if node.id == ancestor), 0)
        return path[start:]

    def transcript(self, leaf_id: str | None) -> Transcript:
        """The messages on the path to ``leaf_id``, compactions and branch summaries in place."""
        return transcript_of(self.path(leaf_id))

    def labels(self) -> dict[str, str]:
        """The label of each labelled entry (the latest ``label`` entry for it counts)."""
        labels: dict[str, str] = {}
        for node in self._nodes.values():
            if node.type == "label" and isinstance(node.data, dict):
                target, label = node.data.get("targetId"), node.data.get("label")
                if label:
                    labels[target] = label
                else:
                    labels.pop(target, None)
        return labels


@dataclass(frozen=True)
class BranchSettings:
    """The model, thinking level and system prompt in force at the end of a path."""

    model: tuple[str, str] | None
    """``(provider, model id)``."""
    thinking_level: str
    system_prompt: str


def settings_on(path: Iterable[Node], start: BranchSettings) -> BranchSettings:
    """Pi's ``getSessionContextSettings``: ``start`` (the header's) with the entries of ``path`` applied.

    A ``model_change`` sets the model, and so does each assistant message (the model that
    answered); ``thinking_level_change`` and ``system_prompt_change`` set theirs. Entries of
    other branches do not count, so a rewind or a branch switch brings back the settings of
    the branch it goes to.
    """
    model, level, prompt = start.model, start.thinking_level, start.system_prompt
    for node in path:
        if node.type == "model_change":
            model = node.data
        elif node.type == "thinking_level_change":
            level = node.data
        elif node.type == "system_prompt_change":
            prompt = node.data
        elif (answered := answered_by(node.message)) is not None:
            model = answered
    return BranchSettings(model, level, prompt)


def answered_by(message: AgentMessage | None) -> tuple[str, str] | None:
    """The model an assistant message names as the one that answered (``unknown`` names none)."""
    if isinstance(message, AssistantMessage) and "unknown" not in (message.provider, message.model):
        return (message.provider, message.model)
    return None


def transcript_of(nodes: Iterable[Node]) -> Transcript:
    return Transcript(
        TranscriptEntry(node.id, node.message, node.compaction) for node in nodes if node.message is not None
    )
