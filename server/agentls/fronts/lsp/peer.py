"""What the host of sessions needs of each client connection (:class:`~agentls.fronts.lsp.app.AgentServer`).

A port, so that the modules that route a session's notifications, questions and edits to its
clients (:mod:`~agentls.fronts.lsp.host`, :mod:`~agentls.fronts.lsp.questions`,
:mod:`~agentls.fronts.lsp.session_editor`) do not import the server that imports them.
"""

from __future__ import annotations

from typing import Protocol

from agentls.fronts.lsp.documents import TextDocuments
from agentls.fronts.lsp.editor import LspEditor
from agentls.fronts.lsp.initialize import ClientCapabilities
from agentls.fronts.lsp.progress import ToolProgress
from agentls.fronts.lsp.rpc import Connection
from agentls.protocol import InitializationOptions
from agentls.protocol_methods import ClientAgentCapabilities


class Peer(Protocol):
    """One connected client: its connection, what it said at ``initialize``, its documents and editor."""

    connection: Connection
    options: InitializationOptions
    client_agent: ClientAgentCapabilities
    client_capabilities: ClientCapabilities
    documents: TextDocuments
    editor: LspEditor
    tool_progress: ToolProgress

    def connection_lost(self) -> None:
        """End the connection as at the end of its input."""
        ...
