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

One call of RE2 costs more than matching a short path, so what matches many texts (a
folder's entries against a glob or the ``.gitignore`` rules, a file's lines against a
pattern) joins them with newlines and matches them in one search (:class:`LineScreen`,
:meth:`Pattern.fullmatches`, :meth:`Pattern.may_match_lines`), with the same answers as
one match each.
"""

from __future__ import annotations

import functools
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


_FLAGS_OFF = re.compile(r"\(\?[a-zA-Z]*-")
"""An inline group turning flags off (``(?-m)``, ``(?i-s:...)``): it may undo multi-line mode."""


class LineScreen:
    """Regexes matched against many one-line texts in one search.

    The texts are joined with newlines and searched for ``(?m)^(?:r1|r2|...)$``, with
    ``.`` not matching a newline: a text that one of the regexes matches all of is a
    whole line matched. A text that itself holds a newline cannot be told apart, nor a
    match that runs across lines: then the answer is "maybe" (:meth:`any_full_line`)
    or unknown (:meth:`full_lines`). With ``one_line`` (the regexes never match a
    newline) :meth:`full_lines` first tries whether all the lines match, in one match.
    """

    def __init__(self, regexes: list[str], *, ignore_case: bool = False, one_line: bool = False) -> None:
        joined = "|".join(f"(?:{regex})" for regex in regexes)
        options = re2_options(ignore_case=ignore_case)
        try:
            self._regex: re2._Regexp | None = re2.compile(utf8(f"(?m)^(?:{joined})$"), options)
            self._all = re2.compile(utf8(f"(?:(?:{joined})\n)*(?:{joined})"), options) if one_line else None
        except re2.error:
            self._regex = self._all = None  # too big for RE2's memory: every answer is then "maybe"

    @staticmethod
    def _joined(texts: list[str]) -> str | None:
        joined = "\n".join(texts)
        return joined if joined.count("\n") == len(texts) - 1 else None

    def any_full_line(self, texts: list[str]) -> bool:
        """Whether one of the regexes may match all of one of ``texts`` (never ``False`` when one does)."""
        if not texts:
            return False
        joined = self._joined(texts)
        if self._regex is None or joined is None:
            return True
        return self._regex.search(utf8(joined)) is not None

    def full_lines(self, texts: list[str]) -> list[bool] | None:
        """Which of ``texts`` one of the regexes matches all of; ``None`` when one search cannot tell."""
        joined = self._joined(texts) if texts else None
        if self._regex is None or joined is None:
            return None
        data = utf8(joined)
        if self._all is not None and self._all.fullmatch(data) is not None:
            return [True] * len(texts)
        found: set[bytes] = set()
        for match in self._regex.finditer(data):
            line = match.group()
            if b"\n" in line:
                return None
            found.add(line)
        if not found:
            return [False] * len(texts)
        return [utf8(text) in found for text in texts]


class Pattern:
    """A compiled RE2 pattern over UTF-8 bytes."""

    def __init__(
        self,
        pattern: str,
        *,
        ignore_case: bool = False,
        literal: bool = False,
        dot_all: bool = False,
        one_line: str | None = None,
    ) -> None:
        """Raises :class:`PatternError` for a pattern RE2 rejects or one over :data:`MAX_PATTERN_LENGTH`.

        ``one_line``: the same pattern in a form that never matches a newline
        (:func:`glob_to_line_regex`), for :meth:`fullmatches`.
        """
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
        self._source = pattern
        self._ignore_case, self._literal, self._dot_all = ignore_case, literal, dot_all
        self._one_line = one_line

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``."""
        return self._regex.search(utf8(text)) is not None

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches all of ``text``."""
        return self._regex.fullmatch(utf8(text)) is not None

    def fullmatches(self, texts: list[str]) -> list[bool]:
        """:meth:`fullmatch` of each of ``texts``, in one search when it can tell (:class:`LineScreen`)."""
        found = self._lines.full_lines(texts) if self._lines is not None and len(texts) > 1 else None
        return found if found is not None else [self.fullmatch(text) for text in texts]

    @functools.cached_property
    def _lines(self) -> LineScreen | None:
        if self._literal:
            return None
        if self._one_line is not None:
            return LineScreen([self._one_line], ignore_case=self._ignore_case, one_line=True)
        return LineScreen([self._source], ignore_case=self._ignore_case)

    def may_match_lines(self, data: bytes) -> bool:
        """Whether :meth:`search` may find the pattern in a line of the ``\\n``-separated UTF-8 ``data``.

        Never ``False`` when it does in one; ``True`` may also mean a match across
        lines. One search in multi-line mode (``^`` and ``$`` at each line's ends); a
        pattern that mode cannot screen (``\\A``, ``\\z``, flags turned off) always answers ``True``.
        """
        screen = self._multi_line
        return screen is None or screen.search(data) is not None

    @functools.cached_property
    def _multi_line(self) -> re2._Regexp | None:
        """``(?m)`` and the pattern; ``None`` when there is none that can screen lines."""
        if self._literal:
            return self._regex  # a literal has no anchors: found in a line is found in the text
        if "\\A" in self._source or "\\z" in self._source or _FLAGS_OFF.search(self._source):
            return None
        options = re2_options(ignore_case=self._ignore_case, dot_all=self._dot_all)
        try:
            return re2.compile(utf8("(?m)" + self._source), options)
        except re2.error:
            return None


# --- globs -----------------------------------------------------------------------------


def glob_to_regex(pattern: str) -> str:
    """A regex (for a full match) of a slash-separated glob: ``*``, ``?``, ``[...]``, ``**``, ``\\`` escapes.

    ``*`` and ``?`` never cross a ``/``. ``**`` as a whole segment matches any number
    of directories: ``**/x`` also matches ``x``, ``a/**`` everything inside ``a``,
    ``a/**/b`` also ``a/b``. Elsewhere ``**`` behaves like ``*``.
    """
    regex = _glob_to_regex(pattern, one_line=False)
    assert regex is not None
    return regex


def glob_to_line_regex(pattern: str) -> str | None:
    """:func:`glob_to_regex`'s regex, but one that never matches a newline (with ``.`` not matching one).

    It matches what that one matches on a text without a newline. ``None`` for a
    glob that could match a newline otherwise than through ``.``: one with a newline
    in it, or a class of characters such as ``[\\x00-z]``.
    """
    return _glob_to_regex(pattern, one_line=True)


def _glob_to_regex(pattern: str, *, one_line: bool) -> str | None:
    if one_line and "\n" in pattern:
        return None
    no_slash, negated = ("[^/\\n]", "^/\\n") if one_line else ("[^/]", "^/")
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
                out.append(no_slash + "*")
                i = end
                continue
            out.append(no_slash + "*")
            i += 1
        elif char == "?":
            out.append(no_slash)
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
            elif one_line and any(c <= "\n" for c in body):
                return None  # a range from below a newline may hold one
            body = body.replace("\\", "\\\\").replace("[", "\\[").replace("^", "\\^")
            out.append(f"[{negated if negate else ''}{body}]")
            i = close + 1
        elif char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


_GLOB_SPECIAL = frozenset("*?[\\")
"""The characters that make a glob's segment more than its literal text."""
_RG_SPECIAL = frozenset("?[]{}\\!")
"""The characters that ``rg``'s globs read otherwise than these do (``{a,b}``, a leading ``!``; its ``?``
is one byte, not one character)."""


class Glob:
    """A user's glob over relative paths (:func:`glob_matcher`): its matcher, and the folders it implies.

    ``folder`` is the glob's fixed start: the segments before the first one with a
    wildcard (``"src/"`` for ``src/**/*.ts``, ``""`` for ``**/*.py``), which every path it
    matches starts with, so a walk need not enter folders off that way; ``deep`` is
    whether it matches below ``folder``'s own files. The common globs, a file name of
    literal text and ``*`` under a fixed folder (``*.py``, ``src/*.ts``, ``test_*``,
    ``src/**/*.ts``), are matched by string comparison, with RE2's answers
    (:meth:`Pattern.fullmatch`), at a fraction of a call of RE2 each; the others by RE2.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = Pattern(glob_to_regex(pattern), dot_all=True, one_line=glob_to_line_regex(pattern))
        segments = pattern.split("/")
        fixed = 0
        while fixed < len(segments) - 1 and not _GLOB_SPECIAL.intersection(segments[fixed]):
            fixed += 1
        self.folder = "".join(segment + "/" for segment in segments[:fixed])
        rest = segments[fixed:]
        self.deep = len(rest) > 1 or rest[0] == "**"
        self._pieces = _star_pieces(rest, pattern)
        name = rest[1] if not self.folder and len(rest) == 2 and rest[0] == "**" else None
        self.name_glob = name if name and not _RG_SPECIAL.intersection(name) and "**" not in name else None
        """The glob on file names alone that this one is (``*.py`` for ``**/*.py``), when it is literal
        text and ``*``: ``rg --glob`` matches the same names with it."""

    def fullmatch(self, path: str) -> bool:
        """Whether the glob matches all of the relative ``path``."""
        if self._pieces is None:
            return self.pattern.fullmatch(path)
        if not path.startswith(self.folder):
            return False
        rest = path[len(self.folder) :]
        if not self.deep and "/" in rest:
            return False
        return _stars_match(rest.rpartition("/")[2], self._pieces)

    def fullmatches(self, paths: list[str]) -> list[bool]:
        """:meth:`fullmatch` of each of ``paths`` (by RE2 in one search when it can tell)."""
        if self._pieces is None:
            return self.pattern.fullmatches(paths)
        return [self.fullmatch(path) for path in paths]

    def matching(self, folder: str, names: list[str]) -> list[str]:
        """Those of the file ``names`` in ``folder`` (``""`` or ``"a/b/"``) whose path the glob matches."""
        if not folder.startswith(self.folder) or (not self.deep and folder != self.folder):
            return []
        pieces = self._pieces
        if pieces is None:
            matched = self.pattern.fullmatches([folder + name for name in names])
            return [name for name, hit in zip(names, matched, strict=True) if hit]
        if len(pieces) == 1:
            return [name for name in names if name == pieces[0]]
        if len(pieces) == 2 and not pieces[0]:
            return [name for name in names if name.endswith(pieces[1])] if pieces[1] else names
        return [name for name in names if _stars_match(name, pieces)]

    def may_hold(self, folder: str) -> bool:
        """Whether files the glob matches may be in ``folder`` (``"a/b/"``) or below it."""
        if folder.startswith(self.folder):
            return self.deep or folder == self.folder
        return self.folder.startswith(folder)


def _star_pieces(rest: list[str], pattern: str) -> list[str] | None:
    """The literal pieces between the ``*`` of the last segment when the glob is a common one, else ``None``.

    Common: ``NAME``, ``**/NAME`` or ``**`` after the fixed folder, ``NAME`` of literal
    text and ``*`` only; and no surrogate escapes (RE2 matches those as ``?``).
    """
    if any("\ud800" <= char <= "\udfff" for char in pattern):
        return None
    if rest == ["**"]:
        return ["", ""]
    if len(rest) == 2 and rest[0] == "**":
        rest = rest[1:]
    if len(rest) != 1 or rest[0] == "**" or _GLOB_SPECIAL.difference("*").intersection(rest[0]):
        return None
    return rest[0].split("*")


def _stars_match(name: str, pieces: list[str]) -> bool:
    """Whether ``name`` is ``pieces`` joined by runs of any characters (a glob of literal text and ``*``).

    Each middle piece is taken where it first fits: that finds a match whenever there is
    one, in time linear in the name for each piece.
    """
    first, last = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return name == first
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    start, end = len(first), len(name) - len(last)
    for piece in pieces[1:-1]:
        found = name.find(piece, start, end)
        if found < 0:
            return False
        start = found + len(piece)
    return True


def glob_matcher(pattern: str) -> Glob:
    """A matcher of relative paths for a user glob: without ``/`` it matches the file name at any depth.

    Raises :class:`PatternError` for a glob that cannot be used (``[z-a]``, or too long).
    """
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.removeprefix("/")
    if "/" not in pattern:
        pattern = "**/" + pattern
    return Glob(pattern)
