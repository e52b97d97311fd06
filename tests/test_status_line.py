"""chat's status line: the parts of the lowest rank shorten first, and the line never passes the width."""

from __future__ import annotations

from agentls.cli.status_line import Part, fitted, width_of


def parts() -> list[Part]:
    return [
        Part(("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"), rank=3),
        Part(("1a2b3c4d", "")),
        Part(("Accept edits (Shift+Tab)", "Accept edits"), rank=2),
        Part(("/help", ""), rank=1),
    ]


def test_a_wide_line_keeps_every_part_in_its_order() -> None:
    assert fitted(parts(), 120) == "anthropic/claude-sonnet-4-5 · 1a2b3c4d · Accept edits (Shift+Tab) · /help"


def test_the_least_useful_parts_go_first() -> None:
    assert fitted(parts(), 62) == "anthropic/claude-sonnet-4-5 · Accept edits (Shift+Tab) · /help"
    assert fitted(parts(), 54) == "anthropic/claude-sonnet-4-5 · Accept edits (Shift+Tab)"
    assert fitted(parts(), 42) == "anthropic/claude-sonnet-4-5 · Accept edits"
    assert fitted(parts(), 32) == "claude-sonnet-4-5 · Accept edits"


def test_what_is_left_is_cut_to_the_width_with_an_ellipsis() -> None:
    line = fitted(parts(), 20)
    assert line == "claude-sonnet-4-5 ·…" and width_of(line) == 20
    assert width_of(fitted([Part(("漢字" * 10,))], 9)) <= 9  # wide characters count twice
