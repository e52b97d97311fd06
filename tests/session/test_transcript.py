"""The transcript keeps everything; the context is the latest summary, the kept messages and what followed."""

from __future__ import annotations

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
