"""The one error type the session layer raises; ``kind`` is the protocol's ``data.kind``."""

from __future__ import annotations

from agentls.protocol import ErrorKind


class SessionError(Exception):
    """A request that cannot be carried out; the message says why and what to do."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
