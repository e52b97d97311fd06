"""The hunks a review and a revert name by index, and the texts made from some of them."""

from __future__ import annotations

import itertools
import random

from agentls.tools.hunks import NO_NEWLINE, compose, diff_hunks, hunk_list
from agentls.tools.text_diff import unified_diff

OLD = "".join(f"line {i}\n" for i in range(1, 31))
NEW = (
    OLD.replace("line 3\n", "line three\n").replace("line 20\n", "").replace("line 28\n", "line 28\nadded\n")
)


def test_hunks_are_the_unified_diffs_hunks() -> None:
    hunks = diff_hunks(OLD, NEW)
    assert [hunk.header for hunk in hunks] == ["@@ -1,6 +1,6 @@", "@@ -17,7 +17,6 @@", "@@ -26,5 +25,6 @@"]
    shown = unified_diff(OLD, NEW, "f").splitlines()
    assert [line for line in shown if line.startswith("@@")] == [hunk.header for hunk in hunks]
    body = [line for line in shown[2:] if not line.startswith("@@")]
    assert body == [line for hunk in hunks for line in hunk.lines]
    assert hunks[0].wire() == {
        "oldStart": 1,
        "oldLines": 6,
        "newStart": 1,
        "newLines": 6,
        "lines": [" line 1", " line 2", "-line 3", "+line three", " line 4", " line 5", " line 6"],
    }


def test_compose_takes_the_new_side_of_the_hunks_chosen() -> None:
    assert compose(OLD, NEW, {0, 1, 2}) == NEW
    assert compose(OLD, NEW, set()) == OLD
    first = compose(OLD, NEW, {0})
    assert "line three" in first and "line 20\n" in first and "added" not in first
    others = compose(OLD, NEW, {1, 2})
    assert "line 3\n" in others and "line 20\n" not in others and "added" in others


def test_compose_of_every_subset_on_random_texts() -> None:
    rng = random.Random(7)
    for _ in range(200):
        old_lines = [f"{rng.randrange(6)}\n" for _ in range(rng.randrange(0, 40))]
        new_lines = list(old_lines)
        for _ in range(rng.randrange(1, 6)):
            at = rng.randrange(len(new_lines) + 1)
            if new_lines and rng.random() < 0.5:
                del new_lines[min(at, len(new_lines) - 1)]
            else:
                new_lines.insert(at, f"new {rng.randrange(100)}\n")
        old, new = "".join(old_lines), "".join(new_lines)
        if rng.random() < 0.3:
            new = new.rstrip("\n")
        hunks = diff_hunks(old, new)
        assert compose(old, new, range(len(hunks))) == new
        assert compose(old, new, ()) == old
        for size in range(len(hunks) + 1):
            for chosen in itertools.combinations(range(len(hunks)), size):
                made = compose(old, new, chosen).split("\n")
                # each hunk taken puts its new lines where its old lines were, nothing else moves
                grown = sum(
                    (hunks[i].new_to - hunks[i].new_from) - (hunks[i].old_to - hunks[i].old_from)
                    for i in chosen
                )
                assert len(made) == len(old.split("\n")) + grown or not new.endswith("\n")


def test_a_last_line_without_its_end_is_marked() -> None:
    (hunk,) = diff_hunks("a\nb", "a\nc")
    assert hunk.lines == (" a", "-b", NO_NEWLINE, "+c", NO_NEWLINE)
    (added,) = diff_hunks("", "x\n")
    assert added.wire()["oldStart"] == 0 and added.wire()["oldLines"] == 0 and added.wire()["newStart"] == 1


def test_hunk_lists_read_as_a_person_counts() -> None:
    assert hunk_list([1]) == "hunk 2"
    assert hunk_list([2, 0]) == "hunks 1 and 3"
    assert hunk_list([0, 1, 3]) == "hunks 1, 2 and 4"
