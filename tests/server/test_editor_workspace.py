"""The tools work through the editor: open buffers, ``workspace/applyEdit``, saving.

pytest-lsp's client plays the editor. :class:`Editor` keeps the text and version of
the documents it opened, sends ``didOpen``/``didChange`` like an editor, and applies
the server's workspace edits to its buffers the way VS Code does: a
``TextDocumentEdit`` for a version other than the buffer's is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.test_pytest_lsp import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")

converter = get_converter()

SAVED = "a = 1\nb = 2\n\n\n\nz = 26\n"
EDITED = SAVED.replace("b = 2", "b = 'two'")
"""A file on disk and the agent's change to it (line 2), far from the end where the user types."""

_ALL_OPERATIONS = ["create", "rename", "delete"]
CLIENTS: dict[str, dict[str, Any]] = {
    # What stock clients advertise, from their sources: ``workspace.applyEdit``,
    # ``workspace.workspaceEdit`` and ``general.positionEncodings``.
    "neovim-0.10/0.11": {  # runtime/lua/vim/lsp/protocol.lua, make_client_capabilities
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {"resourceOperations": ["rename", "create", "delete"]},
        },
        "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
    },
    "helix-25.07": {  # helix-lsp/src/client.rs
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {
                "documentChanges": True,
                "resourceOperations": _ALL_OPERATIONS,
                "failureHandling": "abort",
                "normalizesLineEndings": False,
            },
        },
        "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
    },
    "zed": {  # crates/lsp/src/lsp.rs, default_initialize_params
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {"documentChanges": True, "resourceOperations": _ALL_OPERATIONS},
        },
        "general": {"positionEncodings": ["utf-16"]},
    },
    "eglot-1.24": {  # eglot.el, eglot-client-capabilities
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {
                "documentChanges": True,
                "resourceOperations": ["create", "delete", "rename"],
                "failureHandling": "abort",
            },
        },
        "general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]},
    },
    "eglot-1.21": {  # documentChanges, no resource operations
        "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
        "general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]},
    },
    "kate-24": {  # addons/lspclient/lspclientserver.cpp: no applyEdit advertised
        "workspace": {"configuration": True, "workspaceFolders": True},
    },
    "sublime-lsp-2.13": {  # plugin/core/sessions.py, get_initialize_params
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {
                "documentChanges": True,
                "resourceOperations": _ALL_OPERATIONS,
                "failureHandling": "abort",
                "normalizesLineEndings": True,
            },
        },
        "general": {"positionEncodings": ["utf-16"]},
    },
    "sublime-lsp-2.11": {  # before resourceOperations
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {
                "documentChanges": True,
                "failureHandling": "abort",
                "normalizesLineEndings": True,
            },
        },
        "general": {"positionEncodings": ["utf-16"]},
    },
}

EDITING = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True, resource_operations=[types.ResourceOperationKind.Create]
        ),
    )
)


def _offset(text: str, line: int, character: int) -> int:
    """The string index of an LSP position (UTF-16 columns), written independently of the server's.

    A line past the end means the end of the text, as editors clamp it.
    """
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
    if line >= len(starts):
        return len(text)
    start = starts[line]
    units = 0
    index = start
    while units < character:
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    return index


class Editor:
    """A minimal editor on top of pytest-lsp's client."""

    def __init__(self, client: LanguageClient, *, accept: bool = True, saves: bool = False) -> None:
        self.client = client
        self.accept = accept
        self.saves = saves
        self.buffers: dict[str, list[Any]] = {}  # uri -> [text, version]
        self.edits: list[Any] = []
        self.save_requests: list[list[str]] = []
        self.before_apply: Callable[[], None] | None = None

        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return self._apply(params)

        def save_documents(params: Any) -> dict[str, Any]:
            return self._save(params)

        def get_diagnostics(params: Any) -> dict[str, Any]:
            self.diagnostics_requests.append(plain(params))
            uris = plain(params).get("uris")
            return {
                "diagnostics": [
                    {"uri": uri, "items": items}
                    for uri, items in self.diagnostics.items()
                    if uris is None or uri in uris
                ]
            }

        async def review_edit(params: Any) -> dict[str, Any]:
            self.reviews.append(plain(params))
            self.review_asked.set()
            return await self.review_answer

        self.reviews: list[dict[str, Any]] = []
        self.review_asked = asyncio.Event()
        self.review_answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        """What the user answers to ``agent/reviewEdit`` (set it; never set: the user never answers)."""
        client.feature("agent/reviewEdit")(review_edit)
        self.diagnostics: dict[str, list[dict[str, Any]]] = {}
        """What the editor's language servers report, by URI (answered to agent/getDiagnostics)."""
        self.diagnostics_requests: list[dict[str, Any]] = []
        client.feature(types.WORKSPACE_APPLY_EDIT)(apply_edit)
        client.feature("agent/saveDocuments")(save_documents)
        client.feature("agent/getDiagnostics")(get_diagnostics)

    def open(self, path: Path, text: str | None = None) -> None:
        text = path.read_text() if text is None else text
        self.buffers[path.as_uri()] = [text, 1]
        item = types.TextDocumentItem(uri=path.as_uri(), language_id="plaintext", version=1, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))

    def type(self, path: Path, text: str) -> None:
        """Change the buffer without saving it (a full-text ``didChange``)."""
        buffer = self.buffers[path.as_uri()]
        buffer[0], buffer[1] = text, buffer[1] + 1
        self._did_change(path.as_uri())

    def text(self, path: Path) -> str:
        return self.buffers[path.as_uri()][0]

    def _did_change(self, uri: str) -> None:
        text, version = self.buffers[uri]
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def _apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if self.before_apply is not None:
            self.before_apply()
        if not self.accept:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the user declined")
        changes = params.edit.document_changes or []
        for change in changes:  # check every version first: all or nothing, as VS Code does
            if isinstance(change, types.TextDocumentEdit) and change.text_document.version is not None:
                buffer = self.buffers.get(change.text_document.uri)
                if buffer is None or buffer[1] != change.text_document.version:
                    return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
        for change in changes:
            if isinstance(change, types.CreateFile):
                Path(change.uri.removeprefix("file://")).touch()
                self.buffers.setdefault(change.uri, ["", 0])
            elif isinstance(change, types.TextDocumentEdit):
                self._edit_buffer(change.text_document.uri, change.edits)
        for uri, edits in (params.edit.changes or {}).items():  # no versions: applied as they come
            self._edit_buffer(uri, edits)
        return types.ApplyWorkspaceEditResult(applied=True)

    def _edit_buffer(self, uri: str, edits: list[Any]) -> None:
        if uri not in self.buffers:  # an edit of a closed file: the editor loads it
            self.buffers[uri] = [Path(uri.removeprefix("file://")).read_text(), 0]
        buffer = self.buffers[uri]
        for edit in edits:
            start = _offset(buffer[0], edit.range.start.line, edit.range.start.character)
            end = _offset(buffer[0], edit.range.end.line, edit.range.end.character)
            buffer[0] = buffer[0][:start] + edit.new_text + buffer[0][end:]
        buffer[1] += 1
        if buffer[1] > 1:
            self._did_change(uri)

    def _save(self, params: Any) -> dict[str, Any]:
        uris = list(plain(params)["uris"])
        self.save_requests.append(uris)
        if not self.saves:
            return {"saved": []}
        for uri in uris:
            Path(uri.removeprefix("file://")).write_text(self.buffers[uri][0])
        return {"saved": uris}


@contextlib.asynccontextmanager
async def editor_session(
    data_dir: Path,
    faux_script: FauxScript,
    capabilities: types.ClientCapabilities,
    *,
    accept: bool = True,
    saves: bool = False,
    options: dict[str, Any] | None = None,
    editor_class: type[Editor] = Editor,
) -> AsyncIterator[tuple[LanguageClient, Editor]]:
    """A server whose client is an :class:`Editor`; ``options`` replace the initialization options."""
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "agentls", "serve"]).start()
    editor = editor_class(client, accept=accept, saves=saves)
    initialization = options or {"dataDir": str(data_dir), "fauxScript": str(faux_script.path)}
    try:
        await within(
            client.initialize_session(
                types.InitializeParams(capabilities=capabilities, initialization_options=initialization)
            )
        )
        yield client, editor
        await within(client.shutdown_session())
    finally:
        await client.stop()


async def run(client: LanguageClient, cwd: Path, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    """Run one prompt whose faux model makes ``calls`` (one per turn); the tool results, in order."""
    created = plain(await within(client.protocol.send_request_async("agent/newSession", {"cwd": str(cwd)})))
    session = created["sessionId"]
    settled = client.protocol.wait_for_notification_async("agent/settled")
    await within(client.protocol.send_request_async("agent/prompt", {"sessionId": session, "text": "go"}))
    assert plain(await within(settled))["stopReason"] == "stop"
    messages = plain(
        await within(client.protocol.send_request_async("agent/getMessages", {"sessionId": session}))
    )
    return [m for m in messages["messages"] if m["role"] == "toolResult"]


def script(faux_script: FauxScript, *calls: dict[str, Any]) -> None:
    faux_script([{"content": [call], "stopReason": "toolUse"} for call in calls] + [{"content": "done"}])


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


async def test_read_grep_and_find_see_unsaved_buffers(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('disk')\n")
    calls = [
        tool_call("r", "read", {"path": "app.py"}),
        tool_call("g", "grep", {"pattern": "buffer"}),
        tool_call("gg", "grep", {"pattern": "buffer", "glob": "*.py"}),
        tool_call("f", "find", {"pattern": "*.py"}),
    ]
    script(faux_script, *calls)
    async with editor_session(data_dir, faux_script, EDITING) as (client, editor):
        editor.open(workspace / "app.py")
        editor.type(workspace / "app.py", "print('buffer')\n")
        editor.open(workspace / "new.py", "x = 'unsaved buffer'\n")  # open, never saved
        editor.open(workspace / "notes.txt", "an unsaved buffer\n")  # the globs leave it out
        read, grep, globbed, find = await run(client, workspace, *calls)
    assert "print('buffer')" in text_of(read) and "disk" not in text_of(read)
    py_lines = ["app.py:1: print('buffer')", "new.py:1: x = 'unsaved buffer'"]
    assert text_of(grep).splitlines() == [*py_lines, "notes.txt:1: an unsaved buffer"]
    assert text_of(globbed).splitlines() == py_lines
    assert text_of(find).splitlines() == ["app.py", "new.py"]
    assert (workspace / "app.py").read_text() == "print('disk')\n"


async def test_edit_of_an_open_document_goes_through_apply_edit_with_its_version(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text(SAVED)
    call = tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "b = 2", "newText": "b = 'two'"}]})
    script(faux_script, call, tool_call("r", "read", {"path": "m.py"}))
    capabilities = types.ClientCapabilities(
        workspace=EDITING.workspace, experimental={"agent": {"saveDocuments": True}}
    )
    async with editor_session(data_dir, faux_script, capabilities, saves=True) as (client, editor):
        editor.open(target)
        editor.type(target, SAVED + "# unsaved\n")  # version 2: the user's unsaved line
        edited, read = await run(client, workspace)
        [params] = editor.edits
        buffer_text, saves = editor.text(target), editor.save_requests
    assert edited["isError"] is False, text_of(edited)
    [change] = params.edit.document_changes
    assert change.text_document.uri == target.as_uri() and change.text_document.version == 2
    [edit] = change.edits
    assert (edit.range.start.line, edit.range.end.line) == (1, 1) and "two" in edit.new_text
    assert params.label == "agentls: edit m.py"
    assert buffer_text == EDITED + "# unsaved\n"
    # Saving the buffer would write the user's unsaved line: only the agent's change reaches the disk.
    assert saves == [] and target.read_text() == EDITED
    assert "only this change was written to disk" in text_of(edited)
    assert "b = 'two'" in text_of(read) and "# unsaved" in text_of(read)


async def test_a_change_next_to_the_users_unsaved_text_stays_in_the_buffer(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text(SAVED)
    call = tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "b = 2", "newText": "b = 'two'"}]})
    script(faux_script, call)
    capabilities = types.ClientCapabilities(
        workspace=EDITING.workspace, experimental={"agent": {"saveDocuments": True}}
    )
    async with editor_session(data_dir, faux_script, capabilities, saves=True) as (client, editor):
        editor.open(target)
        editor.type(target, "a = 1  # the user's\n" + SAVED.removeprefix("a = 1\n"))
        [edited] = await run(client, workspace)
        buffer_text, saves = editor.text(target), editor.save_requests
    assert edited["isError"] is False, text_of(edited)
    assert buffer_text == "a = 1  # the user's\n" + EDITED.removeprefix("a = 1\n")
    assert saves == [] and target.read_text() == SAVED
    assert "the change is in the editor's buffer only, not on disk" in text_of(edited)


async def test_a_rejected_edit_is_an_error_result_and_changes_nothing(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("keep = True\n")
    script(
        faux_script,
        tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "True", "newText": "False"}]}),
    )
    async with editor_session(data_dir, faux_script, EDITING, accept=False) as (client, editor):
        editor.open(target)
        [result] = await run(client, workspace)
        assert len(editor.edits) == 1 and editor.text(target) == "keep = True\n"
    assert result["isError"] is True
    assert "did not apply" in text_of(result) and "the user declined" in text_of(result)
    assert target.read_text() == "keep = True\n"


async def test_write_of_a_new_file_creates_it_through_the_editor_and_the_client_saves(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    script(faux_script, tool_call("w", "write", {"path": "pkg/new.py", "content": "NEW = 1\n"}))
    (workspace / "pkg").mkdir()
    capabilities = types.ClientCapabilities(
        workspace=EDITING.workspace, experimental={"agent": {"saveDocuments": True}}
    )
    async with editor_session(data_dir, faux_script, capabilities, saves=True) as (client, editor):
        [result] = await run(client, workspace)
        [params] = editor.edits
        saves = editor.save_requests
    assert result["isError"] is False, text_of(result)
    create, edit = params.edit.document_changes
    uri = (workspace / "pkg" / "new.py").as_uri()
    assert isinstance(create, types.CreateFile) and create.uri == uri
    assert edit.text_document.version is None and edit.edits[0].new_text == "NEW = 1\n"
    assert saves == [[uri]]
    assert (workspace / "pkg" / "new.py").read_text() == "NEW = 1\n"


async def test_the_server_writes_the_disk_when_the_client_does_not_save(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("x = 1\n")
    script(faux_script, tool_call("w", "write", {"path": "m.py", "content": "x = 2\n"}))
    capabilities = types.ClientCapabilities(
        workspace=EDITING.workspace, experimental={"agent": {"saveDocuments": True}}
    )
    async with editor_session(data_dir, faux_script, capabilities, saves=False) as (client, editor):
        editor.open(target)
        [result] = await run(client, workspace)
        assert editor.text(target) == "x = 2\n" and editor.save_requests == [[target.as_uri()]]
    assert result["isError"] is False
    assert target.read_text() == "x = 2\n"


async def test_an_edit_computed_from_a_stale_buffer_is_refused(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("value = 1\n")
    edit = tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "1", "newText": "2"}]})
    script(faux_script, edit)
    async with editor_session(data_dir, faux_script, EDITING) as (client, editor):
        editor.open(target)
        # The user types between the agent's read and the edit's arrival: the user wins the race.
        editor.before_apply = lambda: editor.type(target, "value = 1  # typed while the agent worked\n")
        [result] = await run(client, workspace)
        assert editor.text(target) == "value = 1  # typed while the agent worked\n"
    assert result["isError"] is True and "version mismatch" in text_of(result)
    assert target.read_text() == "value = 1\n"


async def test_without_apply_edit_the_tools_write_the_disk(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "m.py").write_text("x = 1\n")
    calls = [
        tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "1", "newText": "2"}]}),
        tool_call("w", "write", {"path": "new.txt", "content": "fresh\n"}),
    ]
    script(faux_script, *calls)
    async with editor_session(data_dir, faux_script, types.ClientCapabilities()) as (client, editor):
        edited, written = await run(client, workspace)
        assert editor.edits == []
    assert edited["isError"] is False and written["isError"] is False
    assert (workspace / "m.py").read_text() == "x = 2\n"
    assert (workspace / "new.txt").read_text() == "fresh\n"


async def test_closed_files_are_written_to_disk_even_with_apply_edit(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "closed.py").write_text("x = 1\n")
    script(
        faux_script,
        tool_call("e", "edit", {"path": "closed.py", "edits": [{"oldText": "1", "newText": "2"}]}),
    )
    async with editor_session(data_dir, faux_script, EDITING) as (client, editor):
        [result] = await run(client, workspace)
        assert editor.edits == []
    assert result["isError"] is False
    assert (workspace / "closed.py").read_text() == "x = 2\n"


@pytest.mark.parametrize("name", list(CLIENTS))
async def test_each_stock_clients_capabilities_get_the_edit_form_it_can_apply(
    name: str, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    advertised = CLIENTS[name]
    workspace_edit = advertised["workspace"].get("workspaceEdit", {})
    apply_edit = advertised["workspace"].get("applyEdit", False)
    versioned = apply_edit and workspace_edit.get("documentChanges", False)
    creates = versioned and "create" in workspace_edit.get("resourceOperations", [])
    target = workspace / "m.py"
    target.write_text(SAVED)
    calls = [
        tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "b = 2", "newText": "b = 'two'"}]}),
        tool_call("w", "write", {"path": "new.py", "content": "NEW = 1\n"}),
    ]
    script(faux_script, *calls)
    capabilities = converter.structure(advertised, types.ClientCapabilities)
    async with editor_session(data_dir, faux_script, capabilities) as (client, editor):
        editor.open(target)
        editor.type(target, SAVED + "# unsaved\n")  # the user's unsaved line stays unsaved
        edited, written = await run(client, workspace)
        sent = editor.edits
        buffer_text = editor.text(target)
    assert edited["isError"] is False and written["isError"] is False, (text_of(edited), text_of(written))
    assert (workspace / "new.py").read_text() == "NEW = 1\n"
    assert target.read_text() == EDITED  # only the agent's change reached the disk
    if not apply_edit:  # the disk is the only place the change can go: the buffer is not touched
        assert sent == []
        return
    edit = sent[0].edit
    if versioned:
        [change] = edit.document_changes
        assert edit.changes is None and change.text_document.version == 2
    else:
        assert edit.document_changes is None and list(edit.changes) == [target.as_uri()]
    assert buffer_text == EDITED + "# unsaved\n"
    if creates:
        assert isinstance(sent[1].edit.document_changes[0], types.CreateFile)
        assert "written on disk only" not in text_of(written)
    else:
        assert len(sent) == 1 and "written on disk only" in text_of(written)
