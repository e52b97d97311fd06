"""The ``write`` and ``edit`` tools (Pi-compatible names and arguments).

``write`` creates or replaces a whole file. ``edit`` applies exact text
replacements: every ``oldText`` must match exactly once in the content as it is
before that edit, and either every edit applies or nothing is written.

Both read and write through the :class:`Workspace`: the disk workspace writes
atomically (a temporary file in the same folder, then ``os.replace``); the editor
workspace applies the change through ``workspace/applyEdit`` so that it shows in
the editor's buffer and can be undone there.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, TextContent
from agentls.tools.files import NotRegularFile
from agentls.tools.read import format_size, looks_binary, not_regular_error
from agentls.tools.review import Accepted, EditReviews
from agentls.tools.text_diff import unified_diff
from agentls.tools.workspace import Document, FileStat, ToolInputError, Workspace

ChangeRecorder = Callable[[str, Path, bytes | None, str], Awaitable[None]]
"""``await record(tool_call_id, path, before, after)``: a write is about to land (the record is kept
before the file changes, so a crash in between never leaves a change without one); ``before``
``None``: the file is new."""

BOM = "\ufeff"
MAX_EDIT_BYTES = 10 * 1024 * 1024
"""The largest file ``edit`` changes: it holds the file several times over (bytes, text, the edited
text) and diffs it; larger files are refused before anything is read or written."""

WRITE_DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites it if it does. "
    "Automatically creates parent directories."
)

WRITE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}

EDIT_DESCRIPTION = (
    "Edit a file by replacing exact text. Each edit's oldText must match exactly once in the file "
    "(including whitespace and indentation), as the file is before that edit; edits are applied in order. "
    "If any edit fails, nothing is written. Include enough surrounding context in oldText to make it "
    "unique. Use this for precise, surgical edits; use write to replace a whole file."
)

EDIT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": "Replacements applied in order; each oldText must match exactly once",
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Exact text to find and replace"},
                    "newText": {"type": "string", "description": "Text to replace it with"},
                },
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}


# --- writing ---------------------------------------------------------------------------


_path_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def _path_lock(path: Path) -> asyncio.Lock:
    """One lock per file, shared by ``write`` and ``edit``: parallel calls on a file run one at a time."""
    key = os.path.realpath(path)
    lock = _path_locks.get(key)
    if lock is None:
        lock = asyncio.Lock()
        _path_locks[key] = lock
    return lock


def _write_error(error: OSError, path: str) -> ToolInputError:
    if isinstance(error, IsADirectoryError):
        return ToolInputError(f"{path} is a directory, not a file")
    if isinstance(error, NotADirectoryError):
        return ToolInputError(f"Cannot write {path}: a parent of it is a file, not a folder")
    if isinstance(error, PermissionError):
        return ToolInputError(f"Permission denied: {path}")
    if isinstance(error, NotRegularFile):
        return not_regular_error(error.kind, path, "write")
    return ToolInputError(f"Cannot write {path}: {error.strerror or error}")


@dataclass(frozen=True)
class _Written:
    """How ``write`` and ``edit`` ended: the text that landed, and what their result adds about it."""

    text: str
    note: str
    """`` (note)`` when the write went differently than asked, else ``""``."""
    review: str | None = None
    """What the user's review let land, when it is not the whole change (with its diff)."""


async def _write_checked(
    workspace: Workspace,
    resolved: Path,
    text: str,
    path: str,
    signal: AbortSignal | None,
    base: Document | None = None,
    review: _Review | None = None,
    recorded: Callable[[str], Awaitable[None]] | None = None,
) -> _Written:
    """The last step of ``write`` and ``edit``: an abort check, the review if the policy wants one,
    then the write, errors naming ``path``; ``recorded`` is awaited with what lands just before the write.
    """
    _check_abort(signal)
    report = None
    if review is not None:
        accepted = await review.ask(workspace, resolved, base, text, signal)
        text, report = accepted.text, accepted.report
        _check_abort(signal)
    if recorded is not None:
        await recorded(text)
    try:
        note = await workspace.write_text(resolved, text, base, signal)
    except OSError as error:
        raise _write_error(error, path) from error
    return _Written(text, f" ({note})" if note else "", report)


async def _current(workspace: Workspace, resolved: Path) -> bytes | None:
    """What ``write`` is about to replace (``None`` if it cannot be read: it is recorded as new)."""
    try:
        return (await workspace.read_document(resolved)).data
    except OSError:
        return None


def _recorder(
    record: ChangeRecorder | None, tool_call_id: str, resolved: Path, before: bytes | None
) -> Callable[[str], Awaitable[None]] | None:
    if record is None:
        return None
    return lambda after: record(tool_call_id, resolved, before, after)


class _Review:
    """The review a call's change needs (the permission mode ``review``)."""

    def __init__(self, reviews: EditReviews, tool_call_id: str, tool_name: str) -> None:
        self.reviews = reviews
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name

    @classmethod
    def of(cls, reviews: EditReviews | None, tool_call_id: str, tool_name: str) -> _Review | None:
        return cls(reviews, tool_call_id, tool_name) if reviews and reviews.wants(tool_call_id) else None

    async def ask(
        self,
        workspace: Workspace,
        resolved: Path,
        base: Document | None,
        text: str,
        signal: AbortSignal | None,
    ) -> Accepted:
        if base is None:  # write: the file as it is now, if there is one
            try:
                base = await workspace.read_document(resolved)
            except FileNotFoundError:
                base = None
        old = base.data.decode("utf-8", errors="replace") if base is not None else ""
        return await self.reviews.review(
            tool_call_id=self.tool_call_id,
            tool_name=self.tool_name,
            path=resolved,
            name=_display_name(workspace, resolved),
            old_text=old,
            new_text=text,
            signal=signal,
        )


def _encode(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ToolInputError(f"{what} is not valid Unicode text: {error.reason}") from error


def _check_abort(signal: AbortSignal | None) -> None:
    if signal is not None:
        signal.throw_if_aborted()


# --- write -----------------------------------------------------------------------------


def write_tool(
    workspace: Workspace, reviews: EditReviews | None = None, record: ChangeRecorder | None = None
) -> AgentTool:
    """The ``write`` tool over ``workspace``; ``details`` is ``{path, created, bytes}`` (path resolved).

    ``record`` learns what each write replaced, for rewinds.
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        _check_abort(signal)
        if not isinstance(args, dict) or not isinstance(args.get("path"), str):
            raise ToolInputError("write needs a string 'path'")
        if not isinstance(args.get("content"), str):
            raise ToolInputError("write needs a string 'content'")
        path: str = args["path"]
        content: str = args["content"]
        resolved = workspace.resolve(path)
        size = len(_encode(content, "content"))
        async with _path_lock(resolved):
            try:
                info = await workspace.stat(resolved)
                created = False
                if info.kind == "directory":
                    raise ToolInputError(f"{path} is a directory, not a file")
                if info.kind == "other":
                    raise not_regular_error(info.special or "special file", path, "write")
            except FileNotFoundError:
                created = True
            except NotADirectoryError as error:
                raise _write_error(error, path) from error
            before = None if created or record is None else await _current(workspace, resolved)
            review = _Review.of(reviews, tool_call_id, "write")
            recorded = _recorder(record, tool_call_id, resolved, before)
            written = await _write_checked(
                workspace, resolved, content, path, signal, review=review, recorded=recorded
            )
        how = "new file" if created else "replaced the existing file"
        size = len(written.text.encode("utf-8"))
        text = f"Wrote {size} bytes to {path} ({how}){written.note}"
        return AgentToolResult(
            content=[TextContent(text=f"{text}. {written.review}" if written.review else text)],
            details={"path": str(resolved), "created": created, "bytes": size},
        )

    return AgentTool(
        name="write",
        label="write",
        description=WRITE_DESCRIPTION,
        parameters=WRITE_PARAMETERS,
        execute=execute,
    )


# --- edit ------------------------------------------------------------------------------


def _edits_arg(args: dict[str, Any]) -> list[tuple[str, str]]:
    edits = args.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ToolInputError("edit needs 'edits': a non-empty list of {oldText, newText}")
    result: list[tuple[str, str]] = []
    for number, item in enumerate(edits, start=1):
        where = f"edit {number} of {len(edits)}"
        if not isinstance(item, dict):
            raise ToolInputError(f"{where}: expected an object with oldText and newText")
        old, new = item.get("oldText"), item.get("newText")
        if not isinstance(old, str) or not isinstance(new, str):
            raise ToolInputError(f"{where}: oldText and newText must both be strings")
        result.append((old, new))
    return result


def _prepare_edit_arguments(args: Any) -> Any:
    """Accept the older single-edit shape ``{path, oldText, newText}`` as one edit."""
    if isinstance(args, dict) and "edits" not in args and "oldText" in args and "newText" in args:
        rest = {key: value for key, value in args.items() if key not in ("oldText", "newText")}
        return {**rest, "edits": [{"oldText": args["oldText"], "newText": args["newText"]}]}
    return args


def _count(text: str, needle: str, limit: int = 1000) -> int:
    """Occurrences of ``needle`` in ``text``, overlapping ones included (up to ``limit``)."""
    count, start = 0, text.find(needle)
    while start != -1 and count < limit:
        count += 1
        start = text.find(needle, start + 1)
    return count


def apply_edits(content: str, edits: list[tuple[str, str]], path: str) -> str:
    """``content`` with each ``(oldText, newText)`` applied in order; raises naming the edit that fails."""
    total = len(edits)
    for number, (old, new) in enumerate(edits, start=1):
        where = f"edit {number} of {total}"
        if not old:
            raise ToolInputError(f"{where}: oldText is empty; give the exact text to replace")
        if old == new:
            raise ToolInputError(f"{where}: oldText and newText are identical (no change)")
        index = content.find(old)
        if index == -1:
            raise ToolInputError(
                f"{where}: oldText not found in {path}; it must match the file exactly, "
                "including whitespace and indentation (and reflect the earlier edits)"
            )
        if content.find(old, index + 1) != -1:
            times = _count(content, old)
            raise ToolInputError(
                f"{where}: oldText found {times} times in {path}; add more context to make it unique"
            )
        content = content[:index] + new + content[index + len(old) :]
    return content


def _display_name(workspace: Workspace, resolved: Path) -> str:
    try:
        return resolved.relative_to(workspace.root).as_posix()
    except ValueError:
        return resolved.as_posix()


def _read_error(error: OSError, path: str) -> ToolInputError:
    if isinstance(error, FileNotFoundError):
        return ToolInputError(f"File not found: {path} (use write to create a new file)")
    if isinstance(error, IsADirectoryError):
        return ToolInputError(f"{path} is a directory, not a file")
    if isinstance(error, PermissionError):
        return ToolInputError(f"Permission denied: {path}")
    if isinstance(error, NotRegularFile):
        return not_regular_error(error.kind, path, "edit")
    return ToolInputError(f"Cannot read {path}: {error.strerror or error}")


def _check_kind(info: FileStat, path: str) -> None:
    """Refuse up front a folder, a FIFO or device (never opened), or a file over :data:`MAX_EDIT_BYTES`."""
    if info.kind == "directory":
        raise ToolInputError(f"{path} is a directory, not a file")
    if info.kind == "other":
        raise not_regular_error(info.special or "special file", path, "edit")
    _check_size(info.size, path)


def _check_size(size: int, path: str) -> None:
    if size > MAX_EDIT_BYTES:
        raise ToolInputError(
            f"{path} is {format_size(size)}, larger than the {format_size(MAX_EDIT_BYTES)} that edit "
            "works on; nothing was changed. Change it with bash instead (sed, or a short script)."
        )


def _edited(data: bytes, edits: list[tuple[str, str]], path: str, name: str) -> tuple[str, str]:
    """The file's new text and the diff shown for it. Blocking (a large file's
    matching and diff take a while): run it in a worker thread."""
    if looks_binary(data):
        raise ToolInputError(f"{path} is a binary file; edit works on text files only")
    try:
        original = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ToolInputError(f"{path} is not UTF-8 text; edit works on UTF-8 files only") from error
    bom = BOM if original.startswith(BOM) else ""
    text = original.removeprefix(BOM)
    crlf = _uses_crlf(text)
    if crlf:
        text = text.replace("\r\n", "\n")
        edits = [(old.replace("\r\n", "\n"), new.replace("\r\n", "\n")) for old, new in edits]
    updated = apply_edits(text, edits, path)
    diff = unified_diff(text, updated, name)
    return bom + (updated.replace("\n", "\r\n") if crlf else updated), diff


def _uses_crlf(text: str) -> bool:
    """Whether every line break of ``text`` is CRLF (and there is at least one)."""
    breaks = text.count("\n")
    return breaks > 0 and text.count("\r\n") == breaks


def edit_tool(
    workspace: Workspace, reviews: EditReviews | None = None, record: ChangeRecorder | None = None
) -> AgentTool:
    """The ``edit`` tool over ``workspace``; ``details`` is ``{path, diff, replacements}`` (path resolved).

    A file whose line breaks are all CRLF is matched with its line breaks read as LF
    (so oldText/newText may use either) and written back with CRLF; a UTF-8 BOM is
    kept. Files with mixed line endings are matched exactly as they are.
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        _check_abort(signal)
        if not isinstance(args, dict) or not isinstance(args.get("path"), str):
            raise ToolInputError("edit needs a string 'path'")
        path: str = args["path"]
        edits = _edits_arg(args)
        for old, new in edits:
            _encode(old, "oldText")
            _encode(new, "newText")
        resolved = workspace.resolve(path)
        async with _path_lock(resolved):
            try:
                _check_kind(await workspace.stat(resolved), path)
                document = await workspace.read_document(resolved)
            except OSError as error:
                raise _read_error(error, path) from error
            data = document.data
            _check_size(len(data), path)  # it may have grown since the stat
            name = _display_name(workspace, resolved)
            output, diff = await asyncio.to_thread(_edited, data, edits, path, name)

            review = _Review.of(reviews, tool_call_id, "edit")
            recorded = _recorder(record, tool_call_id, resolved, data)
            written = await _write_checked(
                workspace, resolved, output, path, signal, document, review, recorded
            )
        count = len(edits)
        noun = "replacement" if count == 1 else "replacements"
        if written.review is not None:
            diff = unified_diff(data.decode("utf-8", errors="replace"), written.text, name)
            text = f"Edited {path}{written.note}. {written.review}"
        else:
            text = f"Edited {path} ({count} {noun}){written.note}:\n\n{diff}"
        return AgentToolResult(
            content=[TextContent(text=text)],
            details={"path": str(resolved), "diff": diff, "replacements": count},
        )

    return AgentTool(
        name="edit",
        label="edit",
        description=EDIT_DESCRIPTION,
        parameters=EDIT_PARAMETERS,
        execute=execute,
        prepare_arguments=_prepare_edit_arguments,
    )
