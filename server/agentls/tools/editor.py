"""The editor-backed workspace: the editor's open buffers first, the disk second.

A tool that reads a file the editor has open sees the buffer, unsaved changes
included. A tool that changes a file the editor has open sends a
``workspace/applyEdit`` with a ``TextDocumentEdit`` carrying the buffer's version,
so the change shows in the editor, can be undone there, and is refused by the
editor (not applied over newer typing) if the buffer moved on. A client without
``documentChanges`` (stock Neovim, Helix, Kate...) gets the ``changes`` form, which
carries no version: the version the server holds is checked against the one the tool
read instead, and the edit is refused before it is sent if the buffer moved on. New
files are created with ``CreateFile`` plus an edit when the client can create files;
otherwise they are written to disk and the tool's result says so. Files the editor
does not have open are written to disk directly. After an applied edit the disk must
hold the same content, so that ``bash`` (tests, builds) sees it: the client saves the
documents if it offers to (``agent/saveDocuments``), otherwise the workspace writes
the file itself.

The connection to the editor is the :class:`~agentls.tools.editor_connection.EditorConnection`
protocol, which the server implements over LSP; this module only decides what to send.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from agentls.ai.abort import AbortSignal, unless_aborted
from agentls.tools.editor_connection import (
    LINE_BREAK,
    EditorConnection,
    OpenDocument,
    Position,
    PositionEncoding,
    TextEdit,
    WorkspaceEdit,
    code_units,
    document_key,
)
from agentls.tools.rebase import rebase
from agentls.tools.workspace import DiskWorkspace, Document, FileStat, ToolInputError, consume_buffer

T = TypeVar("T")

VERSION_WAIT_SECONDS = 2.0
"""How long to wait, after an applied edit, for the editor's ``didChange`` of it."""


class EditRejected(ToolInputError):
    """The editor did not apply a workspace edit; nothing was written."""


# --- positions and edits ---------------------------------------------------------------


def lsp_position(text: str, offset: int, encoding: PositionEncoding = "utf-16") -> Position:
    """The LSP position of character ``offset`` of ``text`` (lines end at ``\\n``, ``\\r\\n`` or ``\\r``)."""
    line, line_start = 0, 0
    for match in LINE_BREAK.finditer(text, 0, offset):
        line, line_start = line + 1, match.end()
    return {"line": line, "character": code_units(text[line_start:offset], encoding)}


def minimal_edit(old: str, new: str, encoding: PositionEncoding = "utf-16") -> TextEdit:
    """One :class:`TextEdit` turning ``old`` into ``new``: the changed middle, common ends kept.

    Replacing only what changed keeps the editor's cursor, folds and marks outside of
    it. The range never splits a ``\\r\\n`` pair, which has no LSP position inside it.
    """
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    if start > 0 and old[start - 1] == "\r":
        start -= 1
    suffix = 0
    while suffix < limit - start and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    old_end, new_end = len(old) - suffix, len(new) - suffix
    if 0 < old_end < len(old) and old[old_end - 1] == "\r" and old[old_end] == "\n":
        old_end, new_end = old_end + 1, new_end + 1
    return {
        "range": {"start": lsp_position(old, start, encoding), "end": lsp_position(old, old_end, encoding)},
        "newText": new[start:new_end],
    }


# --- the workspace ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Applied:
    """The text an applied edit left in a buffer whose ``didChange`` has not arrived yet."""

    text: str
    version: int | None


class EditorWorkspace(DiskWorkspace):
    """A :class:`Workspace` over the editor's open documents, falling back to the disk."""

    def __init__(self, root: str | Path, editor: EditorConnection, allow_outside: bool = False) -> None:
        super().__init__(root, allow_outside)
        self.editor = editor
        self._applied: dict[str, _Applied] = {}

    def __repr__(self) -> str:
        return f"EditorWorkspace({str(self.root)!r}, allow_outside={self.allow_outside})"

    def _open(self, path: Path) -> OpenDocument | None:
        """The open document of ``path``, with the text of an applied edit the editor has not echoed yet."""
        document = self.editor.document(path)
        if document is None:
            self._applied.pop(document_key(path), None)
            return None
        return self._with_applied(document)

    def _with_applied(self, document: OpenDocument) -> OpenDocument:
        key = document_key(document.path)
        applied = self._applied.get(key)
        if applied is None:
            return document
        if (
            document.version is not None
            and applied.version is not None
            and document.version > applied.version
        ):
            del self._applied[key]  # the editor has reported a newer buffer
            return document
        return OpenDocument(document.uri, document.path, applied.text, None)

    async def read_document(self, path: str | Path) -> Document:
        resolved = self.resolve(path)
        document = self._open(resolved)
        if document is None:
            return await super().read_document(resolved)
        return Document(document.text.encode("utf-8", errors="surrogatepass"), document.version)

    async def read_content(self, path: str | Path, consume: Callable[[BinaryIO], T]) -> T:
        resolved = self.resolve(path)
        document = self._open(resolved)
        if document is None:
            return await super().read_content(resolved, consume)
        return await consume_buffer(document.text.encode("utf-8", errors="surrogatepass"), consume)

    async def stat(self, path: str | Path) -> FileStat:
        resolved = self.resolve(path)
        document = self._open(resolved)
        if document is None:
            return await super().stat(resolved)
        return FileStat(
            kind="file", size=len(document.text.encode("utf-8", errors="surrogatepass")), mtime=time.time()
        )

    async def exists(self, path: str | Path) -> bool:
        resolved = self.resolve(path)
        return self._open(resolved) is not None or await super().exists(resolved)

    def buffers(self) -> dict[str, str]:
        """The open documents that pass the workspace's boundary check, as any path a tool is given.

        The editor may have open a file outside the workspace, or one through a symlink
        pointing out; ``grep`` and ``find`` must not show those, as ``read`` refuses them.
        """
        return {
            str(doc.path): doc.text
            for doc in map(self._with_applied, self.editor.documents())
            if self._allowed(doc.path)
        }

    def _allowed(self, path: Path) -> bool:
        try:
            self.resolve(path)
        except ToolInputError:
            return False
        return True

    async def write_text(
        self, path: str | Path, text: str, base: Document | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        resolved = self.resolve(path)
        support = self.editor.edit_support()
        document = self._open(resolved)
        unsaved = await self._unsaved(resolved, document, base)
        if not support.apply_edit:  # a headless client: only the disk can take the change
            if unsaved is not None:
                before, disk = unsaved
                merged = rebase(before, text, disk)
                if merged is None:
                    raise EditRejected(
                        f"{self._name(resolved)} has unsaved changes in the editor next to this change, and "
                        "this editor cannot take edits: nothing was written. Ask the user to save or undo "
                        "them, then read the file again."
                    )
                text = merged
            await super().write_text(resolved, text)
            return None
        if document is not None:
            edit, label, uri = self._edit_open(document, text, base, support.document_changes)
        elif not await super().exists(resolved):
            if not support.create_files:
                await super().write_text(resolved, text)
                return NOT_CREATED_IN_EDITOR
            uri = resolved.as_uri()
            edit: WorkspaceEdit | None = {
                "documentChanges": [
                    {"kind": "create", "uri": uri, "options": {"overwrite": False, "ignoreIfExists": True}},
                    {
                        "textDocument": {"uri": uri, "version": None},
                        "edits": [{"range": _WHOLE_NEW_FILE, "newText": text}],
                    },
                ]
            }
            label = f"agentls: create {self._name(resolved)}"
        else:  # not open in the editor: nothing to show or undo there
            await super().write_text(resolved, text)
            return None
        if edit is not None:
            outcome = await unless_aborted(self.editor.apply_edit(edit, label), signal)
            if not outcome.applied:
                reason = outcome.failure_reason or "no reason given"
                raise EditRejected(
                    f"The editor did not apply the change to {self._name(resolved)} ({reason}); nothing was "
                    "written. Read the file again (it may have changed in the editor) and retry."
                )
            await self._after_applied(document, text)
        if unsaved is not None:  # saving the buffer would write the user's unsaved text too
            before, disk = unsaved
            merged = rebase(before, text, disk)
            if merged is None:
                return KEPT_IN_BUFFER
            await super().write_text(resolved, merged)
            return ONLY_THE_CHANGE_SAVED
        saved = (
            await unless_aborted(self.editor.save_documents([uri]), signal)
            if support.save_documents
            else set()
        )
        if uri not in saved:
            await super().write_text(resolved, text)
        return None

    async def delete_file(self, path: str | Path) -> None:
        """Delete through the editor a file it has open (so its undo can bring it back), else on disk."""
        resolved = self.resolve(path)
        document = self._open(resolved)
        if document is not None and self.editor.edit_support().delete_files:
            edit = {"documentChanges": [{"kind": "delete", "uri": document.uri, "options": {}}]}
            outcome = await self.editor.apply_edit(edit, f"agentls: delete {self._name(resolved)}")
            if not outcome.applied:
                raise EditRejected(
                    f"The editor did not delete {self._name(resolved)} "
                    f"({outcome.failure_reason or 'no reason given'})"
                )
        if await super().exists(resolved):  # not open, or the editor left the file on disk
            await super().delete_file(resolved)

    async def _unsaved(
        self, resolved: Path, document: OpenDocument | None, base: Document | None
    ) -> tuple[str, str] | None:
        """``(buffer, disk)`` when an ``edit`` works on a buffer with unsaved text of the user's.

        Only ``edit`` (which passes the ``base`` it read) carries over the user's text;
        ``write`` replaces the whole file with the agent's own content.
        """
        if document is None or base is None:
            return None
        before, _ = _read_as(document, base)
        try:
            disk = (await super().read_document(resolved)).data.decode("utf-8", errors="surrogatepass")
        except OSError:
            return None  # never saved (or unreadable): the buffer is all there is
        return None if disk == before else (before, disk)

    def _edit_open(
        self, document: OpenDocument, text: str, base: Document | None, versioned: bool
    ) -> tuple[WorkspaceEdit | None, str, str]:
        """The edit of an open document: computed from ``base`` when it is that buffer at a known version.

        ``versioned``: the client takes ``documentChanges``, whose version it checks
        itself. The ``changes`` form has none, so the buffer the server holds must still
        be the one the tool read: otherwise the edit is refused here.
        """
        old, version = _read_as(document, base)
        name = self._name(document.path)
        label = f"agentls: edit {name}"
        if not versioned and (version != document.version or old != document.text):
            raise EditRejected(
                f"{name} changed in the editor since it was read (version {version}, now "
                f"{document.version}); nothing was written. Read the file again and retry."
            )
        if old == text:
            return None, label, document.uri
        change = minimal_edit(old, text, self.editor.position_encoding)
        if not versioned:
            return {"changes": {document.uri: [change]}}, label, document.uri
        edit = {"textDocument": {"uri": document.uri, "version": version}, "edits": [change]}
        return {"documentChanges": [edit]}, label, document.uri

    async def _after_applied(self, document: OpenDocument | None, text: str) -> None:
        """Make the next read see ``text`` even if the editor's ``didChange`` for it is late or lost."""
        if document is None or document.version is None:
            return
        if not await self.editor.wait_for_version(document.uri, document.version, VERSION_WAIT_SECONDS):
            self._applied[document_key(document.path)] = _Applied(text, document.version)

    def _name(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def _read_as(document: OpenDocument, base: Document | None) -> tuple[str, int | None]:
    """The buffer text and version a tool's change was computed from: ``base`` when it is that
    buffer at a known version, else the buffer as the server holds it now."""
    if base is not None and base.version is not None:
        return base.data.decode("utf-8", errors="surrogatepass"), base.version
    return document.text, document.version


_WHOLE_NEW_FILE = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}
"""The whole of a file just created: the content replaces it rather than being inserted at its start.

An insert at 0,0 is not enough: Neovim holds a new, empty file as one empty line ending in the
newline it keeps out of the buffer ('eol'), so inserted text ending in a newline left an empty
last line, and saving wrote an extra newline. Line 1 is past the end of an empty file; clients
clamp such an end to the document's end (LSP formatters send it, and Neovim then drops the
buffer's last empty line), VS Code and Helix included, so every client ends up with the text.
"""

ONLY_THE_CHANGE_SAVED = (
    "the editor's buffer also has unsaved changes of the user's: only this change was written to disk, "
    "they stay unsaved"
)
KEPT_IN_BUFFER = (
    "the change is in the editor's buffer only, not on disk: the user's unsaved changes next to it cannot be "
    "told apart from it; it reaches the disk when the user saves (until then bash sees the old file)"
)
NOT_CREATED_IN_EDITOR = (
    "written on disk only: the editor cannot create files through workspace/applyEdit "
    "(no documentChanges with the create resource operation), so it does not show the new file"
)
