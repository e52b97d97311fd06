"""Edits for clients without ``documentChanges``: the ``changes`` form and the server's version check.

The ``changes`` form of a workspace edit carries no document version, so the client
cannot refuse an edit computed from an older buffer. The workspace compares the
version it holds with the one the tool read and refuses before anything is sent.
The editor here is a stand-in for the client's side of the connection.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agentls.tools.editor import EditorWorkspace, EditRejected
from agentls.tools.editor_connection import EditOutcome, EditSupport, OpenDocument, WorkspaceEdit
from agentls.tools.workspace import Document


class Editor:
    """One open document; records the edits it is sent and applies none."""

    def __init__(self, path: Path, text: str, version: int) -> None:
        self.open = OpenDocument(path.as_uri(), path, text, version)
        self.sent: list[WorkspaceEdit] = []

    position_encoding = "utf-16"

    def document(self, path: Path) -> OpenDocument | None:
        return self.open if path == self.open.path else None

    def documents(self) -> list[OpenDocument]:
        return [self.open]

    def edit_support(self) -> EditSupport:
        return EditSupport(apply_edit=True, document_changes=False)

    async def apply_edit(self, edit: WorkspaceEdit, label: str) -> EditOutcome:
        self.sent.append(edit)
        return EditOutcome(applied=True)

    async def save_documents(self, uris: list[str]) -> set[str]:
        return set()

    async def wait_for_version(self, uri: str, newer_than: int, seconds: float) -> bool:
        return True


@pytest.mark.asyncio
async def test_an_edit_from_an_older_buffer_is_refused_before_it_is_sent(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("x = 1\n")
    editor = Editor(target, "x = 1\ny = 2\n", version=3)  # the user typed after the tool read version 2
    workspace = EditorWorkspace(tmp_path, editor)  # type: ignore[arg-type]
    with pytest.raises(EditRejected, match="changed in the editor since it was read"):
        await workspace.write_text(target, "x = 10\n", Document(b"x = 1\n", 2))
    assert editor.sent == [] and target.read_text() == "x = 1\n"

    target.write_text("x = 1\ny = 2\n")  # the user saved: the buffer has nothing unsaved
    await workspace.write_text(target, "x = 10\ny = 2\n", Document(b"x = 1\ny = 2\n", 3))
    [edit] = editor.sent
    assert list(edit) == ["changes"] and list(edit["changes"]) == [target.as_uri()]
    assert target.read_text() == "x = 10\ny = 2\n"  # the client did not save: the server wrote the disk
