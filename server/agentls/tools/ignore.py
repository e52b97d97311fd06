""".gitignore rules for the search tools (and the session's skill and template folders), matched by RE2.

Each rule is translated to RE2 by :func:`~agentls.tools.matching.glob_to_regex`, and one
file's rules are matched in one pass (an RE2 set), in time linear in the path. A walk
first screens a whole folder's entries against each file's rules at once
(:meth:`GitIgnore.narrowed`), so that the entries of a folder no rule can match, most of
them, cost no match of their own. The screen looks for what a rule's matches must
contain: a rule on the name alone made of literal text, ``*`` and ``?`` (``*.log``,
``node_modules/``, most of them) by its literal pieces in the folder's names joined by
newlines (a substring search, no call of RE2); other rules on the name by one RE2 search
of those names; a rule on a path (``/dist``, ``src/*/gen``) only in the folders at its
depth, by one RE2 search of their paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import re2

from agentls.tools.matching import MAX_PATTERN_LENGTH, LineScreen, glob_to_regex, re2_options, utf8

_WILDCARDS = frozenset("*?")
_SPECIAL = frozenset("*?[\\")


@dataclass(frozen=True)
class IgnoreRule:
    """One line of a ``.gitignore``: a regex over paths relative to the file's folder."""

    regex: str
    negate: bool
    dir_only: bool
    name_regex: str | None = None
    """For a rule on the name alone (a line without ``/``): the regex of the name it matches."""
    name_pieces: tuple[str, ...] | None = None
    """For a rule on the name of literal text, ``*`` and ``?`` only: the texts each name it matches
    holds in a newline-separated list of names, a newline before the first piece when the name starts
    with it and after the last when it ends with it (``(".log\\n",)`` for ``*.log``)."""
    slashes: int | None = None
    """For a rule on a path: how many ``/`` the paths it matches have, ``None`` if that varies."""


def _name_pieces(glob: str) -> tuple[str, ...] | None:
    """:attr:`IgnoreRule.name_pieces` of a glob on a name; ``None`` for one with a class or an escape."""
    if _SPECIAL.difference(_WILDCARDS).intersection(glob) or any("\ud800" <= c <= "\udfff" for c in glob):
        return None
    pieces = "\n" + glob.replace("?", "*") + "\n"
    return tuple(piece for piece in pieces.split("*") if piece)


def _rule(line: str, negate: bool, dir_only: bool) -> IgnoreRule:
    if "/" in line:
        line = line.removeprefix("/")
        slashes = None if "**" in line or "[" in line else line.count("/")
        return IgnoreRule(glob_to_regex(line), negate, dir_only, slashes=slashes)
    if line == "**":
        return IgnoreRule(glob_to_regex("**/**"), negate, dir_only)
    name_regex = glob_to_regex(line)
    return IgnoreRule(glob_to_regex("**/" + line), negate, dir_only, name_regex, _name_pieces(line))


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
        rules.append(_rule(line, negate, dir_only))
    return rules


@dataclass(frozen=True)
class _IgnoreFile:
    """The rules of one ``.gitignore``, matched in one pass: an RE2 set tells which of them match."""

    base: str
    rules: tuple[IgnoreRule, ...]
    matcher: re2.Set
    pieces: tuple[tuple[str, ...], ...]
    """The :attr:`IgnoreRule.name_pieces` of its rules that have them."""
    names: LineScreen | None
    """Its other rules on the name, in one pattern over names."""
    paths: dict[int | None, LineScreen] = field(default_factory=dict)
    """Its rules on a path, in one pattern over paths for each count of ``/`` in them."""

    def decision(self, path: str, is_dir: bool) -> bool | None:
        """Whether the last of its rules matching ``path`` ignores it; ``None`` if none matches."""
        only_pieces = self.names is None and not self.paths
        if only_pieces and not _holds_pieces("\n" + path[path.rfind("/") + 1 :] + "\n", self.pieces):
            return None  # each rule has pieces, and the name does not hold them
        found = self.matcher.Match(utf8(path[len(self.base) :])) or ()
        matching = [index for index in found if is_dir or not self.rules[index].dir_only]
        return not self.rules[max(matching)].negate if matching else None

    def may_match(self, inside: str, names: list[str], joined: str | None) -> bool:
        """Whether a rule may match one of ``names`` in its folder ``inside`` (``""`` or ``"a/"``).

        ``joined``: the names, each with a newline before and after it, ``None`` when one has a
        newline in it. Never ``False`` when a rule matches one.
        """
        if joined is None:
            return True
        if _holds_pieces(joined, self.pieces):
            return True
        if self.names is not None and self.names.any_full_line(names):
            return True
        slashes = inside.count("/")
        screens = [screen for count, screen in self.paths.items() if count is None or count == slashes]
        if not screens:
            return False
        paths = [inside + name for name in names]
        return any(screen.any_full_line(paths) for screen in screens)


def _holds_pieces(text: str, rules: tuple[tuple[str, ...], ...]) -> bool:
    """Whether ``text`` holds all the pieces of one of ``rules`` (:attr:`IgnoreRule.name_pieces`)."""
    for pieces in rules:
        for piece in pieces:
            if piece not in text:
                break
        else:
            return True
    return False


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
    pieces = tuple(rule.name_pieces for rule in kept if rule.name_pieces is not None)
    names = [rule.name_regex for rule in kept if rule.name_regex is not None and rule.name_pieces is None]
    by_slashes: dict[int | None, list[str]] = {}
    for rule in kept:
        if rule.name_regex is None:
            by_slashes.setdefault(rule.slashes, []).append(rule.regex)
    paths = {count: LineScreen(regexes) for count, regexes in by_slashes.items()}
    return _IgnoreFile(base, tuple(kept), matcher, pieces, LineScreen(names) if names else None, paths)


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
        if not names:
            return None
        joined = "\n" + "\n".join(names) + "\n"
        if joined.count("\n") != len(names) + 1:
            joined = None  # a name with a newline: the pieces cannot be told apart
        kept: list[_IgnoreFile] = []
        for file in self._files:
            if folder.startswith(file.base) and file.may_match(folder[len(file.base) :], names, joined):
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
