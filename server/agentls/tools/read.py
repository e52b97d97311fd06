"""The ``read`` tool (Pi-compatible name and arguments): a file's text with line numbers, or an image.

Text comes back numbered like ``cat -n`` (the number right-aligned in six
columns, then a tab) so the model can cite lines and continue with ``offset``.
Output is capped at :data:`MAX_LINES` lines or :data:`MAX_BYTES` bytes, whichever
comes first, measured on the numbered text the model receives; a note at the end
says which lines were shown and the ``offset`` to continue from.
"""

from __future__ import annotations

import base64
from pathlib import PurePath
from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, ImageContent, TextContent
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
    control = sum(1 for byte in sample if (byte < 0x20 or byte == 0x7F) and byte not in _TEXT_CONTROL_BYTES)
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
    return ToolInputError(f"Cannot read {path}: {error.strerror or error}")


def _image_result(data: bytes, mime_type: str, path: str, resolved: str) -> AgentToolResult:
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolInputError(
            f"{path} is a {format_size(len(data))} image, larger than the "
            f"{format_size(MAX_IMAGE_BYTES)} that can be sent to the model"
        )
    return AgentToolResult(
        content=[
            TextContent(text=f"Read image file [{mime_type}]"),
            ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type),
        ],
        details={"path": resolved, "mimeType": mime_type, "size": len(data)},
    )


def _text_result(
    data: bytes, path: str, resolved: str, offset: int | None, limit: int | None
) -> AgentToolResult:
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = split_lines(text)
    total = len(lines)
    start = (offset or 1) - 1
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
        if start > 0:
            raise ToolInputError(f"Offset {offset} is beyond end of file {path} (the file is empty)")
        return AgentToolResult(content=[TextContent(text="[The file is empty.]")], details=details)
    if start >= total:
        raise ToolInputError(f"Offset {offset} is beyond end of file {path} ({_lines(total)} total)")

    stop = total if limit is None else min(total, start + limit)
    shown: list[str] = []
    used = 0
    truncated_by: str | None = None
    long_line_size: int | None = None
    for index in range(start, stop):
        if len(shown) == MAX_LINES:
            truncated_by = "lines"
            break
        numbered = f"{index + 1:>6}\t{lines[index]}"
        cost = len(numbered.encode("utf-8")) + (1 if shown else 0)
        if used + cost > MAX_BYTES:
            truncated_by = "bytes"
            if not shown:
                # A single line longer than the whole budget: show its head rather than nothing.
                long_line_size = len(lines[index].encode("utf-8"))
                shown.append(numbered.encode("utf-8")[:MAX_BYTES].decode("utf-8", errors="ignore"))
            break
        shown.append(numbered)
        used += cost

    first, last = start + 1, start + len(shown)
    next_offset = last + 1 if last < total else None
    output = "\n".join(shown)
    if long_line_size is not None:
        note = (
            f"[Line {first} is {format_size(long_line_size)}, longer than the "
            f"{format_size(MAX_BYTES)} limit; only its beginning is shown."
        )
        output += f"\n\n{note} Use offset={next_offset} to continue.]" if next_offset else f"\n\n{note}]"
    elif truncated_by == "lines":
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
        try:
            data = await workspace.read_bytes(resolved)
        except OSError as error:
            raise _read_error(error, path) from error
        if signal is not None:
            signal.throw_if_aborted()

        extension = PurePath(resolved).suffix.lower()
        magic_mime = detect_image_mime(data)
        if extension in IMAGE_EXTENSIONS and magic_mime is not None:
            return _image_result(data, magic_mime, path, str(resolved))
        if looks_binary(data):
            hint = ""
            if extension in IMAGE_EXTENSIONS:
                hint = f"; its content is not a {extension[1:]} image despite its extension"
            elif magic_mime is not None:
                hint = f"; it looks like a {magic_mime} image but lacks an image file extension"
            raise ToolInputError(
                f"{path} is a binary file ({format_size(len(data))}), not text or a supported image "
                f"(png, jpeg, gif, webp){hint}"
            )
        return _text_result(data, path, str(resolved), offset, limit)

    return AgentTool(
        name="read",
        label="read",
        description=READ_DESCRIPTION,
        parameters=READ_PARAMETERS,
        execute=execute,
    )
