"""The read-only search tools (Pi-compatible names and arguments): ``ls``, ``find`` and ``grep``.

The file-system work runs in a worker thread and checks the abort signal between
directories. ``find`` and ``grep`` skip ``.git/`` and honour ``.gitignore`` files
(the workspace root's, the ones between it and the search folder, and nested ones)
through the small :class:`GitIgnore` matcher below, which implements the common
gitignore rules. Both see the editor's open documents inside the workspace: ``grep``
searches an open document's buffer instead of its file, and both list open documents
that are not saved to disk yet. Folders and files are read through the workspace's
checked disk access (:meth:`DiskWorkspace.list_folder`, :meth:`DiskWorkspace.open_file`),
so neither tool shows what lies behind a symlink out of the workspace. ``grep`` lets
``rg`` (when installed) pick the files that have a match, then formats the matches
itself, so its output is the same either way.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, TextContent
from agentls.ai.abort import AbortError
from agentls.tools.files import is_within
from agentls.tools.read import split_lines
from agentls.tools.ripgrep import files_with_matches, find_rg
from agentls.tools.workspace import DiskWorkspace, FileKind, ToolInputError

DEFAULT_LS_LIMIT = 500
DEFAULT_FIND_LIMIT = 1000
DEFAULT_GREP_LIMIT = 100
GREP_MAX_LINE_LENGTH = 500
GREP_MAX_FILE_BYTES = 5 * 1024 * 1024
BINARY_SNIFF_BYTES = 8192
MAX_OUTPUT_BYTES = 50 * 1024
"""The most text ``find`` and ``grep`` return (Pi's 50 KB); the rest is cut with a note."""

_FIND_RG: Any = object()


# --- glob and gitignore matching -------------------------------------------------------


def glob_to_regex(pattern: str) -> str:
    """A regex (for ``fullmatch``) of a slash-separated glob: ``*``, ``?``, ``[...]``, ``**``, ``\\`` escapes.

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


@dataclass(frozen=True)
class IgnoreRule:
    """One line of a ``.gitignore``: a regex over paths relative to the file's folder."""

    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def parse_gitignore(text: str) -> list[IgnoreRule]:
    """The rules of a ``.gitignore``'s text, in file order.

    Blank lines and ``#`` comments are skipped, ``!`` negates, a trailing ``/``
    matches only directories, a ``/`` at the start or in the middle anchors the
    pattern to the file's folder (otherwise it matches at any depth), and
    ``\\#``, ``\\!`` and ``\\ `` escape.
    """
    rules: list[IgnoreRule] = []
    for raw in text.splitlines():
        line = raw.rstrip(" \t")
        if line.endswith("\\") and len(line) < len(raw):
            line += " "
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate or line.startswith(("\\!", "\\#")):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        line = line.removeprefix("/") if "/" in line else "**/" + line
        rules.append(IgnoreRule(re.compile(glob_to_regex(line), re.DOTALL), negate, dir_only))
    return rules


class GitIgnore:
    """The ``.gitignore`` rules in force in one folder; deeper files come later, so they win.

    Each rule is kept with the folder (a ``/``-terminated prefix, ``""`` for the top)
    of the ``.gitignore`` it came from; the last rule that matches decides.
    """

    def __init__(self, rules: tuple[tuple[str, IgnoreRule], ...] = ()) -> None:
        self._rules = rules

    def extended(self, base: str, text: str) -> GitIgnore:
        """These rules followed by those of a ``.gitignore`` in folder ``base`` (``""`` or ``"a/b/"``)."""
        added = tuple((base, rule) for rule in parse_gitignore(text))
        return GitIgnore(self._rules + added) if added else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative to the top, ``/``-separated) is ignored by the rules."""
        result = False
        for base, rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if not path.startswith(base):
                continue
            if rule.regex.fullmatch(path[len(base) :]):
                result = not rule.negate
        return result


def _read_gitignore(folder: str) -> str | None:
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


def _check(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise AbortError("Operation aborted")


def _ancestor_ignores(workspace: DiskWorkspace, folder: Path) -> tuple[GitIgnore, str]:
    """The rules of the ``.gitignore`` files from the workspace root down to ``folder``'s parent.

    Returns them with the prefix of ``folder`` relative to the root (``""`` when it
    is the root, or outside it, where only its own and nested files count).
    """
    root = str(workspace.root)
    target = str(folder)
    if target == root or not is_within(target, root):
        return GitIgnore(), ""
    relative = Path(os.path.relpath(target, root)).as_posix()
    ignore = GitIgnore()
    base = ""
    current = root
    for part in relative.split("/"):
        text = _read_gitignore(current)
        if text is not None:
            ignore = ignore.extended(base, text)
        base += part + "/"
        current = os.path.join(current, part)
    return ignore, base


def walk_files(
    workspace: DiskWorkspace, folder: Path, signal: AbortSignal | None, buffers: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """Every file under ``folder`` that ``.gitignore`` files keep, as ``(relative path, absolute path)``.

    Skips ``.git`` and ignored folders without entering them; does not follow
    symlinked folders, nor links to files outside the workspace. Each folder is listed
    through :meth:`DiskWorkspace.list_folder`, so a folder swapped for a symlink out
    while the walk runs is skipped, not listed. Open documents of ``buffers`` (absolute
    path -> text) under ``folder`` that are not on disk yet are included. Checks
    ``signal`` before each folder. Blocking: run it in a thread.
    """
    ignore, prefix = _ancestor_ignores(workspace, folder)
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, str, GitIgnore]] = [("", str(folder), ignore)]
    while stack:
        _check(signal)
        relative, absolute, rules = stack.pop()
        try:
            entries = workspace.list_folder(absolute)
        except (OSError, ToolInputError):
            continue
        if any(entry.name == ".gitignore" for entry in entries):
            text = _read_gitignore(absolute)
            if text is not None:
                rules = rules.extended(prefix + relative, text)
        for entry in entries:
            if entry.name == ".git":
                continue
            path, entry_path = relative + entry.name, os.path.join(absolute, entry.name)
            is_dir = entry.is_dir and not entry.is_link
            if not (is_dir or entry.is_file) or rules.ignored(prefix + path, is_dir):
                continue
            if entry.is_link:
                try:
                    workspace.resolve(entry_path)
                except ToolInputError:
                    continue  # a link to a file outside the workspace
            if is_dir:
                stack.append((path + "/", entry_path, rules))
            else:
                found.append((path, entry_path))
    on_disk = {absolute for _, absolute in found}
    for absolute in buffers or {}:
        if absolute not in on_disk and is_within(absolute, str(folder)) and absolute != str(folder):
            found.append((Path(absolute).relative_to(folder).as_posix(), absolute))
    found.sort()
    return found


def glob_matcher(pattern: str) -> re.Pattern[str]:
    """A matcher of relative paths for a user glob: without ``/`` it matches the file name at any depth."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.removeprefix("/")
    if "/" not in pattern:
        pattern = "**/" + pattern
    return re.compile(glob_to_regex(pattern), re.DOTALL)


# --- arguments -------------------------------------------------------------------------


def _args(args: Any, tool: str) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise ToolInputError(f"{tool} needs an object of arguments")
    return args


def _str_arg(args: dict[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name)
    if value is None:
        if default is None:
            raise ToolInputError(f"'{name}' is required and must be a string")
        return default
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be a string, got {value!r}")
    return value


def _int_arg(args: dict[str, Any], name: str, default: int, minimum: int = 1) -> int:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolInputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ToolInputError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


def _bool_arg(args: dict[str, Any], name: str) -> bool:
    value = args.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolInputError(f"{name} must be a boolean, got {value!r}")
    return value


def _disk_kind(workspace: DiskWorkspace, path: str) -> tuple[Path, FileKind]:
    """``path`` resolved and what it is on the disk; :class:`ToolInputError` if it does not exist."""
    resolved = workspace.resolve(path)
    try:
        return resolved, workspace.stat_file(resolved).kind
    except OSError:
        raise ToolInputError(f"Path not found: {path}") from None


def _folder(workspace: DiskWorkspace, path: str) -> Path:
    resolved, kind = _disk_kind(workspace, path)
    if kind != "directory":
        raise ToolInputError(f"Not a directory: {path}")
    return resolved


def _result(text: str, details: dict[str, Any]) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details=details)


def _capped(text: str, details: dict[str, Any], hint: str) -> str:
    """``text`` cut to :data:`MAX_OUTPUT_BYTES` at a line end, with a note (``details.outputTruncated``)."""
    data = text.encode("utf-8")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    kept = data[:MAX_OUTPUT_BYTES].decode("utf-8", errors="ignore")
    kept = kept[: kept.rfind("\n")] if "\n" in kept else kept
    details["outputTruncated"] = True
    return f"{kept}\n\n[Output truncated at {MAX_OUTPUT_BYTES // 1024} KB; {hint}]"


# --- ls --------------------------------------------------------------------------------

LS_DESCRIPTION = (
    "List the contents of a directory. Entries are sorted alphabetically (case-insensitive), with a "
    "trailing '/' for directories; dotfiles are included. "
    f"Output is truncated to {DEFAULT_LS_LIMIT} entries unless a different limit is given."
)

LS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of entries to return (default: {DEFAULT_LS_LIMIT})",
        },
    },
}


def _list_folder(workspace: DiskWorkspace, folder: Path, signal: AbortSignal | None) -> list[str]:
    _check(signal)
    names = [entry.name + "/" if entry.is_dir else entry.name for entry in workspace.list_folder(folder)]
    names.sort(key=lambda name: (name.lower(), name))
    return names


def ls_tool(workspace: DiskWorkspace) -> AgentTool:
    """The ``ls`` tool; ``details`` is ``{path, entries, truncated}`` (``entries`` counts all of them)."""

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        _check(signal)
        args = _args(args, "ls")
        path = _str_arg(args, "path", ".")
        limit = _int_arg(args, "limit", DEFAULT_LS_LIMIT)
        folder = await asyncio.to_thread(_folder, workspace, path)
        try:
            names = await asyncio.to_thread(_list_folder, workspace, folder, signal)
        except OSError as error:
            raise ToolInputError(f"Cannot list {path}: {error.strerror or error}") from error
        _check(signal)
        details = {"path": str(folder), "entries": len(names), "truncated": len(names) > limit}
        if not names:
            return _result("(empty directory)", details)
        text = "\n".join(names[:limit])
        if len(names) > limit:
            text += (
                f"\n\n[{limit} entries limit reached ({len(names)} in total). Use limit={limit * 2} for more]"
            )
        return _result(text, details)

    return AgentTool(
        name="ls", label="ls", description=LS_DESCRIPTION, parameters=LS_PARAMETERS, execute=execute
    )


# --- find ------------------------------------------------------------------------------

FIND_DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory, "
    "sorted. A pattern without '/' matches file names at any depth ('*.md'); one with '/' matches the "
    "relative path ('src/**/*.ts', '**' for any number of directories). Respects .gitignore and skips "
    f".git. Output is truncated to {DEFAULT_FIND_LIMIT} results unless a different limit is given."
)

FIND_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of results (default: {DEFAULT_FIND_LIMIT})",
        },
    },
    "required": ["pattern"],
}


def find_tool(workspace: DiskWorkspace) -> AgentTool:
    """The ``find`` tool; ``details`` is ``{path, matches, truncated}`` (``matches`` counts all of them)."""

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        _check(signal)
        args = _args(args, "find")
        pattern = _str_arg(args, "pattern")
        if not pattern.strip():
            raise ToolInputError("pattern must not be empty")
        path = _str_arg(args, "path", ".")
        limit = _int_arg(args, "limit", DEFAULT_FIND_LIMIT)
        matcher = glob_matcher(pattern)
        buffers = workspace.buffers()

        def search() -> list[str]:
            folder = _folder(workspace, path)
            return [
                rel for rel, _ in walk_files(workspace, folder, signal, buffers) if matcher.fullmatch(rel)
            ]

        matches = await asyncio.to_thread(search)
        _check(signal)
        details = {"path": str(workspace.resolve(path)), "matches": len(matches), "truncated": False}
        if not matches:
            return _result(f"No files found matching pattern {pattern!r}", details)
        text = "\n".join(matches[:limit])
        if len(matches) > limit:
            details["truncated"] = True
            text += (
                f"\n\n[{limit} results limit reached ({len(matches)} in total). "
                f"Use limit={limit * 2} for more, or refine the pattern]"
            )
        return _result(_capped(text, details, "use a narrower path or pattern, or a smaller limit"), details)

    return AgentTool(
        name="find", label="find", description=FIND_DESCRIPTION, parameters=FIND_PARAMETERS, execute=execute
    )


# --- grep ------------------------------------------------------------------------------

GREP_DESCRIPTION = (
    "Search file contents for a pattern (a Python regular expression, or literal text with "
    "literal=true). Returns matching lines as 'path:LINE: text' and context lines as 'path-LINE- text', "
    "with groups separated by '--'; paths are relative to the search directory. Respects .gitignore, "
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


def _file_lines(workspace: DiskWorkspace, absolute: str, buffers: dict[str, str]) -> list[str] | None:
    """The lines of a text file (of its open buffer if it has one), or ``None`` for a binary, too
    large or unreadable one, or one reached through a symlink out of the workspace."""
    if absolute in buffers:
        return split_lines(buffers[absolute].removeprefix("\ufeff"))
    try:
        with workspace.open_file(absolute) as file:
            if os.fstat(file.fileno()).st_size > GREP_MAX_FILE_BYTES:
                return None
            data = file.read()
    except (OSError, ToolInputError):
        return None
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    return split_lines(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))


@dataclass
class _GrepOutcome:
    groups: list[list[str]]
    matches: int
    files: int
    truncated: bool


def _grep(
    workspace: DiskWorkspace,
    files: list[tuple[str, str]],
    buffers: dict[str, str],
    regex: re.Pattern[str],
    context: int,
    limit: int,
    signal: AbortSignal | None,
) -> _GrepOutcome:
    groups: list[list[str]] = []
    matches = files_matched = 0
    truncated = False
    for display, absolute in files:
        _check(signal)
        lines = _file_lines(workspace, absolute, buffers)
        if not lines:
            continue
        hits: list[int] = []
        for number, line in enumerate(lines):
            if regex.search(line):
                if matches == limit:
                    truncated = True
                    break
                hits.append(number)
                matches += 1
        if hits:
            files_matched += 1
            hit_set = set(hits)
            ranges: list[list[int]] = []
            for number in hits:
                start, stop = max(0, number - context), min(len(lines) - 1, number + context)
                if ranges and start <= ranges[-1][1] + 1:
                    ranges[-1][1] = max(ranges[-1][1], stop)
                else:
                    ranges.append([start, stop])
            for start, stop in ranges:
                groups.append(
                    [
                        f"{display}{':' if n in hit_set else '-'}{n + 1}{':' if n in hit_set else '-'} "
                        f"{_cut(lines[n])}"
                        for n in range(start, stop + 1)
                    ]
                )
        if truncated:
            break
    return _GrepOutcome(groups, matches, files_matched, truncated)


def grep_tool(workspace: DiskWorkspace, rg: str | None = _FIND_RG) -> AgentTool:
    """The ``grep`` tool; ``details`` is ``{path, matches, files, truncated}`` (the shown matches).

    ``rg`` is the ripgrep executable used to pick the files with a match (default: the
    one on ``PATH`` when the tool runs; ``None``: search every file in Python).
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        _check(signal)
        args = _args(args, "grep")
        pattern = _str_arg(args, "pattern")
        if pattern == "":
            raise ToolInputError("pattern must not be empty")
        path = _str_arg(args, "path", ".")
        glob = args.get("glob")
        if glob is not None and (not isinstance(glob, str) or not glob.strip()):
            raise ToolInputError(f"glob must be a non-empty string, got {glob!r}")
        ignore_case, literal = _bool_arg(args, "ignoreCase"), _bool_arg(args, "literal")
        context = _int_arg(args, "context", 0, minimum=0)
        limit = _int_arg(args, "limit", DEFAULT_GREP_LIMIT)
        try:
            flags = re.IGNORECASE if ignore_case else 0
            regex = re.compile(re.escape(pattern) if literal else pattern, flags)
        except re.error as error:
            raise ToolInputError(
                f"Invalid regex {pattern!r}: {error}. Fix the pattern, or pass literal=true to search "
                "for the text as is"
            ) from error
        matcher = glob_matcher(glob) if glob is not None else None
        resolved = workspace.resolve(path)
        buffers = workspace.buffers()
        executable = find_rg() if rg is _FIND_RG else rg

        def search() -> _GrepOutcome:
            if str(resolved) in buffers:
                files = [(path, str(resolved))]
            elif _disk_kind(workspace, path)[1] == "directory":
                files = walk_files(workspace, resolved, signal, buffers)
                if matcher is not None:
                    files = [(rel, absolute) for rel, absolute in files if matcher.fullmatch(rel)]
                if executable is not None and files:
                    hits = files_with_matches(
                        executable,
                        str(resolved),
                        pattern,
                        ignore_case=ignore_case,
                        literal=literal,
                        signal=signal,
                    )
                    if hits is not None:
                        files = [
                            (rel, absolute)
                            for rel, absolute in files
                            if absolute in hits or absolute in buffers
                        ]
            else:
                files = [(path, str(resolved))]
            return _grep(workspace, files, buffers, regex, context, limit, signal)

        outcome = await asyncio.to_thread(search)
        _check(signal)
        details = {
            "path": str(resolved),
            "matches": outcome.matches,
            "files": outcome.files,
            "truncated": outcome.truncated,
        }
        if not outcome.groups:
            return _result("No matches found", details)
        separator = "\n--\n" if context > 0 else "\n"
        text = separator.join("\n".join(group) for group in outcome.groups)
        if outcome.truncated:
            text += (
                f"\n\n[{limit} matches limit reached. Use limit={limit * 2} for more, or refine the pattern]"
            )
        return _result(
            _capped(text, details, "use a narrower path, glob or pattern, or less context"), details
        )

    return AgentTool(
        name="grep", label="grep", description=GREP_DESCRIPTION, parameters=GREP_PARAMETERS, execute=execute
    )


def search_tools(workspace: DiskWorkspace) -> list[AgentTool]:
    """``ls``, ``find`` and ``grep`` over ``workspace``."""
    return [ls_tool(workspace), find_tool(workspace), grep_tool(workspace)]
