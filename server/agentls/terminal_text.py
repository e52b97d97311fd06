"""Untrusted text (a model's, a tool's, a file's, an MCP server's) made safe to show on a terminal.

A terminal obeys what it is sent: ``\\r`` and cursor moves rewrite what is already on the screen,
escape sequences restyle or erase it, bidi overrides reorder it and zero-width characters hide
in it. So a permission question for ``touch PWNED #\\r\\x1b[2K…Run the command: ls -la`` would read
"Run the command: ls -la". Shown here, each such character is written out instead (``\\r``,
``\\x1b``, ``\\u202e``), dimmed on a terminal, and nothing of the text can move the cursor.

rich strips a few controls itself (``\\r``, backspace) but passes ESC, C1 and bidi characters
through, and stripping would hide what the text holds: this escapes them all, visibly.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_HIDDEN = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline), DEL, C1
    "\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff"  # bidi, zero-width, separators
)
HIDDEN = re.compile(f"[{_HIDDEN}]")
"""What is never shown as itself; a tab and a newline are, unless told otherwise."""

_NAMES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(char: str) -> str:
    code = ord(char)
    return _NAMES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


@functools.cache
def _pattern(newlines: bool, tabs: bool) -> re.Pattern[str]:
    escaped_too = ("" if newlines else "\n") + ("" if tabs else "\t")
    return re.compile(f"[{_HIDDEN}{escaped_too}]")


def visible(text: str, *, newlines: bool = True, tabs: bool = True) -> str:
    """``text`` with its control and invisible characters written out (``\\r``, ``\\x1b``, ``\\u202e``).

    ``newlines=False`` writes out ``\\n`` too: a question shows a command whole, on one line, so
    no first line can stand for what follows it.
    """
    return _pattern(newlines, tabs).sub(lambda match: _escaped(match.group()), text)


def visible_text(text: str, style: str = "", *, newlines: bool = True, tabs: bool = True) -> Text:
    """:func:`visible` as a rich :class:`Text` in ``style``, each written-out character dimmed."""
    from rich.text import Text  # rich only where text is styled: `agentls run -p` has none

    shown = Text(style=style)
    start = 0
    for match in _pattern(newlines, tabs).finditer(text):
        shown.append(text[start : match.start()])
        shown.append(_escaped(match.group()), "dim")
        start = match.end()
    shown.append(text[start:])
    return shown


def json_line(text: str) -> str:
    """A JSON text (``json.dumps(..., ensure_ascii=False)``, which escapes C0 itself) with the other
    hidden characters as ``\\uXXXX`` escapes: the same JSON, safe on a terminal."""
    return HIDDEN.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
