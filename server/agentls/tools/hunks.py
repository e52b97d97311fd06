"""A change between two texts as numbered hunks, and a text made from some of them.

A review answered hunk by hunk (``agent/reviewEdit``) and a revert of single hunks
(``agent/revertChanges``) both name hunks by their index in the list the server sent, so
the list must be the same each time it is made from the same two texts: it is the unified
diff of ``difflib`` with 3 lines of context, as :mod:`agentls.tools.text_diff` shows it,
after the lines the texts share at both ends are set aside (so a small change in a large
file costs little). :func:`compose` then builds the text that takes the new side of the
hunks chosen and the old side of the others.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

CONTEXT = 3
NO_NEWLINE = "\\ No newline at end of file"


def split_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` keeping their ends (not ``splitlines``, which splits on more)."""
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def shared_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start, and then at their end."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


Opcode = tuple[str, int, int, int, int]


def grouped_opcodes(a: list[str], b: list[str]) -> list[list[Opcode]]:
    """``difflib``'s grouped opcodes of ``a`` → ``b`` (3 lines of context), in whole-text line numbers."""
    head, tail = shared_ends(a, b)
    skip = max(0, head - CONTEXT)
    keep = max(0, tail - CONTEXT)
    matcher = difflib.SequenceMatcher(None, a[skip : len(a) - keep], b[skip : len(b) - keep])
    return [
        [(tag, i1 + skip, i2 + skip, j1 + skip, j2 + skip) for tag, i1, i2, j1, j2 in group]
        for group in matcher.get_grouped_opcodes(CONTEXT)
    ]


@dataclass(frozen=True)
class Hunk:
    """One hunk: lines ``old_from:old_to`` of the old text become ``new_from:new_to`` of the new (0-based)."""

    old_from: int
    old_to: int
    new_from: int
    new_to: int
    lines: tuple[str, ...]
    """Each line with its prefix (``" "``, ``"-"``, ``"+"``) and no end; :data:`NO_NEWLINE` after a last
    line without one."""

    @property
    def header(self) -> str:
        return f"@@ -{line_range(self.old_from, self.old_to)} +{line_range(self.new_from, self.new_to)} @@"

    def wire(self) -> dict[str, Any]:
        return {
            "oldStart": _start(self.old_from, self.old_to),
            "oldLines": self.old_to - self.old_from,
            "newStart": _start(self.new_from, self.new_to),
            "newLines": self.new_to - self.new_from,
            "lines": list(self.lines),
        }


def _start(start: int, stop: int) -> int:
    """A hunk's start as unified diffs number it: 1-based, the line before for an empty range."""
    return start + 1 if stop > start else start


def line_range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it: ``START,LENGTH``, the length left out when it is 1."""
    length = stop - start
    return str(start + 1) if length == 1 else f"{_start(start, stop)},{length}"


def _prefixed(prefix: str, line: str) -> list[str]:
    if line.endswith("\n"):
        return [prefix + line[:-1]]
    return [prefix + line, NO_NEWLINE]


def diff_hunks(old: str, new: str) -> list[Hunk]:
    """The hunks of ``old`` → ``new`` (empty when they are equal)."""
    a, b = split_lines(old), split_lines(new)
    hunks = []
    for group in grouped_opcodes(a, b):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(line for item in a[i1:i2] for line in _prefixed(" ", item))
                continue
            lines.extend(line for item in a[i1:i2] for line in _prefixed("-", item))
            lines.extend(line for item in b[j1:j2] for line in _prefixed("+", item))
        first, last = group[0], group[-1]
        hunks.append(Hunk(first[1], last[2], first[3], last[4], tuple(lines)))
    return hunks


def compose(old: str, new: str, take_new: Collection[int]) -> str:
    """The text of ``old`` with the hunks of ``old`` → ``new`` whose index is in ``take_new`` applied.

    All of them give ``new``, none gives ``old``; taking back hunks of a change is the same with
    ``take_new`` the hunks kept.
    """
    a, b = split_lines(old), split_lines(new)
    out: list[str] = []
    at = 0
    for index, hunk in enumerate(diff_hunks(old, new)):
        out.extend(a[at : hunk.old_from])
        out.extend(b[hunk.new_from : hunk.new_to] if index in take_new else a[hunk.old_from : hunk.old_to])
        at = hunk.old_to
    out.extend(a[at:])
    return "".join(out)


def hunk_list(indexes: Collection[int]) -> str:
    """``hunk 2``, ``hunks 1 and 3``, ``hunks 1, 2 and 4`` (1-based, as a person counts them)."""
    numbers = [str(i + 1) for i in sorted(indexes)]
    if len(numbers) == 1:
        return f"hunk {numbers[0]}"
    return f"hunks {', '.join(numbers[:-1])} and {numbers[-1]}"
