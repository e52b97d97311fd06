"""The one error type the session layer raises; ``kind`` is the protocol's ``data.kind``."""

from __future__ import annotations

from typing import Any

from agentls.protocol import ErrorKind


class SessionError(Exception):
    """A request that cannot be carried out; the message says why and what to do."""

    def __init__(self, kind: ErrorKind, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.data = data or {}
        """What the error's ``data`` carries besides ``kind`` (``fileConflict``'s ``files``)."""
