""".gitignore rules for the search tools (and the session's skill and template folders), matched by RE2.

Each rule is translated to RE2 by :func:`~agentls.tools.matching.glob_to_regex`, and one
file's rules are matched in one pass (an RE2 set), in time linear in the path. A walk
first screens a whole folder's entries against each file's rules in one search
(:meth:`GitIgnore.narrowed`), so that the entries of a folder no rule can match, most of
them, cost no match of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import re2

from agentls.tools.matching import MAX_PATTERN_LENGTH, LineScreen, glob_to_regex, re2_options, utf8


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
    screen: LineScreen
    """All the rules as one pattern: which of many paths any of them may match, in one search."""

    def decision(self, path: str, is_dir: bool) -> bool | None:
        """Whether the last of its rules matching ``path`` ignores it; ``None`` if none matches."""
        found = self.matcher.Match(utf8(path[len(self.base) :])) or ()
        matching = [index for index in found if is_dir or not self.rules[index].dir_only]
        return not self.rules[max(matching)].negate if matching else None


def _ignore_file(base: str, text: str) -> _IgnoreFile | None:
    matcher = re2.Set.FullMatchSet(re2_options(dot_all=True))
    kept: list[IgnoreRule] = []
    for rule in parse_gitignore(text):
        try:
            matcher.Add(utf8(rule.regex))
        except re2.error:
            continue  # a rule RE2 cannot compile ("[z-a]") ignores nothing, as in git
        kept.append(rule)
    if not kept:
        return None
    matcher.Compile()
    return _IgnoreFile(base, tuple(kept), matcher, LineScreen([rule.regex for rule in kept]))


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

    def narrowed(self, folder: str, names: list[str]) -> GitIgnore | None:
        """These rules without the files that ignore none of ``names`` in ``folder`` (``""`` or ``"a/b/"``).

        Decides for those names as these rules do (:meth:`ignored`), each file having
        been screened against all the names at once; ``None`` when no rule can ignore one.
        """
        kept: list[_IgnoreFile] = []
        for file in self._files:
            if folder.startswith(file.base):
                inside = folder[len(file.base) :]
                if file.screen.any_full_line([inside + name for name in names]):
                    kept.append(file)
        if not kept:
            return None
        return self if len(kept) == len(self._files) else GitIgnore(tuple(kept))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative to the top, ``/``-separated) is ignored by the rules."""
        for file in reversed(self._files):
            if path.startswith(file.base):
                decision = file.decision(path, is_dir)
                if decision is not None:
                    return decision
        return False
