"""Positions and minimal edits of the editor workspace (what ``workspace/applyEdit`` carries)."""

from __future__ import annotations

import re

import pytest
from agentls.tools.editor import lsp_position, minimal_edit


def apply(text: str, line: int, character: int, end_line: int, end_character: int, new: str) -> str:
    """Apply one UTF-16 ranged edit the way an editor does (an implementation independent of the server's)."""

    def offset(line: int, character: int) -> int:
        starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
        index, units = starts[line], 0
        while units < character:
            units += 2 if ord(text[index]) > 0xFFFF else 1
            index += 1
        return index

    return text[: offset(line, character)] + new + text[offset(end_line, end_character) :]


def test_positions_count_utf16_units_and_every_line_break() -> None:
    text = "a😀b\r\nc\rd\ne"
    assert lsp_position(text, 2) == lsp_position(text, 2, "utf-16")
    assert (lsp_position(text, 2)["line"], lsp_position(text, 2)["character"]) == (0, 3)
    assert (lsp_position(text, 2, "utf-8")["character"], lsp_position(text, 2, "utf-32")["character"]) == (
        5,
        2,
    )
    assert (lsp_position(text, 5)["line"], lsp_position(text, 5)["character"]) == (1, 0)  # after \r\n
    assert (lsp_position(text, 7)["line"], lsp_position(text, 9)["line"]) == (2, 3)  # after \r, after \n
    assert (lsp_position(text, len(text))["line"], lsp_position(text, len(text))["character"]) == (3, 1)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 'two'\nc = 3\n"),
        ("same", "same"),
        ("", "all new\n"),
        ("gone\n", ""),
        ("x\r\ny\r\n", "x\ny\r\n"),  # a CRLF turned into LF: the range must not split the pair
        ("x\r\ny", "x\r\nz\r\ny"),
        ("😀 one 😀", "😀 two 😀"),
        ("aaaa", "aa"),
        ("line\n" * 3, "line\n" * 4),
    ],
)
def test_minimal_edit_turns_old_into_new(old: str, new: str) -> None:
    edit = minimal_edit(old, new)
    start, end = edit["range"]["start"], edit["range"]["end"]
    assert (
        apply(old, start["line"], start["character"], end["line"], end["character"], edit["newText"]) == new
    )


def test_minimal_edit_replaces_only_the_changed_middle() -> None:
    edit = minimal_edit("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n")
    assert edit["range"] == {"start": {"line": 1, "character": 5}, "end": {"line": 1, "character": 5}}
    assert edit["newText"] == "0"
