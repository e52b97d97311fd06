"""A session's editor when several clients may be attached to it: each request goes to the right one.

The session's tools see one :class:`~agentls.tools.editor_connection.EditorConnection`. Behind
it, the documents are those of the attached clients, the run's starter first; an edit goes to
the client that has the document open and takes edits (else to the main editor, the first
client that takes edits: a file no client has open is written on disk, or created there);
questions of review go to every attached client that answers them
(:mod:`agentls.fronts.lsp.questions`). With one client, as under ``agentls serve`` on stdio, it
behaves as that client's :class:`~agentls.fronts.lsp.editor.LspEditor`.

Positions are in each editor's own encoding: a client whose encoding is not the session's main
editor's (the first that takes edits) is not asked to edit, so a document open only there is
left to the disk rule (its unsaved text is handled as any editor's).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from agentls.fronts.lsp.peer import Peer
from agentls.fronts.lsp.questions import Questions
from agentls.fronts.lsp.rpc import ClientGone
from agentls.tools.editor_connection import EditOutcome, EditSupport, OpenDocument, PositionEncoding
from agentls.tools.workspace import ToolInputError


class SessionEditor:
    """The :class:`EditorConnection` of one session, over the clients attached to it (module doc)."""

    def __init__(
        self, session_id: str, opener: Peer, attached: Callable[[str], list[Peer]], questions: Questions
    ) -> None:
        self.session_id = session_id
        self._attached = attached
        self._questions = questions
        self._answers_review = opener.client_agent.review_edit
        self._answers_diagnostics = opener.client_agent.diagnostics
        self._encoding: PositionEncoding = opener.documents.encoding
        """The opener's, until a client that takes edits is attached."""

    def _clients(self) -> list[Peer]:
        return self._attached(self.session_id)

    def _main(self) -> Peer | None:
        """The session's main editor: the first attached client (the run's starter first) that takes
        edits, else the first attached client."""
        clients = self._clients()
        editing = [client for client in clients if client.editor.edit_support().apply_edit]
        return (editing or clients or [None])[0]

    def _editors(self) -> list[Peer]:
        """The attached clients whose documents the tools see: those in the main editor's encoding,
        the main editor first."""
        main = self._main()
        if main is None:
            return []
        encoding = main.documents.encoding
        return [main, *(c for c in self._clients() if c is not main and c.documents.encoding == encoding)]

    def _owner(self, uri: str) -> Peer | None:
        """The client that takes an edit of ``uri``: the first that has it open and takes edits, else
        the main editor."""
        wanted = unquote(uri)
        for client in self._editors():
            if client.documents.get(wanted) is not None and client.editor.edit_support().apply_edit:
                return client
        return self._main()

    @property
    def position_encoding(self) -> PositionEncoding:
        main = self._main()
        return main.documents.encoding if main is not None else self._encoding

    def document(self, path: Path) -> OpenDocument | None:
        for client in self._editors():
            document = client.editor.document(path)
            if document is not None:
                return document
        return None

    def documents(self) -> list[OpenDocument]:
        seen: dict[Path, OpenDocument] = {}
        for client in self._editors():
            for document in client.editor.documents():
                seen.setdefault(document.path, document)
        return list(seen.values())

    def edit_support(self) -> EditSupport:
        main = self._main()
        return main.editor.edit_support() if main is not None else EditSupport()

    async def apply_edit(self, edit: dict[str, Any], label: str) -> EditOutcome:
        client = self._owner(_first_uri(edit))
        if client is not None:
            try:
                return await client.editor.apply_edit(edit, label)
            except ClientGone:
                pass
        return EditOutcome(applied=False, failure_reason="the editor is no longer attached to the session")

    async def save_documents(self, uris: list[str]) -> set[str]:
        saved: set[str] = set()
        for uri in uris:
            client = self._owner(uri)
            if client is not None:
                saved |= await client.editor.save_documents([uri])
        return saved

    async def wait_for_version(self, uri: str, newer_than: int, seconds: float) -> bool:
        client = self._owner(uri)
        return True if client is None else await client.editor.wait_for_version(uri, newer_than, seconds)

    @property
    def answers_diagnostics(self) -> bool:
        return self._answers_diagnostics

    async def diagnostics(self, uris: list[str] | None) -> list[dict[str, Any]]:
        for client in self._clients():
            if client.client_agent.diagnostics:
                try:
                    return await client.editor.diagnostics(uris)
                except ClientGone:
                    continue
        raise ToolInputError("no attached editor answers agent/getDiagnostics now")

    @property
    def answers_review(self) -> bool:
        return self._answers_review

    async def review_edit(self, params: dict[str, Any]) -> Any:
        """``agent/reviewEdit`` to every attached client that reviews; the first answer wins."""

        def reviews(client: Peer) -> bool:
            return client.client_agent.review_edit

        async def review(client: Peer) -> Any:
            return await client.editor.review_edit(params)

        def unanswered(reason: str) -> Any:
            return {"outcome": "reject", "reason": reason}

        return await self._questions.ask(self.session_id, reviews, review, unanswered)


def _first_uri(edit: dict[str, Any]) -> str:
    """The document an edit is about (its first), to find the client that has it open."""
    for change in edit.get("documentChanges") or []:
        if isinstance(change, dict):
            uri = change.get("uri") or (change.get("textDocument") or {}).get("uri")
            if isinstance(uri, str):
                return uri
    changes = edit.get("changes")
    if isinstance(changes, dict):
        return next(iter(changes), "")
    return ""
