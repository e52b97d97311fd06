"""A session's transcript: the messages of its branch, each with its entry id, compactions in place.

The transcript holds the path from the root of the session's tree to its leaf
(:mod:`agentls.session.history.tree`), and only grows while the session stays on that branch: a
compaction does not remove the messages it summarised, it adds a ``compactionSummary``
message where it happened (its entry's place in the file). Clients read the transcript
(``agent/getMessages``), so their ``since`` cursors stay valid across a compaction. The
model reads the *context*, built from the transcript as Pi's ``buildContextEntries``
builds it from the session entries: the latest summary, then the kept messages (from the compaction's
``firstKeptEntryId`` up to the compaction), then everything after it.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentls.ai.types import AgentMessage, Usage


@dataclass(frozen=True)
class Compaction:
    """What a compaction entry holds besides its summary (Pi's ``CompactionEntry``)."""

    first_kept_entry_id: str
    """The entry of the first message the model still sees after the summary."""
    read_files: tuple[str, ...] = ()
    """Files read (and not modified) in the summarised part, carried into the next compaction."""
    modified_files: tuple[str, ...] = ()
    usage: Usage | None = None
    """What generating the summary cost."""


@dataclass(frozen=True)
class BranchSummary:
    """What a ``branch_summary`` entry holds besides its summary (Pi's ``BranchSummaryEntry``)."""

    read_files: tuple[str, ...] = ()
    modified_files: tuple[str, ...] = ()
    usage: Usage | None = None
    """What generating the summary cost."""


@dataclass(frozen=True)
class TranscriptEntry:
    """One message of the transcript and the id of the session-file entry that holds it."""

    id: str
    message: AgentMessage
    compaction: Compaction | None = None
    """Set on a compaction's entry, whose message is the ``compactionSummary``."""


class Transcript:
    """The entries of a session that carry a message, in file order."""

    def __init__(self, entries: Iterable[TranscriptEntry] = ()) -> None:
        self._entries: list[TranscriptEntry] = []
        self._latest_compaction: int | None = None
        for entry in entries:
            self.append(entry)

    @property
    def entries(self) -> Sequence[TranscriptEntry]:
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def reset(self, entries: Iterable[TranscriptEntry]) -> None:
        """Hold ``entries`` instead (another branch's), in place: whoever holds the transcript sees them."""
        self._entries = []
        self._latest_compaction = None
        for entry in entries:
            self.append(entry)

    def append(self, entry: TranscriptEntry) -> None:
        if entry.compaction is not None:
            self._latest_compaction = len(self._entries)
        self._entries.append(entry)

    def messages(self, since: int = 0) -> list[AgentMessage]:
        """The whole history from index ``since``, the summaries where their compactions happened."""
        return [entry.message for entry in self._entries[since:]]

    @property
    def latest_compaction(self) -> int | None:
        """The index of the newest compaction entry, if there is one."""
        return self._latest_compaction

    def context(self) -> list[AgentMessage]:
        """What the model sees: the latest summary, the messages it kept, then everything after it.

        As in Pi, a kept message that cannot be found (a damaged file) keeps nothing before
        the compaction, and an older summary among the kept entries stays in.
        """
        index = self._latest_compaction
        if index is None:
            return self.messages()
        compaction = self._entries[index]
        assert compaction.compaction is not None
        kept_id = compaction.compaction.first_kept_entry_id
        first_kept = next((i for i in range(index) if self._entries[i].id == kept_id), index)
        kept = self._entries[first_kept:index] + self._entries[index + 1 :]
        return [compaction.message, *(entry.message for entry in kept)]

    def is_before_latest_compaction(self, message: AgentMessage) -> bool:
        """Whether ``message`` (this very object) was written before the newest compaction.

        Pi compares timestamps for this; the transcript knows the order itself, which
        also holds for messages whose clock says otherwise (scripted ones say 0).
        """
        index = self._latest_compaction
        return index is not None and any(entry.message is message for entry in self._entries[:index])


def new_entry_id() -> str:
    """An entry id for a session that is not saved (a saved one's ids come from its writer)."""
    return secrets.token_hex(4)
