"""What the tools and the session know of an editor: its open documents, what it can do with
edits, positions in its encoding, LSP's edit shapes, and the :class:`EditorConnection` the LSP
front implements.

Apart from :mod:`agentls.tools.editor` (the workspace that builds the workspace edits), which a
session without an editor, ``agentls acp``'s, does not need.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypedDict

PositionEncoding = Literal["utf-8", "utf-16", "utf-32"]


class Position(TypedDict):
    """LSP's ``Position``: a zero-based line, and a column in the encoding's code units."""

    line: int
    character: int


class Range(TypedDict):
    start: Position
    end: Position


class TextEdit(TypedDict):
    range: Range
    newText: str


WorkspaceEdit = dict[str, Any]
"""LSP's ``WorkspaceEdit`` as sent: ``{changes: {uri: [TextEdit]}}`` or ``{documentChanges: [...]}``."""


@dataclass(frozen=True)
class OpenDocument:
    """A document the editor has open, as last synchronised."""

    uri: str
    path: Path
    text: str
    version: int | None


@dataclass(frozen=True)
class EditSupport:
    """What the client can do with workspace edits."""

    apply_edit: bool = False
    """``workspace.applyEdit``: edits of open documents go through the editor."""
    document_changes: bool = False
    """``workspaceEdit.documentChanges``: edits carry the buffer's version (else the ``changes`` form)."""
    create_files: bool = False
    """``documentChanges`` and ``resourceOperations`` with ``create``: new files are created in the editor."""
    save_documents: bool = False
    """The client answers ``agent/saveDocuments``: it saves the documents after an applied edit."""
    delete_files: bool = False
    """``documentChanges`` and ``resourceOperations`` with ``delete``: files are deleted in the editor."""


@dataclass(frozen=True)
class EditOutcome:
    applied: bool
    failure_reason: str | None = None


class EditorConnection(Protocol):
    """The editor, as the workspace needs it (the server implements it over LSP)."""

    @property
    def position_encoding(self) -> PositionEncoding: ...

    def document(self, path: Path) -> OpenDocument | None:
        """The open document of ``path`` (an absolute path), if the editor has it open."""
        ...

    def documents(self) -> list[OpenDocument]: ...

    def edit_support(self) -> EditSupport: ...

    async def apply_edit(self, edit: WorkspaceEdit, label: str) -> EditOutcome: ...

    async def save_documents(self, uris: list[str]) -> set[str]:
        """Ask the client to save the documents; the URIs it saved."""
        ...

    async def wait_for_version(self, uri: str, newer_than: int, seconds: float) -> bool:
        """Wait until the version is above ``newer_than`` (or it closes); ``False`` after ``seconds``."""
        ...

    @property
    def answers_diagnostics(self) -> bool:
        """Whether :meth:`diagnostics` works (the client answers ``agent/getDiagnostics``)."""
        ...

    async def diagnostics(self, uris: list[str] | None) -> list[dict[str, Any]]:
        """What the editor's language servers report: ``[{uri, items: [Diagnostic]}]``."""
        ...

    @property
    def answers_review(self) -> bool:
        """Whether :meth:`review_edit` works (the client answers ``agent/reviewEdit``)."""
        ...

    async def review_edit(self, params: dict[str, Any]) -> Any:
        """Show a change to the user: ``{outcome: "accept" | "reject", reason?}``."""
        ...


LINE_BREAK = re.compile(r"\r\n|\r|\n")


def code_units(text: str, encoding: PositionEncoding) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def line_starts(text: str) -> list[int]:
    """The offset where each line of ``text`` starts (lines end at ``\n``, ``\r\n`` or ``\r``)."""
    return [0, *(match.end() for match in LINE_BREAK.finditer(text))]


def offset_at(text: str, line: int, character: int, encoding: PositionEncoding = "utf-16") -> int | None:
    """The string offset of an LSP position, ``None`` when the line is past the end.

    A ``character`` past the end of its line means the line's end, as LSP says.
    """
    starts = line_starts(text)
    if line >= len(starts):
        return None
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    content = LINE_BREAK.sub("", text[start:end], count=1) if line + 1 < len(starts) else text[start:end]
    units = 0
    for index, char in enumerate(content):
        if units >= character:
            return start + index
        units += code_units(char, encoding)
    return start + len(content)


def document_key(path: str | Path) -> str:
    """How open documents and tool paths are matched: the absolute, normalised path."""
    return os.path.normpath(os.path.abspath(path))
