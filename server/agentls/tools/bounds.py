"""Every tool result within bounds before it is stored or sent: the net under all the tools.

Pi bounds each tool's output in the tool (``bash`` keeps the last 2000 lines or 50 KB and
saves the whole output in a temporary file, ``read`` the first ...), and agentls's own tools
do the same; an MCP tool answers with whatever its server sends. :func:`bound_results` is
the session's ``after_tool_call`` hook that bounds every result, built-in or MCP, error or
not, before the loop sends it (``tool_execution_end``) and the session stores it:

- Text: the text blocks together within :data:`MAX_LINES` lines and :data:`MAX_BYTES`
  bytes (Pi's ``DEFAULT_MAX_LINES``/``DEFAULT_MAX_BYTES``), with :data:`NOTE_ALLOWANCE`
  more for the note a tool adds to output it bounded itself. A longer text keeps its head
  (Pi's ``truncateHead``, except that a first line longer than the budget shows its start)
  and the whole text goes to a file of the session's :class:`OutputFiles`, which a note
  names: the model pages through it with ``read`` and ``offset``, as it does Pi's bash output.
- Images: at most :data:`MAX_IMAGES`, each within :data:`MAX_IMAGE_BASE64` and all within
  :data:`MAX_IMAGES_BASE64`; the others become a line of text saying what was left out.
- ``details`` (sent and stored like the content): within :data:`MAX_DETAILS_CHARS`
  characters of strings and :data:`MAX_DETAILS_DEPTH` levels of nesting; what is beyond is
  replaced by a ``[cut: ...]`` marker (:func:`bound_value`).

The full-output files (these, and ``bash``'s: one folder per session) are readable by
``read`` although they are outside the workspace: :class:`ReadableOutputs` lets the tools
read exactly those files and no others.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from agentls.agent.types import AfterToolCall, AfterToolCallContext, AfterToolCallResult
from agentls.ai import AbortSignal, ImageContent, TextContent
from agentls.tools.output_files import OutputFolder
from agentls.tools.read import format_size
from agentls.tools.shell import MAX_BYTES, MAX_LINES
from agentls.tools.workspace import DiskWorkspace, Workspace

NOTE_ALLOWANCE = 2 * 1024
"""Bytes (and :data:`NOTE_LINES` lines) a text may exceed the bounds by: room for a tool's own
truncation note, so that a result the tool already bounded is left as it is."""
NOTE_LINES = 8
MAX_IMAGES = 20
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
"""The model APIs' limit for one image (base64)."""
MAX_IMAGES_BASE64 = 20 * 1024 * 1024
"""All the images of one result, base64: far below what a session file line may hold."""
MAX_DETAILS_CHARS = 256 * 1024
"""Characters of strings (keys included) kept in a result's ``details``."""
MAX_DETAILS_DEPTH = 64
"""Levels of nesting kept in ``details`` (the session file refuses 100, the wire's encoder 255)."""
_WRITE_SLICE = 1024 * 1024
"""Characters encoded at a time when a full output is written (a huge text is not encoded at once)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class OutputFiles:
    """The full outputs of a session's results, in the session's :class:`OutputFolder`.

    The folder is the one ``bash`` keeps its cut outputs in (the session's process
    tracker's), so :class:`ReadableOutputs` lets ``read`` open both kinds, and the folder
    goes when the session closes (or with the server's, see :mod:`agentls.tools.output_files`).
    """

    def __init__(self, folder: OutputFolder | None = None) -> None:
        self.folder = folder if folder is not None else OutputFolder()

    def holds(self, path: str | Path) -> bool:
        """Whether ``path`` (absolute, as a tool resolved it) is one of the session's full outputs."""
        return self.folder.holds(os.fspath(path))

    async def write(self, name: str, texts: list[str]) -> str:
        """A new file holding ``texts`` joined by newlines; its path."""

        def write() -> str:
            fd, path = self.folder.new_file(f"agentls-{_UNSAFE.sub('_', name)[:60]}-")
            with open(fd, "w", encoding="utf-8", errors="replace", newline="") as file:
                for index, text in enumerate(texts):
                    if index:
                        file.write("\n")
                    for start in range(0, len(text), _WRITE_SLICE):
                        file.write(text[start : start + _WRITE_SLICE])
            return path

        return await asyncio.to_thread(write)

    async def close(self) -> None:
        """The session is over: its full outputs are deleted."""
        await asyncio.to_thread(self.folder.remove)


# --- text ------------------------------------------------------------------------------------


def _within(text: str, max_bytes: int, max_lines: int) -> bool:
    if len(text) > max_bytes or text.count("\n") >= max_lines:  # a character is at least a byte
        return False
    return len(text) * 4 <= max_bytes or len(text.encode("utf-8", "surrogatepass")) <= max_bytes


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _head(text: str) -> tuple[str, int, bool]:
    """The start of ``text`` within the bounds: ``(shown, whole lines shown, first line cut)``.

    Whole lines only, as Pi's ``truncateHead``; a first line longer than :data:`MAX_BYTES`
    shows its first :data:`MAX_BYTES` bytes instead of nothing.
    """
    lines = text[: MAX_BYTES + 1].split("\n", MAX_LINES)[:MAX_LINES]
    shown: list[str] = []
    used = 0
    for line in lines:
        cost = _utf8_size(line) + (1 if shown else 0)
        if used + cost > MAX_BYTES:
            break
        shown.append(line)
        used += cost
    if shown:
        return "\n".join(shown), len(shown), False
    start = lines[0].encode("utf-8", "surrogatepass")[:MAX_BYTES].decode("utf-8", "ignore")
    return start, 0, True


async def _bound_text(texts: list[str], name: str, files: OutputFiles) -> str | None:
    """The text to show for ``texts`` (a result's text blocks) when they are beyond the bounds."""
    whole = texts[0] if len(texts) == 1 else "\n".join(texts)
    if _within(whole, MAX_BYTES + NOTE_ALLOWANCE, MAX_LINES + NOTE_LINES):
        return None
    total_lines = whole.count("\n") + 1
    shown, count, first_cut = _head(whole)
    path = await files.write(name, texts)
    if first_cut:
        end = whole.find("\n")
        end = len(whole) if end < 0 else end
        size = end if whole.isascii() else _utf8_size(whole[:end])  # no copy of a huge ASCII line
        lines = f"{total_lines} line{'' if total_lines == 1 else 's'}"
        note = (
            f"[Output truncated: showing the first {format_size(MAX_BYTES)} of line 1, which is "
            f"{format_size(size)} ({lines} in all). Full output: {path} (search it with grep, or cut "
            "it with bash)]"
        )
    else:
        limit = "" if count == MAX_LINES else f" ({format_size(MAX_BYTES)} limit)"
        note = (
            f"[Output truncated: showing lines 1-{count} of {total_lines}{limit}. Full output: {path} "
            f"(read it with offset={count + 1} to continue)]"
        )
    return f"{shown}\n\n{note}"


# --- images ----------------------------------------------------------------------------------


def _bound_images(content: list[Any]) -> list[Any] | None:
    """``content`` with the images beyond the bounds replaced by a line of text, or ``None`` if all fit."""
    kept = 0
    used = 0
    out: list[Any] = []
    changed = False
    for block in content:
        if not isinstance(block, ImageContent):
            out.append(block)
            continue
        size = len(block.data)
        reason = None
        if size > MAX_IMAGE_BASE64:
            reason = f"more than the {format_size(MAX_IMAGE_BASE64)} an image may be"
        elif kept == MAX_IMAGES:
            reason = f"a result may hold at most {MAX_IMAGES} images"
        elif used + size > MAX_IMAGES_BASE64:
            reason = f"the result's images would be more than {format_size(MAX_IMAGES_BASE64)}"
        if reason is None:
            kept += 1
            used += size
            out.append(block)
        else:
            changed = True
            out.append(
                TextContent(text=f"[image left out: {block.mime_type}, {format_size(size)}; {reason}]")
            )
    return out if changed else None


# --- details ---------------------------------------------------------------------------------


class _Budget:
    def __init__(self, chars: int) -> None:
        self.left = chars
        self.cut = False


def bound_value(value: Any, max_chars: int = MAX_DETAILS_CHARS, max_depth: int = MAX_DETAILS_DEPTH) -> Any:
    """``value`` itself when its strings hold at most ``max_chars`` characters and it nests at most
    ``max_depth`` levels; else a copy cut there: a string's end, the items and keys beyond the
    budget, the levels below ``max_depth``, each replaced by a ``[cut: ...]`` marker.

    Walks at most ``max_depth`` levels and stops at the budget, so however large or deep
    ``value`` is, this costs no more than what it keeps.
    """
    budget = _Budget(max_chars)
    bounded = _cut(value, 0, max_depth, budget)
    return bounded if budget.cut else value


def _cut(value: Any, depth: int, max_depth: int, budget: _Budget) -> Any:
    if isinstance(value, str):
        if len(value) <= budget.left:
            budget.left -= len(value)
            return value
        keep = max(budget.left, 0)
        budget.left, budget.cut = 0, True
        return f"{value[:keep]}…[cut: {len(value) - keep} more characters]"
    if not isinstance(value, dict | list | tuple):
        budget.left -= 8
        return value
    if depth >= max_depth:
        budget.cut = True
        return f"[cut: nested deeper than {max_depth} levels]"
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if budget.left <= 0:
                budget.cut = True
                out["…"] = f"[cut: {len(value) - index} more keys]"
                break
            budget.left -= len(key) if isinstance(key, str) else 8
            out[key] = _cut(item, depth + 1, max_depth, budget)
        return out
    items: list[Any] = []
    for index, item in enumerate(value):
        if budget.left <= 0:
            budget.cut = True
            items.append(f"[cut: {len(value) - index} more items]")
            break
        items.append(_cut(item, depth + 1, max_depth, budget))
    return items


# --- the hook --------------------------------------------------------------------------------


def bound_results(files: OutputFiles) -> AfterToolCall:
    """The session's ``after_tool_call``: every result within the bounds above, the full text in ``files``."""

    async def after_tool_call(
        context: AfterToolCallContext, signal: AbortSignal | None
    ) -> AfterToolCallResult | None:
        result = context.result
        details = result.details
        content = list(result.content or [])
        images = _bound_images(content)
        if images is not None:
            content = images
        texts = [block.text for block in content if isinstance(block, TextContent)]
        shown = await _bound_text(texts, context.tool_call.name, files) if texts else None
        if shown is not None:
            first = next(i for i, block in enumerate(content) if isinstance(block, TextContent))
            content = [
                TextContent(text=shown) if i == first else block
                for i, block in enumerate(content)
                if i == first or not isinstance(block, TextContent)
            ]
        bounded_details = bound_value(details)
        if images is None and shown is None and bounded_details is details:
            return None
        return AfterToolCallResult(
            content=content if images is not None or shown is not None else None,
            details=bounded_details if bounded_details is not details else None,
        )

    return after_tool_call


# --- reading the full outputs ----------------------------------------------------------------


class ReadableOutputs:
    """A :class:`Workspace` that also reads the session's full-output files (:class:`OutputFiles`).

    Those files are outside the workspace, where the tools may not go; reading them (and
    nothing else there) is what the notes that name them ask the model to do. Every
    other use, and every write, goes to the wrapped workspace, which refuses them.
    """

    _READS = frozenset(
        {"resolve", "read_bytes", "read_document", "read_content", "open_file", "stat", "stat_file", "exists"}
    )

    def __init__(self, workspace: Workspace, files: OutputFiles) -> None:
        self._workspace = workspace
        self._files = files
        self._disk = DiskWorkspace("/", allow_outside=True)

    def __getattr__(self, name: str) -> Any:
        inner = getattr(self._workspace, name)
        if name not in self._READS:
            return inner
        disk = getattr(self._disk, name)

        def dispatch(path: str | Path, *args: Any, **kwargs: Any) -> Any:
            chosen: Callable[..., Any] = disk if self._files.holds(os.path.expanduser(path)) else inner
            return chosen(path, *args, **kwargs)

        return dispatch


def with_outputs(workspace: Workspace, files: OutputFiles) -> Workspace:
    """``workspace``, for tools that may also read the session's full outputs (:class:`ReadableOutputs`)."""
    return cast(Workspace, ReadableOutputs(workspace, files))
