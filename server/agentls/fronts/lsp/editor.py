"""The editor as the tools' workspace sees it: the synchronised documents and the client's edit support.

:class:`~agentls.fronts.lsp.documents.TextDocuments` keeps the text of every document the
client opened; this module looks documents up by path, sends ``workspace/applyEdit`` and
``agent/saveDocuments``, and lets a tool wait for the ``didChange`` that follows an edit it
applied.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

from pydantic import ValidationError

from agentls.fronts.lsp.documents import TextDocument, TextDocuments, uri_to_path
from agentls.fronts.lsp.initialize import ClientCapabilities
from agentls.fronts.lsp.rpc import CancelledByClient, Connection, RpcError
from agentls.protocol import InitializationOptions
from agentls.protocol_methods import (
    ClientAgentCapabilities,
    GetDiagnosticsParams,
    GetDiagnosticsResult,
    ReviewEditResult,
    SaveDocumentsParams,
    SaveDocumentsResult,
)
from agentls.tools.editor_connection import (
    EditOutcome,
    EditSupport,
    OpenDocument,
    PositionEncoding,
    document_key,
)
from agentls.tools.workspace import ToolInputError

logger = logging.getLogger(__name__)


class EditorServer(Protocol):
    """What :class:`LspEditor` reads of the server (``agentls.fronts.lsp.app.AgentServer``)."""

    options: InitializationOptions
    client_agent: ClientAgentCapabilities
    client_capabilities: ClientCapabilities
    connection: Connection
    documents: TextDocuments


class LspEditor:
    """An :class:`~agentls.tools.editor.EditorConnection` over the server's LSP connection."""

    def __init__(self, server: EditorServer) -> None:
        self.server = server
        self._version_waiters: dict[str, list[tuple[int, asyncio.Future[bool]]]] = defaultdict(list)

    @property
    def position_encoding(self) -> PositionEncoding:
        return self.server.documents.encoding

    def _open_documents(self) -> list[tuple[str, TextDocument]]:
        """``(path key, document)`` for every open document that is a file."""
        found = []
        for document in self.server.documents.all():
            path = uri_to_path(document.uri)
            if path:
                found.append((document_key(path), document))
        return found

    def document(self, path: Path) -> OpenDocument | None:
        key = document_key(path)
        for document_path, document in self._open_documents():
            if document_path == key:
                return _open_document(document_path, document)
        return None

    def documents(self) -> list[OpenDocument]:
        return [_open_document(path, document) for path, document in self._open_documents()]

    def edit_support(self) -> EditSupport:
        capabilities = self.server.client_capabilities
        document_changes = capabilities.apply_edit and capabilities.document_changes
        operations = capabilities.resource_operations
        return EditSupport(
            apply_edit=capabilities.apply_edit,
            document_changes=document_changes,
            create_files=document_changes and "create" in operations,
            save_documents=self.server.client_agent.save_documents,
            delete_files=document_changes and "delete" in operations,
        )

    async def apply_edit(self, edit: dict[str, Any], label: str) -> EditOutcome:
        """``workspace/applyEdit``; applied only when the client answers ``applied: true``.

        Any other answer (``null``, ``"maybe"``, an error, a cancellation) is a refusal,
        and a client that does not answer within the configured time refuses too.
        """
        params = {"edit": edit, "label": label}
        seconds = self.server.options.apply_edit_timeout_ms / 1000
        try:
            answer = await self.server.connection.request_client("workspace/applyEdit", params, seconds)
        except TimeoutError:
            return _refused(f"the editor did not answer workspace/applyEdit within {seconds:g} s")
        except CancelledByClient:
            return _refused("the editor cancelled the edit")
        except RpcError as error:
            return _refused(f"the editor answered workspace/applyEdit with an error: {error.message}")
        if isinstance(answer, dict) and answer.get("applied") is True:
            return EditOutcome(applied=True)
        reason = answer.get("failureReason") if isinstance(answer, dict) else None
        if isinstance(reason, str) and reason:
            return _refused(reason)
        return _refused(f"the editor's answer {json.dumps(answer)[:200]} does not say applied: true")

    @property
    def answers_diagnostics(self) -> bool:
        """The client advertised ``experimental.agent.diagnostics``: ``agent/getDiagnostics`` works."""
        return self.server.client_agent.diagnostics

    async def diagnostics(self, uris: list[str] | None) -> list[dict[str, Any]]:
        """``agent/getDiagnostics``: ``[{uri, items}]``; a failed or malformed answer is a tool error."""
        params = GetDiagnosticsParams(uris=uris).model_dump(mode="json", by_alias=True, exclude_none=True)
        seconds = self.server.options.apply_edit_timeout_ms / 1000
        try:
            answer = await self.server.connection.request_client("agent/getDiagnostics", params, seconds)
            result = GetDiagnosticsResult.model_validate(answer)
        except TimeoutError:
            raise ToolInputError(
                f"the editor did not answer agent/getDiagnostics within {seconds:g} s"
            ) from None
        except CancelledByClient:
            raise ToolInputError("the editor cancelled agent/getDiagnostics") from None
        except RpcError as error:
            raise ToolInputError(
                f"the editor answered agent/getDiagnostics with an error: {error.message}"
            ) from None
        except ValidationError as error:
            raise ToolInputError(
                f"the editor's answer to agent/getDiagnostics is malformed: {error}"
            ) from None
        return [entry.model_dump() for entry in result.diagnostics]

    @property
    def answers_review(self) -> bool:
        """The client advertised ``experimental.agent.reviewEdit``: it shows a change before it lands."""
        return self.server.client_agent.review_edit

    async def review_edit(self, params: dict[str, Any]) -> Any:
        """``agent/reviewEdit``, waited for as long as the user takes; a cancelled one is a rejection."""
        try:
            answer = await self.server.connection.request_client("agent/reviewEdit", params)
        except CancelledByClient:
            return {"outcome": "reject", "reason": "the editor closed the review"}
        except RpcError as error:
            raise ToolInputError(
                f"the editor answered agent/reviewEdit with an error: {error.message}"
            ) from None
        try:
            return ReviewEditResult.model_validate(answer).model_dump(exclude_none=True)
        except ValidationError:
            raise ToolInputError(
                f"the editor's answer {json.dumps(answer)[:200]} is not a review outcome"
            ) from None

    async def save_documents(self, uris: list[str]) -> set[str]:
        params = SaveDocumentsParams(uris=uris).model_dump(mode="json", by_alias=True)
        try:
            seconds = self.server.options.apply_edit_timeout_ms / 1000
            answer = await self.server.connection.request_client("agent/saveDocuments", params, seconds)
            return set(SaveDocumentsResult.model_validate(answer or {"saved": []}).saved)
        except Exception as error:  # the server writes the disk itself then
            logger.warning("agent/saveDocuments failed (%s); writing the files from the server", error)
            return set()

    async def wait_for_version(self, uri: str, newer_than: int, seconds: float) -> bool:
        if self._changed(uri, newer_than):
            return True
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        entry = (newer_than, waiter)
        uri = unquote(uri)
        self._version_waiters[uri].append(entry)
        try:
            return await asyncio.wait_for(waiter, seconds)
        except TimeoutError:
            return False
        finally:
            waiters = self._version_waiters.get(uri)
            if waiters and entry in waiters:
                waiters.remove(entry)
                if not waiters:
                    del self._version_waiters[uri]

    def _changed(self, uri: str, newer_than: int) -> bool:
        document = self.server.documents.get(uri)
        return document is None or (document.version is not None and document.version > newer_than)

    def document_changed(self, uri: str) -> None:
        """Called after a ``didChange`` or ``didClose`` was applied: wake the tools waiting for it."""
        uri = unquote(uri)
        for newer_than, waiter in self._version_waiters.get(uri, []):
            if not waiter.done() and self._changed(uri, newer_than):
                waiter.set_result(True)


def _refused(reason: str) -> EditOutcome:
    return EditOutcome(applied=False, failure_reason=reason)


def _open_document(path: str, document: TextDocument) -> OpenDocument:
    return OpenDocument(uri=document.uri, path=Path(path), text=document.text, version=document.version)
