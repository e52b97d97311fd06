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
from dataclasses import dataclass, field

from agentls.ai.types import AgentMessage, AssistantMessage, Usage


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


@dataclass
class UsageTotals:
    """What a transcript's assistant messages and compaction summaries used, added up as they come.

    A session's stats (``agent/getStats``, and ACP's ``usage_update`` after every answer) summed
    every message's usage each time they were asked for: 266 us at 1,000 messages, growing with the
    session (0.2 us kept here).
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    answers_cost: float = 0.0
    """The assistant messages' cost; the summaries' are added to it in :attr:`cost`."""
    summaries: list[Usage] = field(default_factory=list)
    """The usage of each compaction summary, in order."""
    last_sized: int | None = None
    """The index of the newest assistant message whose usage counts tokens (its context's size)."""

    def add_answer(self, usage: Usage, index: int) -> None:
        """The usage of the assistant message at ``index`` of the transcript."""
        self._add(usage)
        self.answers_cost += usage.cost.total
        if usage.total_tokens:
            self.last_sized = index

    def add_summary(self, usage: Usage) -> None:
        """What generating a compaction's summary used."""
        self._add(usage)
        self.summaries.append(usage)

    def _add(self, usage: Usage) -> None:
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.total_tokens += usage.total_tokens

    @property
    def cost(self) -> float:
        """The answers' cost, then each summary's, added in that order (as a sum over them would)."""
        total = self.answers_cost
        for usage in self.summaries:
            total += usage.cost.total
        return total


class Transcript:
    """The entries of a session that carry a message, in file order."""

    def __init__(self, entries: Iterable[TranscriptEntry] = ()) -> None:
        self._entries: list[TranscriptEntry] = []
        self._latest_compaction: int | None = None
        self.usage = UsageTotals()
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
        self.usage = UsageTotals()
        for entry in entries:
            self.append(entry)

    def append(self, entry: TranscriptEntry) -> None:
        """Add ``entry`` at the end (its message is final: its usage is counted now)."""
        if isinstance(entry.message, AssistantMessage):
            self.usage.add_answer(entry.message.usage, len(self._entries))
        if entry.compaction is not None:
            self._latest_compaction = len(self._entries)
            if entry.compaction.usage:
                self.usage.add_summary(entry.compaction.usage)
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
