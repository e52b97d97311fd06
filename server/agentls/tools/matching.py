"""Linear-time matching for the search tools: RE2 patterns, and the globs on it.

Python's ``re`` backtracks: ``^(a+)+$`` against ``aaaa…!`` takes time exponential in the
text, and ``re`` holds the GIL while it matches, so one ``grep`` froze the whole server.
RE2 (the ``google-re2`` bindings) matches in time linear in the text and releases the
GIL while it does; its dialect is ripgrep's (Rust's ``regex`` descends from RE2): no
backreferences and no lookaround. Globs (and the ``.gitignore`` rules of
:mod:`agentls.tools.ignore`) are translated to RE2 as well, since a glob such as
``*a*a*a*a*a*b`` backtracks as badly in ``re``.

Text is matched as UTF-8; a character that has none (the surrogate escapes of a file
name that is not UTF-8) is matched as ``?``, so no text can fail a match.
"""

from __future__ import annotations

import re

import re2

MAX_PATTERN_LENGTH = 4096
"""The longest pattern or glob accepted. Linear time is linear in the text times the pattern's size."""

_MEMORY = 64 << 20
"""RE2's memory for one pattern (its default is 8 MB). With less, a pattern such as
``\\pL{50}`` overflows the DFA's cache and RE2 falls back to its NFA, a thousand times slower."""


class PatternError(ValueError):
    """RE2 cannot use a pattern; the message says why (RE2's own words)."""


def re2_options(*, ignore_case: bool = False, literal: bool = False, dot_all: bool = False) -> re2.Options:
    """RE2's options for one pattern: quiet about what it rejects, with :data:`_MEMORY` to match in."""
    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern on stderr
    options.max_mem = _MEMORY
    options.case_sensitive = not ignore_case
    options.literal = literal
    options.dot_nl = dot_all
    return options


def utf8(text: str) -> bytes:
    """``text`` as UTF-8; a character that has none (a surrogate escape) becomes ``?``."""
    return text.encode("utf-8", errors="replace")


def _reason(error: Exception) -> str:
    message = error.args[0] if error.args else error
    return message.decode("utf-8", errors="replace") if isinstance(message, bytes) else str(message)


class Pattern:
    """A compiled RE2 pattern over UTF-8 bytes."""

    def __init__(
        self, pattern: str, *, ignore_case: bool = False, literal: bool = False, dot_all: bool = False
    ) -> None:
        """Raises :class:`PatternError` for a pattern RE2 rejects or one over :data:`MAX_PATTERN_LENGTH`."""
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise PatternError(
                f"it is {len(pattern)} characters long, the most accepted is {MAX_PATTERN_LENGTH}"
            )
        try:
            self._regex = re2.compile(
                utf8(pattern), re2_options(ignore_case=ignore_case, literal=literal, dot_all=dot_all)
            )
        except re2.error as error:
            raise PatternError(_reason(error)) from None

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``."""
        return self._regex.search(utf8(text)) is not None

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches all of ``text``."""
        return self._regex.fullmatch(utf8(text)) is not None


# --- globs -----------------------------------------------------------------------------


def glob_to_regex(pattern: str) -> str:
    """A regex (for a full match) of a slash-separated glob: ``*``, ``?``, ``[...]``, ``**``, ``\\`` escapes.

    ``*`` and ``?`` never cross a ``/``. ``**`` as a whole segment matches any number
    of directories: ``**/x`` also matches ``x``, ``a/**`` everything inside ``a``,
    ``a/**/b`` also ``a/b``. Elsewhere ``**`` behaves like ``*``.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            if pattern.startswith("**", i):
                end = i + 2
                if (i == 0 or pattern[i - 1] == "/") and (end == n or pattern[end] == "/"):
                    if end == n:
                        out.append(".*")
                        i = end
                    else:
                        out.append("(?:.*/)?")
                        i = end + 1
                    continue
                out.append("[^/]*")
                i = end
                continue
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            start = i + 1
            if pattern[start : start + 1] in ("!", "^"):
                start += 1
            if pattern[start : start + 1] == "]":
                start += 1
            close = pattern.find("]", start)
            if close == -1:
                out.append(re.escape(char))
                i += 1
                continue
            body = pattern[i + 1 : close]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            body = body.replace("\\", "\\\\").replace("[", "\\[").replace("^", "\\^")
            out.append(f"[{'^/' if negate else ''}{body}]")
            i = close + 1
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def glob_matcher(pattern: str) -> Pattern:
    """A matcher of relative paths for a user glob: without ``/`` it matches the file name at any depth.

    Raises :class:`PatternError` for a glob that cannot be used (``[z-a]``, or too long).
    """
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.removeprefix("/")
    if "/" not in pattern:
        pattern = "**/" + pattern
    return Pattern(glob_to_regex(pattern), dot_all=True)
