"""The ``grep`` tool (Pi's name and arguments): the lines of files (or open buffers) that match a pattern.

``rg`` (when installed, :mod:`agentls.tools.ripgrep`) picks the files that have a match;
the matches are then found and formatted here, so the output is the same either way.
"""

from __future__ import annotations

import contextlib
import operator
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal
from agentls.tools.matching import Glob, Pattern, PatternError, utf8
from agentls.tools.read import split_lines
from agentls.tools.ripgrep import FilesWithMatches, find_rg
from agentls.tools.search_common import (
    bool_arg,
    capped,
    check_aborted,
    glob_arg,
    int_arg,
    noted,
    str_arg,
    tool_args,
    tool_result,
)
from agentls.tools.walk import (
    DEFAULT_BOUNDS,
    Bounds,
    Budget,
    Tree,
    WalkFile,
    open_documents,
    run_search,
    with_documents,
)
from agentls.tools.walk_split import split_after
from agentls.tools.workspace import DiskWorkspace, ToolInputError

DEFAULT_GREP_LIMIT = 100
GREP_MAX_LINE_LENGTH = 500
GREP_MAX_FILE_BYTES = 5 * 1024 * 1024
BINARY_SNIFF_BYTES = 8192
CHECK_EVERY_LINES = 256
"""How many lines ``grep`` matches between two checks of the abort signal and the time bound."""

EAGER_FILES = 1000
"""The files ``grep`` searches in Python while ``rg`` runs before it waits for ``rg`` (the rest of the
folder that reaches it too): enough to find a common pattern's matches at once, few enough not to
compete with ``rg`` for the cores for long."""

_FIND_RG: Any = object()

GREP_DESCRIPTION = (
    "Search file contents for a pattern (a regular expression in RE2 syntax, as ripgrep's: no "
    "backreferences or lookaround; or literal text with literal=true). Returns matching lines as "
    "'path:LINE: text' and context lines as 'path-LINE- text', with groups separated by '--'; paths "
    "are relative to the search directory. Respects .gitignore, "
    f"skips .git, binary files and files over {GREP_MAX_FILE_BYTES // (1024 * 1024)}MB. Lines longer "
    f"than {GREP_MAX_LINE_LENGTH} characters are cut. Output is truncated to {DEFAULT_GREP_LIMIT} "
    "matches unless a different limit is given."
)

GREP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {
            "type": "string",
            "description": "Directory or file to search (default: current directory)",
        },
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "integer",
            "minimum": 0,
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of matches to return (default: {DEFAULT_GREP_LIMIT})",
        },
    },
    "required": ["pattern"],
}


def _cut(line: str) -> str:
    return line if len(line) <= GREP_MAX_LINE_LENGTH else line[:GREP_MAX_LINE_LENGTH] + "…"


def _file_lines(tree: Tree, file: WalkFile, buffers: dict[str, str], regex: Pattern) -> list[str] | None:
    """The lines of a text file (of its open buffer if it has one), or ``None`` for a binary, too
    large or unreadable one, one that is not a regular file, one reached through a symlink out,
    or one where ``regex`` matches no line (all its lines screened in one search)."""
    if file.absolute in buffers:
        text = buffers[file.absolute].removeprefix("\ufeff")
        return split_lines(text) if regex.may_match_lines(_joined_lines(utf8(text))) else None
    data = tree.read_file(file, GREP_MAX_FILE_BYTES)
    if data is None or len(data) > GREP_MAX_FILE_BYTES or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    if data.isascii():  # already the UTF-8 that is matched: screened before it is decoded
        return split_lines(data.decode("ascii")) if regex.may_match_lines(_joined_lines(data)) else None
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return split_lines(text) if regex.may_match_lines(_joined_lines(utf8(text))) else None


def _joined_lines(data: bytes) -> bytes:
    """The lines :func:`split_lines` makes of ``data``, joined by ``\\n`` (perhaps with a last empty one)."""
    if b"\r" not in data:
        return data
    return data.replace(b"\r\n", b"\n").removesuffix(b"\r")


def _hits(lines: list[str], regex: Pattern, room: int, budget: Budget) -> tuple[list[int], bool]:
    """The numbers of the first ``room`` matching lines, and whether more lines match.

    Stops early (more: ``False``) when the budget is spent.
    """
    hits: list[int] = []
    for number, line in enumerate(lines):
        if number % CHECK_EVERY_LINES == 0 and not budget.running():
            return hits, False
        if regex.search(line):
            if len(hits) == room:
                return hits, True
            hits.append(number)
    return hits, False


def _groups(display: str, lines: list[str], hits: list[int], context: int) -> list[list[str]]:
    """The output lines of one file's ``hits``, in groups of overlapping or adjacent context."""
    hit_set = set(hits)
    ranges: list[list[int]] = []
    for number in hits:
        start, stop = max(0, number - context), min(len(lines) - 1, number + context)
        if ranges and start <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], stop)
        else:
            ranges.append([start, stop])
    return [
        [
            f"{display}{':' if n in hit_set else '-'}{n + 1}{':' if n in hit_set else '-'} {_cut(lines[n])}"
            for n in range(start, stop + 1)
        ]
        for start, stop in ranges
    ]


@dataclass
class _GrepOutcome:
    groups: list[list[str]]
    matches: int
    files: int
    truncated: bool


def _grep(
    tree: Tree,
    files: Iterator[WalkFile],
    buffers: dict[str, str],
    regex: Pattern,
    context: int,
    limit: int,
    budget: Budget,
) -> _GrepOutcome:
    outcome = _GrepOutcome([], 0, 0, False)
    for file in files:
        if not budget.running():
            break
        lines = _file_lines(tree, file, buffers, regex)
        if not lines:
            continue
        hits, outcome.truncated = _hits(lines, regex, limit - outcome.matches, budget)
        if hits:
            outcome.matches += len(hits)
            outcome.files += 1
            outcome.groups += _groups(file.relative, lines, hits, context)
        if outcome.truncated:
            break
    return outcome


@dataclass(frozen=True)
class _GrepQuery:
    """What one ``grep`` call searches: its path as given and resolved, its files and its pattern."""

    path: str
    resolved: Path
    buffers: dict[str, str]
    glob: Glob | None
    pattern: str
    ignore_case: bool
    literal: bool
    rg: str | None
    split_after: float | None
    """When its walk forks a helper (:func:`~agentls.tools.walk_split.split_after`); only with ``rg``."""


def _grep_files(tree: Tree, query: _GrepQuery, budget: Budget) -> Iterator[WalkFile]:
    """The files ``query`` searches, in order: its file, or those of its folder that ``rg`` may match in."""
    top = str(query.resolved)
    if top in query.buffers:
        yield WalkFile(query.path, top, query.resolved.name)
        return
    fd = tree.open(query.resolved, query.path)
    is_folder = stat.S_ISDIR(os.fstat(fd).st_mode)
    os.close(fd)
    if not is_folder:
        yield WalkFile(query.path, top, query.resolved.name, target=top)
        return
    hits = None
    documents = open_documents(query.buffers, query.resolved, query.glob)
    if query.rg is not None:
        hits = FilesWithMatches(
            query.rg,
            top,
            query.pattern,
            ignore_case=query.ignore_case,
            literal=query.literal,
            budget=budget,
            name_glob=query.glob.name_glob if query.glob is not None else None,
        )
    chosen = None if hits is None else _ChosenByRg(hits, {file.relative for file in documents})
    # In Python alone every file is read: by path, those of a helper's folders would cost more.
    split = None if hits is None else query.split_after
    walk = tree.walk(query.resolved, query.path, budget, query.glob, chosen, split)
    with hits or contextlib.nullcontext(), contextlib.closing(walk):
        yield from with_documents(walk, documents, operator.attrgetter("relative"))


class _ChosenByRg:
    """Which of the walk's files ``grep`` searches while ``rg`` picks them: all of the first
    :data:`EAGER_FILES` while it runs, then, once it has ended, those it found and the open documents
    (searched in their buffers); all if it failed."""

    def __init__(self, hits: FilesWithMatches, documents: set[str]) -> None:
        self._hits, self._documents, self._seen = hits, documents, 0

    def __call__(self, folder: str, names: list[str]) -> list[str]:
        if self._seen >= EAGER_FILES:
            self._hits.wait()
        self._seen += len(names)
        found = self._hits.found()
        if found is None:
            return names
        documents = self._documents
        return [name for name in names if folder + name in found or folder + name in documents]


def _regex(pattern: str, ignore_case: bool, literal: bool) -> Pattern:
    try:
        return Pattern(pattern, ignore_case=ignore_case, literal=literal)
    except PatternError as error:
        raise ToolInputError(
            f"Invalid regex {pattern!r}: {error}. grep uses RE2 syntax, as ripgrep does: no backreferences "
            "(\\1) and no lookaround ((?=...), (?!...), (?<=...), (?<!...)). Fix the pattern, or pass "
            "literal=true to search for the text as is"
        ) from None


def grep_tool(
    workspace: DiskWorkspace, rg: str | None = _FIND_RG, bounds: Bounds = DEFAULT_BOUNDS
) -> AgentTool:
    """The ``grep`` tool; ``details`` is ``{path, matches, files, truncated}`` (the shown matches).

    ``rg`` is the ripgrep executable used to pick the files with a match (default:
    :func:`find_rg`'s when the tool runs; ``None``: search every file in Python).
    ``bounds`` limits what one call may read (``details.boundsHit`` names those it hit).
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        check_aborted(signal)
        args = tool_args(args, "grep")
        pattern = str_arg(args, "pattern")
        if pattern == "":
            raise ToolInputError("pattern must not be empty")
        path = str_arg(args, "path", ".")
        glob = args.get("glob")
        if glob is not None and (not isinstance(glob, str) or not glob.strip()):
            raise ToolInputError(f"glob must be a non-empty string, got {glob!r}")
        ignore_case, literal = bool_arg(args, "ignoreCase"), bool_arg(args, "literal")
        context = int_arg(args, "context", 0, minimum=0)
        limit = int_arg(args, "limit", DEFAULT_GREP_LIMIT)
        regex = _regex(pattern, ignore_case, literal)
        resolved = workspace.resolve(path)
        query = _GrepQuery(
            path,
            resolved,
            workspace.buffers(),
            glob_arg(glob) if glob is not None else None,
            pattern,
            ignore_case,
            literal,
            find_rg() if rg is _FIND_RG else rg,
            split_after(),
        )
        budget = Budget(bounds, signal)

        def search() -> _GrepOutcome:
            tree = Tree(workspace)
            with contextlib.closing(_grep_files(tree, query, budget)) as files:
                return _grep(tree, files, query.buffers, regex, context, limit, budget)

        outcome = await run_search(search, signal)
        check_aborted(signal)
        details = {
            "path": str(resolved),
            "matches": outcome.matches,
            "files": outcome.files,
            "truncated": outcome.truncated,
        }
        if not outcome.groups:
            return tool_result(noted("No matches found", details, budget), details)
        separator = "\n--\n" if context > 0 else "\n"
        text = separator.join("\n".join(group) for group in outcome.groups)
        if outcome.truncated:
            text += (
                f"\n\n[{limit} matches limit reached. Use limit={limit * 2} for more, or refine the pattern]"
            )
        text = capped(text, details, "use a narrower path, glob or pattern, or less context")
        return tool_result(noted(text, details, budget), details)

    return AgentTool(
        name="grep", label="grep", description=GREP_DESCRIPTION, parameters=GREP_PARAMETERS, execute=execute
    )
