"""Linear-time matching for the search tools: RE2 patterns, and the globs and ``.gitignore`` rules on it.

Python's ``re`` backtracks: ``^(a+)+$`` against ``aaaa…!`` takes time exponential in the
text, and ``re`` holds the GIL while it matches, so one ``grep`` froze the whole server.
RE2 (the ``google-re2`` bindings) matches in time linear in the text and releases the
GIL while it does; its dialect is ripgrep's (Rust's ``regex`` descends from RE2): no
backreferences and no lookaround. Globs and ``.gitignore`` rules are translated to RE2 as
well, since a glob such as ``*a*a*a*a*a*b`` backtracks as badly in ``re``.

Text is matched as UTF-8; a character that has none (the surrogate escapes of a file
name that is not UTF-8) is matched as ``?``, so no text can fail a match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

MAX_PATTERN_LENGTH = 4096
"""The longest pattern or glob accepted. Linear time is linear in the text times the pattern's size."""

_MEMORY = 64 << 20
"""RE2's memory for one pattern (its default is 8 MB). With less, a pattern such as
``\\pL{50}`` overflows the DFA's cache and RE2 falls back to its NFA, a thousand times slower."""


class PatternError(ValueError):
    """RE2 cannot use a pattern; the message says why (RE2's own words)."""


def _options(*, ignore_case: bool = False, literal: bool = False, dot_all: bool = False) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern on stderr
    options.max_mem = _MEMORY
    options.case_sensitive = not ignore_case
    options.literal = literal
    options.dot_nl = dot_all
    return options


def _utf8(text: str) -> bytes:
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
                _utf8(pattern), _options(ignore_case=ignore_case, literal=literal, dot_all=dot_all)
            )
        except re2.error as error:
            raise PatternError(_reason(error)) from None

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``."""
        return self._regex.search(_utf8(text)) is not None

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches all of ``text``."""
        return self._regex.fullmatch(_utf8(text)) is not None


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


# --- .gitignore ------------------------------------------------------------------------


@dataclass(frozen=True)
class IgnoreRule:
    """One line of a ``.gitignore``: a regex over paths relative to the file's folder."""

    regex: str
    negate: bool
    dir_only: bool


def parse_gitignore(text: str) -> list[IgnoreRule]:
    """The rules of a ``.gitignore``'s text, in file order.

    Blank lines and ``#`` comments are skipped, ``!`` negates, a trailing ``/``
    matches only directories, a ``/`` at the start or in the middle anchors the
    pattern to the file's folder (otherwise it matches at any depth), and
    ``\\#``, ``\\!`` and ``\\ `` escape. A line longer than :data:`MAX_PATTERN_LENGTH`
    (longer than any path it could name) is skipped.
    """
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip(" \t")
        if line.endswith("\\") and len(line) < len(raw):
            line += " "
        if not line or line.startswith("#") or len(line) > MAX_PATTERN_LENGTH:
            continue
        negate = line.startswith("!")
        if negate or line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        line = line.removeprefix("/") if "/" in line else "**/" + line
        rules.append(IgnoreRule(glob_to_regex(line), negate, dir_only))
    return rules


@dataclass(frozen=True)
class _IgnoreFile:
    """The rules of one ``.gitignore``, matched in one pass: an RE2 set tells which of them match."""

    base: str
    rules: tuple[IgnoreRule, ...]
    matcher: re2.Set

    def decision(self, path: str, is_dir: bool) -> bool | None:
        """Whether the last of its rules matching ``path`` ignores it; ``None`` if none matches."""
        found = self.matcher.Match(_utf8(path[len(self.base) :])) or ()
        matching = [index for index in found if is_dir or not self.rules[index].dir_only]
        return not self.rules[max(matching)].negate if matching else None


def _ignore_file(base: str, text: str) -> _IgnoreFile | None:
    matcher = re2.Set.FullMatchSet(_options(dot_all=True))
    kept: list[IgnoreRule] = []
    for rule in parse_gitignore(text):
        try:
            matcher.Add(_utf8(rule.regex))
        except re2.error:
            continue  # a rule RE2 cannot compile ("[z-a]") ignores nothing, as in git
        kept.append(rule)
    if not kept:
        return None
    matcher.Compile()
    return _IgnoreFile(base, tuple(kept), matcher)


class GitIgnore:
    """The ``.gitignore`` rules in force in one folder; deeper files come later, so they win.

    Each file's rules are kept with its folder (a ``/``-terminated prefix, ``""`` for
    the top); the last rule that matches decides.
    """

    def __init__(self, files: tuple[_IgnoreFile, ...] = ()) -> None:
        self._files = files

    def extended(self, base: str, text: str) -> GitIgnore:
        """These rules followed by those of a ``.gitignore`` in folder ``base`` (``""`` or ``"a/b/"``)."""
        added = _ignore_file(base, text)
        return GitIgnore((*self._files, added)) if added is not None else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative to the top, ``/``-separated) is ignored by the rules."""
        for file in reversed(self._files):
            if path.startswith(file.base):
                decision = file.decision(path, is_dir)
                if decision is not None:
                    return decision
        return False
