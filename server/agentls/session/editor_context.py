"""Editor context: what the user attached to a prompt (a selection, a file, diagnostics), as one message.

The attachments become one ``custom`` message (``customType: "editorContext"``) that
goes into the transcript just before the user's message. Its content is what the model
reads: per attachment a header with the path (relative to the session's folder), the
lines and the language, then the text with line numbers. Text comes through the
session's workspace, so an open document's buffer (unsaved text included) wins over
the disk, and paths keep to the workspace's boundary. Its ``details`` are for panels,
which show the attachments as chips on the user's message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from agentls.ai import CustomMessage
from agentls.protocol import ContextAttachment, DiagnosticsContext, FileContext, SelectionContext
from agentls.session.errors import SessionError
from agentls.session.messages import custom_message
from agentls.tools.diagnostics import DiagnosticsSource, diagnostic_lines, display_path, uri_path
from agentls.tools.editor_connection import PositionEncoding, line_starts, offset_at
from agentls.tools.files import NotRegularFile
from agentls.tools.line_window import CHUNK_BYTES, LineWindow, read_window
from agentls.tools.workspace import ToolInputError, Workspace

EDITOR_CONTEXT = "editorContext"
MAX_LINES = 2000
MAX_BYTES = 50 * 1024
"""An attachment's text beyond these (the ``read`` tool's limits) is cut, with a note."""

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascriptreact", ".ts": "typescript", ".tsx": "typescriptreact", ".json": "json",
    ".md": "markdown", ".rs": "rust", ".go": "go", ".java": "java", ".kt": "kotlin", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby",
    ".php": "php", ".swift": "swift", ".lua": "lua", ".sh": "shellscript", ".bash": "shellscript",
    ".zsh": "shellscript", ".html": "html", ".css": "css", ".scss": "scss", ".yaml": "yaml",
    ".yml": "yaml", ".toml": "toml", ".xml": "xml", ".sql": "sql", ".vim": "vim", ".el": "elisp",
}  # fmt: skip


@dataclass
class _Rendered:
    text: str
    details: dict[str, Any]


class EditorContext:
    """Turns a request's ``context`` into its ``editorContext`` message, for one session."""

    def __init__(
        self, workspace: Workspace, encoding: PositionEncoding, diagnostics: DiagnosticsSource | None
    ) -> None:
        self.workspace = workspace
        self.encoding = encoding
        self.diagnostics = diagnostics
        """The editor's diagnostics; ``None`` when the client does not answer ``agent/getDiagnostics``."""

    async def message(self, attachments: list[ContextAttachment]) -> CustomMessage:
        """The message; bad attachments are ``invalidParams`` naming the item (``context[1]: ...``)."""
        parts: list[_Rendered] = []
        for index, attachment in enumerate(attachments):
            try:
                parts.append(await self._render(attachment))
            except ToolInputError as error:
                raise SessionError("invalidParams", f"context[{index}]: {error}") from None
        text = "The user attached context from the editor:\n\n" + "\n\n".join(p.text for p in parts)
        return custom_message(
            EDITOR_CONTEXT, text, display=True, details={"attachments": [p.details for p in parts]}
        )

    async def _render(self, attachment: ContextAttachment) -> _Rendered:
        if isinstance(attachment, DiagnosticsContext):
            return await self._diagnostics(attachment)
        path = self._path(attachment.uri)
        name = display_path(self.workspace, path)
        language = LANGUAGES.get(path.suffix.lower())
        details: dict[str, Any] = {"type": attachment.type, "uri": attachment.uri, "path": name}
        if language:
            details["language"] = language
        attributes = f'path="{name}"' + (f' language="{language}"' if language else "")
        if isinstance(attachment, FileContext):
            if attachment.text is not None:
                body, shown, total = _numbered(attachment.text, 1)
            else:
                body, shown, total = await self._file_head(path)
            details.update(lines=total, truncated=shown < total)
            return _Rendered(f"<file {attributes}>\n{_cut(body, shown, total, 1, name)}</file>", details)
        return self._selection(attachment, await self._text(path), name, attributes, details)

    def _selection(
        self, attachment: SelectionContext, text: str, name: str, attributes: str, details: dict[str, Any]
    ) -> _Rendered:
        start, end = attachment.range.start, attachment.range.end
        begin = offset_at(text, start.line, start.character, self.encoding)
        finish = offset_at(text, end.line, end.character, self.encoding)
        if begin is None or finish is None:
            lines = len(line_starts(text))
            raise ToolInputError(f"the range is outside {name}, which has {lines} lines")
        if finish < begin:
            raise ToolInputError("the range ends before it starts")
        first = start.line + 1
        last = end.line if end.character == 0 and end.line > start.line else end.line + 1
        body, shown, total = _numbered(text[begin:finish], first)
        details.update(
            range=attachment.range.model_dump(),
            startLine=first,
            endLine=last,
            lines=total,
            truncated=shown < total,
        )
        lines = f"{first}-{last}" if last > first else str(first)
        cut = _cut(body, shown, total, first, name)
        return _Rendered(f'<selection {attributes} lines="{lines}">\n{cut}</selection>', details)

    async def _diagnostics(self, attachment: DiagnosticsContext) -> _Rendered:
        if self.diagnostics is None:
            raise ToolInputError(
                "the editor does not answer agent/getDiagnostics "
                "(capabilities.experimental.agent.diagnostics)"
            )
        uris = None
        name = "the workspace"
        details: dict[str, Any] = {"type": "diagnostics"}
        if attachment.uri is not None:
            path = self._path(attachment.uri)
            uris = [path.as_uri()]
            name = display_path(self.workspace, path)
            details.update(uri=attachment.uri, path=name)
        problems = diagnostic_lines(self.workspace, await self.diagnostics(uris))
        body, shown, total = _numbered("\n".join(problems), None)
        details.update(count=len(problems), lines=total, truncated=shown < total)
        listed = _cut(body, shown, total, None, name) if problems else f"No problems reported for {name}.\n"
        where = f' path="{name}"' if uris else ""
        return _Rendered(f"<diagnostics{where}>\n{listed}</diagnostics>", details)

    def _path(self, uri: str) -> Path:
        path = uri_path(uri)
        return self.workspace.resolve(path)

    async def _text(self, path: Path) -> str:
        try:
            document = await self.workspace.read_document(path)
        except OSError as error:
            raise self._read_error(path, error) from None
        return document.data.decode("utf-8", errors="replace")

    async def _file_head(self, path: Path) -> tuple[str, int, int]:
        """The file's numbered head within the limits, reading a large file in chunks, never all at once."""

        def head(stream: BinaryIO) -> LineWindow:
            return read_window(iter(lambda: stream.read(CHUNK_BYTES), b""), 0, None, MAX_LINES, MAX_BYTES)

        try:
            window = await self.workspace.read_content(path, head)
        except OSError as error:
            raise self._read_error(path, error) from None
        if window.long_line is not None:
            return "", 0, window.total
        body, shown = _number(window.lines or [""], 1)
        return body, shown, max(window.total, 1)

    def _read_error(self, path: Path, error: OSError) -> ToolInputError:
        name = display_path(self.workspace, path)
        if isinstance(error, FileNotFoundError):
            return ToolInputError(f"{name} does not exist")
        if isinstance(error, IsADirectoryError):
            return ToolInputError(f"{name} is a folder")
        if isinstance(error, NotRegularFile):
            return ToolInputError(f"{name} is a {error.kind}, not a regular file; only files can be attached")
        return ToolInputError(f"cannot read {name}: {error}")


def _numbered(text: str, first: int | None) -> tuple[str, int, int]:
    """``text`` numbered from line ``first`` (``None``: no numbers), cut at the limits; lines shown, lines."""
    lines = text.splitlines() or [""]
    return (*_number(lines, first), len(lines))


def _number(lines: list[str], first: int | None) -> tuple[str, int]:
    """``lines`` numbered from ``first`` (``None``: no numbers), cut at the limits; the lines shown."""
    out: list[str] = []
    size = 0
    for index, line in enumerate(lines):
        numbered = f"{first + index}: {line}\n" if first is not None else f"{line}\n"
        size += len(numbered.encode("utf-8", errors="replace"))
        if index >= MAX_LINES or size > MAX_BYTES:
            return "".join(out), index
        out.append(numbered)
    return "".join(out), len(lines)


def _cut(body: str, shown: int, total: int, first: int | None, name: str) -> str:
    if shown >= total:
        return body
    if first is None:
        return body + f"[cut: {shown} of {total} lines shown]\n"
    if shown == 0:
        return f"[cut: line {first} alone is over {MAX_BYTES // 1024}KB; read {name} with the read tool]\n"
    return body + (
        f"[cut: lines {first}-{first + shown - 1} of {first}-{first + total - 1} shown; "
        f"read {name} with the read tool for the rest]\n"
    )
