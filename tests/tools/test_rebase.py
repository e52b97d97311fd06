"""Carrying an agent's change over to the disk without the user's unsaved text (``agentls.tools.rebase``)."""

from __future__ import annotations

from agentls.tools.rebase import rebase

DISK = "".join(f"line {n}\n" for n in range(1, 13))


def test_changes_far_from_the_users_text_reach_the_disk_without_it() -> None:
    buffer = DISK.replace("line 11\n", "line 11\nthe user's unsaved line\n")
    agent = (
        buffer.replace("line 2\n", "line two\n").replace("line 6\n", "").replace("line 8\n", "line 8\nnew\n")
    )
    assert rebase(buffer, agent, DISK) == DISK.replace("line 2\n", "line two\n").replace(
        "line 6\n", ""
    ).replace("line 8\n", "line 8\nnew\n")


def test_a_change_next_to_the_users_text_or_over_it_does_not_apply() -> None:
    buffer = DISK.replace("line 3\n", "line 3 edited by the user\n")
    assert rebase(buffer, buffer.replace("line 4\n", "line four\n"), DISK) is None  # its context moved
    assert rebase(buffer, buffer.replace("line 3 edited by the user\n", "x\n"), DISK) is None  # its text


def test_a_change_whose_place_is_not_unique_does_not_apply() -> None:
    disk = "x\n" + "same\n" * 6
    buffer = disk + "unsaved\n"
    lines = buffer.splitlines(keepends=True)
    lines[4] = "other\n"  # the 4th of six equal lines: its context matches in two places
    assert rebase(buffer, "".join(lines), disk) is None


def test_no_change_leaves_the_disk_as_it_is_and_an_empty_buffer_gives_no_place() -> None:
    buffer = DISK + "unsaved\n"
    assert rebase(buffer, buffer, DISK) == DISK
    assert rebase("", "new\n", "the disk\n") is None
