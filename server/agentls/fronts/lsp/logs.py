"""Server logs: stderr always, and ``window/logMessage`` once a client is connected."""

from __future__ import annotations

import logging
from typing import Any

from agentls.ai.secrets import RedactingFilter

LOG_MESSAGE = "window/logMessage"

_LEVELS = {logging.ERROR: 1, logging.WARNING: 2, logging.INFO: 3}
"""LSP's ``MessageType`` of each level (Error, Warning, Info); below them Log (4)."""


class ClientLogHandler(logging.Handler):
    """Forwards log records of level WARNING and above to the client as ``window/logMessage``,
    with credentials redacted."""

    def __init__(self, server: Any) -> None:
        super().__init__(level=logging.WARNING)
        self.addFilter(RedactingFilter())
        self.server = server
        self._emitting = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._emitting or self.server.connection.writer is None:
            return
        if getattr(record, "toClient", True) is False:  # the client has the answer already (rpc.SERVER_ONLY)
            return
        self._emitting = True  # a failure to send must not log (and send) again
        try:
            kind = next((t for level, t in _LEVELS.items() if record.levelno >= level), 4)
            message = {"type": kind, "message": f"agentls: {self.format(record)}"}
            self.server.connection.notify(LOG_MESSAGE, message)
        except Exception:  # logging must never break the server
            pass
        finally:
            self._emitting = False
