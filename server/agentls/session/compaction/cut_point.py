"""Where a compaction cuts the transcript: a port of Pi 0.85.0's ``findCutPoint``.

Walking back from the newest message, Pi keeps messages until about
``keepRecentTokens`` are kept, then cuts at the nearest place where a cut is allowed
at or after that point: before a user-like message or an assistant message, never
before a tool result (it must follow the tool call it answers). A cut before an
assistant message falls inside a turn (a user message and the responses and tool
results after it): such a *split turn* keeps the turn's end, and its beginning is
summarised on its own.

Pi's entries include settings changes, which carry no message, and it moves a cut back
over them; a :class:`~agentls.session.history.transcript.Transcript` holds only entries with a
message, so there is nothing to move over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentls.session.compaction.tokens import estimate_tokens
from agentls.session.history.transcript import TranscriptEntry

CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
"""Roles a cut may come before (``isCutPointMessage``)."""

TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})
"""Roles that start a turn (``isTurnStartMessage``): what the user or the application added."""


@dataclass(frozen=True)
class CutPoint:
    first_kept_index: int
    """The index of the first entry kept."""
    turn_start_index: int
    """The entry that starts the turn the cut splits, or -1."""
    is_split_turn: bool


def _is_turn_start(entry: TranscriptEntry) -> bool:
    return entry.compaction is None and entry.message.role in TURN_START_ROLES


def _valid_cut_points(entries: Sequence[TranscriptEntry], start: int, end: int) -> list[int]:
    return [
        i
        for i in range(start, end)
        if entries[i].compaction is None and entries[i].message.role in CUT_POINT_ROLES
    ]


def find_turn_start_index(entries: Sequence[TranscriptEntry], index: int, start: int) -> int:
    """The entry at or before ``index`` (not before ``start``) that starts its turn, or -1."""
    for i in range(index, start - 1, -1):
        if _is_turn_start(entries[i]):
            return i
    return -1


def find_cut_point(
    entries: Sequence[TranscriptEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """The cut that keeps about ``keep_recent_tokens`` of the entries ``start`` to ``end`` (exclusive)."""
    cut_points = _valid_cut_points(entries, start, end)
    if not cut_points:
        return CutPoint(start, -1, False)
    cut_index = cut_points[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        tokens = estimate_tokens(entries[i].message)
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            cut_index = next((c for c in cut_points if c >= i), cut_index)
            break
    starts_turn = _is_turn_start(entries[cut_index])
    turn_start = -1 if starts_turn else find_turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, not starts_turn and turn_start != -1)
