"""What a compaction summarises and the summary it makes: Pi 0.85.0's ``prepareCompaction`` and ``compact``.

The span summarised starts where the previous compaction's kept messages start (so
they are summarised this time, into a summary that also takes the previous one as
context) and ends at the cut. When the cut splits a turn, the turn's beginning gets a
summary of its own, appended to the history's. Both are pure functions of the
transcript and the model's answers: nothing here changes a session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass

from agentls.ai.types import AgentMessage, Usage, UsageCost
from agentls.session.compaction.cut_point import find_cut_point
from agentls.session.compaction.file_ops import FileOperations, format_file_operations
from agentls.session.compaction.summary import Summarizer, Summary
from agentls.session.compaction.tokens import estimate_context_tokens
from agentls.session.history.transcript import Compaction, Transcript, TranscriptEntry


@dataclass
class Preparation:
    """Pi's ``CompactionPreparation``."""

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations


@dataclass(frozen=True)
class CompactionResult:
    summary: str
    """The summary text, the file lists appended."""
    first_kept_entry_id: str
    tokens_before: int
    compaction: Compaction
    """What the compaction entry stores besides the summary."""


def _summarised(entries: Sequence[TranscriptEntry], start: int, end: int) -> list[AgentMessage]:
    """The messages of entries ``start`` to ``end``, summaries left out (the previous one is sent apart)."""
    return [entries[i].message for i in range(start, end) if entries[i].compaction is None]


def prepare_compaction(transcript: Transcript, keep_recent_tokens: int) -> Preparation | None:
    """What to summarise and where to cut; ``None`` when there is nothing to compact."""
    entries = transcript.entries
    if not entries or entries[-1].compaction is not None:
        return None
    previous = transcript.latest_compaction
    previous_summary: str | None = None
    start = 0
    file_ops = FileOperations()
    if previous is not None:
        mark = entries[previous].compaction
        assert mark is not None
        previous_summary = getattr(entries[previous].message, "summary", None)
        kept = next((i for i in range(len(entries)) if entries[i].id == mark.first_kept_entry_id), -1)
        start = kept if kept >= 0 else previous + 1
        file_ops.read.update(mark.read_files)
        file_ops.edited.update(mark.modified_files)
    tokens_before = estimate_context_tokens(transcript.context()).tokens
    cut = find_cut_point(entries, start, len(entries), keep_recent_tokens)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    to_summarize = _summarised(entries, start, history_end)
    prefix = _summarised(entries, cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None
    for message in (*to_summarize, *prefix):
        file_ops.add_message(message)
    return Preparation(
        first_kept_entry_id=entries[cut.first_kept_index].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
    )


def _add_usage(first: Usage, second: Usage) -> Usage:
    """Pi's ``combineUsage``."""
    a, b = first.cost, second.cost
    return Usage(
        input=first.input + second.input,
        output=first.output + second.output,
        cache_read=first.cache_read + second.cache_read,
        cache_write=first.cache_write + second.cache_write,
        total_tokens=first.total_tokens + second.total_tokens,
        cost=UsageCost(
            input=a.input + b.input,
            output=a.output + b.output,
            cache_read=a.cache_read + b.cache_read,
            cache_write=a.cache_write + b.cache_write,
            total=a.total + b.total,
        ),
    )


async def compact(
    preparation: Preparation, summarizer: Summarizer, reserve_tokens: int, instructions: str | None = None
) -> CompactionResult:
    """Pi's ``compact``: the summary (or, for a split turn, both summaries merged) and the file lists.

    Raises :class:`~agentls.session.compaction.summary.SummaryError` or ``SummaryAborted``.
    """
    p = preparation

    def summarize_history() -> Awaitable[Summary]:
        return summarizer.summarize(
            p.messages_to_summarize,
            reserve_tokens,
            instructions=instructions,
            previous_summary=p.previous_summary,
        )

    if p.is_split_turn and p.turn_prefix_messages:
        history_text, history_usage = "No prior history.", None
        if p.messages_to_summarize:
            history = await summarize_history()
            history_text, history_usage = history.text, history.usage
        prefix = await summarizer.summarize_turn_prefix(p.turn_prefix_messages, reserve_tokens)
        summary = f"{history_text}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix.text}"
        usage = _add_usage(history_usage, prefix.usage) if history_usage else prefix.usage
    else:
        result = await summarize_history()
        summary, usage = result.text, result.usage
    read_files, modified_files = p.file_ops.file_lists()
    return CompactionResult(
        summary=summary + format_file_operations(read_files, modified_files),
        first_kept_entry_id=p.first_kept_entry_id,
        tokens_before=p.tokens_before,
        compaction=Compaction(
            first_kept_entry_id=p.first_kept_entry_id,
            read_files=tuple(read_files),
            modified_files=tuple(modified_files),
            usage=usage,
        ),
    )
