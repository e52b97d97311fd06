"""What the MCP hub needs from the layer above it: the remembered rules and the folder trust question.

The session layer owns both (``PermissionRules`` and ``FolderTrust`` in
:mod:`agentls.session`) and hands them to :class:`~agentls.mcp.hub.McpHub`; the hub sees
them only through these ports, so the MCP layer imports nothing of the session's.
"""

from __future__ import annotations

from typing import Protocol


class TrustRules(Protocol):
    """The "allow always" rules, per folder: where a trusted MCP server is remembered."""

    def allows(self, workspace: str, tool_name: str) -> bool:
        """Whether the rule ``tool_name`` holds in ``workspace`` (a server's: ``mcp:trust:NAME:HASH``)."""
        ...

    async def add(self, workspace: str, tool_name: str) -> None:
        """Remember the rule ``tool_name`` for ``workspace``."""
        ...


class FolderTrustQuestion(Protocol):
    """Whether the user trusts a folder's project files; the hub's trust question asks it too."""

    def decision(self, folder: str) -> bool | None:
        """``True`` trusted, ``False`` not, ``None`` not decided (the user has not been asked)."""
        ...

    def asking(self, folder: str) -> object:
        """Note that a question about ``folder`` is open (until :meth:`answered`)."""
        ...

    async def answered(self, folder: str, trusted: bool | None) -> None:
        """The user's answer (``None``: none came)."""
        ...
