"""The errors of the session store, shared by its reader, its writer and the store itself."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SessionNotFound", "SessionStoreError", "UnknownEntry"]


class SessionStoreError(Exception):
    """A session file could not be created, read or written; the message says why and what to do."""


class UnknownEntry(SessionStoreError):
    """The session has no (valid) entry with this id."""


class SessionNotFound(SessionStoreError):
    """There is no session with this id in the store (or the id is not a valid session id)."""

    def __init__(self, session_id: str, folder: Path, reason: str | None = None) -> None:
        self.session_id = session_id
        self.folder = folder
        if reason is None:
            reason = (
                f"No session {session_id!r} in {folder}: there is no {session_id}.jsonl there; "
                "list the stored sessions to see which ids exist"
            )
        super().__init__(reason)
