"""The transcript keeps everything; the context is the latest summary, the kept messages and what followed."""

from __future__ import annotations

from agentls.ai.types import AssistantMessage, Usage, UsageCost
from agentls.session.history.transcript import Compaction, Transcript, TranscriptEntry
from agentls.session.messages import compaction_summary_message

from tests.session.compaction.helpers import answer, transcript, user


def test_without_a_compaction_the_context_is_the_whole_transcript() -> None:
    messages = [user(), answer()]
    history = transcript(*messages)
    assert history.context() == messages and history.latest_compaction is None


def test_the_context_starts_with_the_latest_summary_then_the_kept_messages() -> None:
    first, reply, second, reply2, after = user(1, "a"), answer(), user(1, "b"), answer(), user(1, "c")
    history = transcript(first, reply, second, reply2, ("the summary", "e2"), after)
    summary = history.entries[4].message
    assert history.messages() == [first, reply, second, reply2, summary, after]
    assert history.context() == [summary, second, reply2, after]
    assert history.latest_compaction == 4


def test_a_later_compaction_replaces_the_earlier_one() -> None:
    m = [user(1, letter) for letter in "abcdef"]
    history = transcript(m[0], m[1], ("first", "e1"), m[2], m[3], ("second", "e4"), m[4])
    assert [getattr(x, "summary", None) for x in history.context()] == ["second", None, None]
    assert history.context()[1:] == [m[3], m[4]]


def test_an_older_summary_among_the_kept_entries_stays_as_in_pi() -> None:
    m = [user(1, letter) for letter in "abc"]
    history = transcript(m[0], ("first", "e0"), m[1], ("second", "e1"), m[2])
    assert [getattr(x, "summary", None) for x in history.context()] == ["second", "first", None, None]


def test_a_kept_entry_that_cannot_be_found_keeps_nothing_before_the_summary() -> None:
    history = transcript(user(), answer(), ("the summary", "missing"), user(1, "z"))
    assert len(history.context()) == 2


def test_messages_before_the_latest_compaction_are_known_by_identity() -> None:
    before, after = answer(), answer()
    history = transcript(user(), before, ("s", "e1"), after)
    assert history.is_before_latest_compaction(before)
    assert not history.is_before_latest_compaction(after)
    assert not history.is_before_latest_compaction(answer())  # an equal message that is not in it
    assert not transcript(before).is_before_latest_compaction(before)


def _priced(tokens: int, cost: float) -> AssistantMessage:
    message = answer(usage=tokens)
    message.usage.output = 1
    message.usage.cost = UsageCost(total=cost)
    return message


def _totals(history: Transcript) -> tuple[int, int, int, float, int | None]:
    usage = history.usage
    return usage.input, usage.output, usage.total_tokens, usage.cost, usage.last_sized


def test_usage_is_added_up_as_entries_come_summaries_included() -> None:
    summary_usage = Usage(input=7, total_tokens=7, cost=UsageCost(total=0.5))
    mark = Compaction("e0", usage=summary_usage)
    summary = TranscriptEntry("s", compaction_summary_message("s", 9, 0), mark)
    history = Transcript([TranscriptEntry("e0", user()), TranscriptEntry("e1", _priced(10, 0.25))])
    assert _totals(history) == (10, 1, 10, 0.25, 1)
    history.append(summary)
    history.append(TranscriptEntry("e3", _priced(0, 0.125)))  # an answer without a size (aborted early)
    assert _totals(history) == (17, 2, 17, 0.875, 1)
    history.append(TranscriptEntry("e4", _priced(4, 0.0)))
    assert _totals(history) == (21, 3, 21, 0.875, 4)
    # another branch: counted again from its own entries
    history.reset([TranscriptEntry("e0", user()), TranscriptEntry("x1", _priced(3, 0.5))])
    assert _totals(history) == (3, 1, 3, 0.5, 1)
    history.reset([])
    assert _totals(history) == (0, 0, 0, 0.0, None)
