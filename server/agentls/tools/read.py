"""The ``read`` tool (Pi-compatible name and arguments): a file's text with line numbers, or an image.

Text comes back numbered like ``cat -n`` (the number right-aligned in six
columns, then a tab) so the model can cite lines and continue with ``offset``.
Output is capped at :data:`MAX_LINES` lines or :data:`MAX_BYTES` bytes, whichever
comes first, measured on the numbered text the model receives; a note at the end
says which lines were shown and the ``offset`` to continue from.
"""

from __future__ import annotations

import base64
import itertools
from pathlib import PurePath
from typing import Any, BinaryIO

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, ImageContent, TextContent
from agentls.tools.files import NotRegularFile
from agentls.tools.line_window import CHUNK_BYTES, LineWindow, read_window
from agentls.tools.workspace import ToolInputError, Workspace

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_IMAGE_BYTES = 5 * 1024 * 1024 * 3 // 4
"""Largest image sent: its base64 form stays within the 5 MB per-image limit of the model APIs."""
BINARY_SNIFF_BYTES = 8192

IMAGE_EXTENSIONS: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}

READ_DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (png, jpeg, gif, webp); images are sent "
    "as attachments. Text is returned with line numbers in `cat -n` format: each line starts with its "
    "1-based line number right-aligned in 6 columns, then a tab, then the line's content. The numbers and "
    "the tab are not part of the file: leave them out when you quote or edit its text. Output is "
    f"truncated to {MAX_LINES} lines or {MAX_BYTES // 1024}KB (whichever is hit first). Use offset/limit "
    "for large files. When you need the full file, continue with offset until complete."
)

READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "Line number to start reading from (1-indexed)",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``1.5MB``: the sizes the notes show."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


def detect_image_mime(data: bytes) -> str | None:
    """The MIME type of a png, jpeg, gif or webp image from its magic bytes, else ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


_TEXT_CONTROL_BYTES = frozenset(b"\t\n\r\f\b\x1b")
_NOT_CONTROL_BYTES = bytes(
    byte for byte in range(256) if not (byte < 0x20 or byte == 0x7F) or byte in _TEXT_CONTROL_BYTES
)
"""What :func:`looks_binary` deletes from a sample to count the control bytes left (in C, not per byte)."""


def looks_binary(data: bytes) -> bool:
    """Whether ``data`` is binary: a NUL byte, or mostly control bytes, in its first 8 KB.

    This is the heuristic of git and grep (NUL means binary) with a fallback for
    NUL-free binaries; text in legacy encodings still counts as text.
    """
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\0" in sample:
        return True
    if not sample:
        return False
    control = len(sample.translate(None, _NOT_CONTROL_BYTES))
    return control / len(sample) > 0.3


def split_lines(text: str) -> list[str]:
    """Lines as editors and ``sed`` number them: split on ``\\n``, one ``\\r`` dropped per line.

    A final newline ends the last line rather than starting an empty one, so an
    empty file has no lines. (``str.splitlines`` is not used: it also splits on form
    feeds and Unicode separators, which would shift the line numbers.)
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _lines(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def _int_arg(args: dict[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolInputError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ToolInputError(f"{name} must be at least 1, got {value!r}")
    return int(value)


def _read_error(error: OSError, path: str) -> ToolInputError:
    """An I/O error reworded for the model, naming the path it asked for."""
    if isinstance(error, FileNotFoundError):
        return ToolInputError(f"File not found: {path}")
    if isinstance(error, IsADirectoryError):
        return ToolInputError(f"{path} is a directory, not a file")
    if isinstance(error, PermissionError):
        return ToolInputError(f"Permission denied: {path}")
    if isinstance(error, NotRegularFile):
        return not_regular_error(error.kind, path, "read")
    return ToolInputError(f"Cannot read {path}: {error.strerror or error}")


def not_regular_error(kind: str, path: str, tool: str) -> ToolInputError:
    """The message of every tool that meets a FIFO, device or socket (``kind``) where it needs a file."""
    return ToolInputError(
        f"{path} is a {kind}, not a regular file; {tool} works on regular files only "
        "(opening a FIFO or a device can wait forever). Use bash, with a timeout, if you must use it."
    )


def _rest_size(stream: BinaryIO, seen: int) -> int:
    """The size of a stream of which ``seen`` bytes were read: the rest is counted, not kept."""
    return seen + sum(len(chunk) for chunk in iter(lambda: stream.read(CHUNK_BYTES), b""))


def _image_result(stream: BinaryIO, head: bytes, mime_type: str, path: str, resolved: str) -> AgentToolResult:
    data = head + stream.read(MAX_IMAGE_BYTES + 1 - len(head))
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolInputError(
            f"{path} is a {format_size(_rest_size(stream, len(data)))} image, larger than the "
            f"{format_size(MAX_IMAGE_BYTES)} that can be sent to the model"
        )
    return AgentToolResult(
        content=[
            TextContent(text=f"Read image file [{mime_type}]"),
            ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type),
        ],
        details={"path": resolved, "mimeType": mime_type, "size": len(data)},
    )


def _fit(window: LineWindow) -> list[str]:
    """The window's lines numbered like ``cat -n``, as many as fit in :data:`MAX_BYTES` of numbered text."""
    shown: list[str] = []
    used = 0
    for index, line in enumerate(window.lines, start=window.start + 1):
        numbered = f"{index:>6}\t{line}"
        used += len(numbered.encode("utf-8")) + (1 if shown else 0)
        if used > MAX_BYTES:
            break
        shown.append(numbered)
    return shown


def _text_result(
    window: LineWindow, path: str, resolved: str, offset: int | None, limit: int | None
) -> AgentToolResult:
    total = window.total
    details: dict[str, Any] = {
        "path": resolved,
        "totalLines": total,
        "startLine": None,
        "endLine": None,
        "truncated": False,
        "truncatedBy": None,
        "nextOffset": None,
    }
    if total == 0:
        if window.start > 0:
            raise ToolInputError(f"Offset {offset} is beyond end of file {path} (the file is empty)")
        return AgentToolResult(content=[TextContent(text="[The file is empty.]")], details=details)
    if window.start >= total:
        raise ToolInputError(f"Offset {offset} is beyond end of file {path} ({_lines(total)} total)")

    first = window.start + 1
    shown = _fit(window)
    if not shown:  # the first line alone is over the limit: Pi's pointer to bash instead of a cut line
        size = window.long_line if window.long_line is not None else len(window.lines[0].encode("utf-8"))
        output = (
            f"[Line {first} is {format_size(size)}, exceeds {format_size(MAX_BYTES)} limit. "
            f"Use bash: sed -n '{first}p' {path} | head -c {MAX_BYTES}]"
        )
        details.update(truncated=True, truncatedBy="bytes", nextOffset=first + 1 if first < total else None)
        return AgentToolResult(content=[TextContent(text=output)], details=details)

    wanted = total if limit is None else min(total, window.start + limit)
    last = window.start + len(shown)
    truncated_by = None if last >= wanted else "lines" if len(shown) == MAX_LINES else "bytes"
    next_offset = last + 1 if last < total else None
    output = "\n".join(shown)
    if truncated_by == "lines":
        output += f"\n\n[Showing lines {first}-{last} of {total}. Use offset={next_offset} to continue.]"
    elif truncated_by == "bytes":
        output += (
            f"\n\n[Showing lines {first}-{last} of {total} ({format_size(MAX_BYTES)} limit). "
            f"Use offset={next_offset} to continue.]"
        )
    elif next_offset is not None:
        more = total - last
        noun = "line" if more == 1 else "lines"
        output += f"\n\n[{more} more {noun} in file. Use offset={next_offset} to continue.]"
    details.update(
        startLine=first,
        endLine=last,
        truncated=truncated_by is not None,
        truncatedBy=truncated_by,
        nextOffset=next_offset,
    )
    return AgentToolResult(content=[TextContent(text=output)], details=details)


def _read_stream(
    stream: BinaryIO,
    path: str,
    resolved: str,
    offset: int | None,
    limit: int | None,
    signal: AbortSignal | None,
) -> AgentToolResult:
    """The result for the content in ``stream``: an image, a window of its text, or an error. Blocking."""
    head = stream.read(BINARY_SNIFF_BYTES)
    extension = PurePath(resolved).suffix.lower()
    magic_mime = detect_image_mime(head)
    if extension in IMAGE_EXTENSIONS and magic_mime is not None:
        return _image_result(stream, head, magic_mime, path, resolved)
    if looks_binary(head):
        hint = ""
        if extension in IMAGE_EXTENSIONS:
            hint = f"; its content is not a {extension[1:]} image despite its extension"
        elif magic_mime is not None:
            hint = f"; it looks like a {magic_mime} image but lacks an image file extension"
        raise ToolInputError(
            f"{path} is a binary file ({format_size(_rest_size(stream, len(head)))}), not text or a "
            f"supported image (png, jpeg, gif, webp){hint}"
        )
    start = (offset or 1) - 1
    stop = None if limit is None else start + limit
    chunks = itertools.chain([head], iter(lambda: stream.read(CHUNK_BYTES), b""))
    # MAX_BYTES of raw text holds at least as many lines as MAX_BYTES of numbered text: _fit cuts the rest.
    window = read_window(chunks, start, stop, MAX_LINES, MAX_BYTES, signal)
    return _text_result(window, path, resolved, offset, limit)


def read_tool(workspace: Workspace) -> AgentTool:
    """The ``read`` tool over ``workspace``.

    ``details`` is ``{path, totalLines, startLine, endLine, truncated, truncatedBy,
    nextOffset}`` for text (``path`` resolved; the range is 1-based and inclusive,
    ``None`` for an empty file) and ``{path, mimeType, size}`` for an image.
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        if signal is not None:
            signal.throw_if_aborted()
        if not isinstance(args, dict) or not isinstance(args.get("path"), str):
            raise ToolInputError("read needs a string 'path'")
        path: str = args["path"]
        offset, limit = _int_arg(args, "offset"), _int_arg(args, "limit")
        resolved = workspace.resolve(path)

        def read(stream: BinaryIO) -> AgentToolResult:
            return _read_stream(stream, path, str(resolved), offset, limit, signal)

        try:
            result = await workspace.read_content(resolved, read)
        except OSError as error:
            raise _read_error(error, path) from error
        if signal is not None:
            signal.throw_if_aborted()
        return result

    return AgentTool(
        name="read",
        label="read",
        description=READ_DESCRIPTION,
        parameters=READ_PARAMETERS,
        execute=execute,
    )
