"""One status line that fits the terminal's width: the least useful parts shorten (or go) first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prompt_toolkit.utils import get_cwidth

SEPARATOR = " · "


@dataclass(frozen=True)
class Part:
    """A part of the line in the forms it may take, longest first (``""``: it may go altogether)."""

    forms: tuple[str, ...]
    rank: int = 0
    """Parts of a lower rank are shortened first."""


def width_of(text: str) -> int:
    return sum(get_cwidth(character) for character in text)


def cut(text: str, width: int) -> str:
    """``text`` cut on the right to ``width`` cells, ``…`` ending it when something was cut."""
    if width_of(text) <= width:
        return text
    kept, used = [], 0
    for character in text:
        used += get_cwidth(character)
        if used > width - 1:
            break
        kept.append(character)
    return "".join(kept) + "…"


def fitted(parts: Sequence[Part], width: int) -> str:
    """The parts joined by ``·`` in their order, shortened by rank until the line has ``width`` cells."""
    chosen = [0] * len(parts)

    def line() -> str:
        forms = [part.forms[index] for part, index in zip(parts, chosen, strict=True)]
        return SEPARATOR.join(form for form in forms if form)

    for place in sorted(range(len(parts)), key=lambda place: parts[place].rank):
        while width_of(line()) > width and chosen[place] < len(parts[place].forms) - 1:
            chosen[place] += 1
    return cut(line(), width)
