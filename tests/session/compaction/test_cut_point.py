"""Where a compaction cuts: about keepRecentTokens kept, never before a tool result, split turns marked."""

from __future__ import annotations

from agentls.session.compaction.cut_point import find_cut_point

from tests.session.compaction.helpers import answer, call, result, transcript, user


def cut(*messages: object, keep: int, start: int = 0) -> tuple[int, int, bool]:
    entries = transcript(*messages).entries
    point = find_cut_point(entries, start, len(entries), keep)
    return point.first_kept_index, point.turn_start_index, point.is_split_turn


def test_the_cut_keeps_the_newest_turns_that_reach_the_budget() -> None:
    # walking back: 10 + 10 + 40 = 60 >= 50 at the user message of index 2, a turn start
    messages = [user(40), answer(40), user(40), answer(10), user(10)]
    assert cut(*messages, keep=50) == (2, -1, False)


def test_the_cut_moves_forward_past_tool_results() -> None:
    # the budget is reached at the tool result of index 3; the next place to cut is the answer after it
    messages = [user(10), answer(10), call("read"), result(100), answer(5)]
    assert cut(*messages, keep=50) == (4, 0, True)


def test_a_turn_too_large_to_keep_is_split_at_an_assistant_message() -> None:
    messages = [user(5), call("read", "c1"), result(30, "c1"), call("ls", "c2"), result(30, "c2"), answer(5)]
    first_kept, turn_start, split = cut(*messages, keep=40)
    assert (first_kept, turn_start, split) == (3, 0, True)  # the second call and what follows are kept


def test_when_the_newest_message_alone_fills_the_budget_everything_is_kept() -> None:
    # Pi's rule: no place to cut at or after it, so the cut stays at the first cut point
    messages = [user(10), answer(10), user(5), call("read"), result(500)]
    assert cut(*messages, keep=100) == (0, -1, False)


def test_with_no_place_to_cut_the_start_is_kept() -> None:
    assert cut(result(10), result(10), keep=5) == (0, -1, False)


def test_the_walk_starts_at_the_given_entry() -> None:
    messages = [user(100), answer(100), user(30), answer(30), user(30)]
    assert cut(*messages, keep=1000, start=2) == (2, -1, False)


def test_a_summary_counts_towards_the_budget_but_is_no_place_to_cut() -> None:
    summary = ("s" * 400, "e2")  # 100 tokens
    messages = [user(10), answer(10), user(10), answer(10), summary, user(10), answer(10)]
    # 10 + 10 + 100 >= 110 at the summary (index 4); the next place to cut is the user message after it
    assert cut(*messages, keep=110, start=2) == (5, -1, False)
