"""What the ``write`` and ``edit`` tools changed, as the session file records it for rewinds.

Each tool call that wrote a file leaves, just before its tool result's entry, a
``custom`` entry ``agentls/fileChanges``::

    {"toolCallId": ..., "changes": [{"path": <absolute>, "before": SNAPSHOT | null, "after": SNAPSHOT}]}

A snapshot is ``{"text": ...}`` (the whole file), or ``{"sha256": ..., "bytes": n}`` for
a file too large to record (more than :data:`MAX_RECORDED_BYTES`) or not UTF-8 text:
such a file can be checked but not put back. ``before: null``: the file did not exist.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_RECORDED_BYTES = 1024 * 1024
"""The largest file (UTF-8 bytes) whose text is recorded; larger ones are recorded as hashes."""


@dataclass(frozen=True)
class Snapshot:
    """A file's content at one moment: its text when recorded, always its hash."""

    sha256: str
    size: int
    text: str | None = None
    """``None``: too large, or not UTF-8 (only the hash was recorded)."""

    @classmethod
    def of(cls, data: bytes) -> Snapshot:
        text = None
        if len(data) <= MAX_RECORDED_BYTES:
            with contextlib.suppress(UnicodeDecodeError):
                text = data.decode("utf-8")
        return cls(hashlib.sha256(data).hexdigest(), len(data), text)

    def wire(self) -> dict[str, Any]:
        return {"text": self.text} if self.text is not None else {"sha256": self.sha256, "bytes": self.size}

    @classmethod
    def parse(cls, value: Any) -> Snapshot:
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            text = value["text"]
            data = text.encode("utf-8", errors="surrogatepass")
            return cls(hashlib.sha256(data).hexdigest(), len(data), text)
        if isinstance(value, dict) and isinstance(value.get("sha256"), str) and _is_size(value.get("bytes")):
            return cls(value["sha256"], value["bytes"])
        raise ValueError("a snapshot is {text: string} or {sha256: string, bytes: integer}")


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class FileChange:
    """One file written by one tool call: before (``None``: it did not exist) and after."""

    path: str
    before: Snapshot | None
    after: Snapshot

    def wire(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "before": self.before.wire() if self.before is not None else None,
            "after": self.after.wire(),
        }


@dataclass(frozen=True)
class FileChanges:
    """The data of an ``agentls/fileChanges`` entry."""

    tool_call_id: str
    changes: tuple[FileChange, ...]

    def wire(self) -> dict[str, Any]:
        return {"toolCallId": self.tool_call_id, "changes": [change.wire() for change in self.changes]}


def parse_file_changes(data: Any) -> FileChanges:
    """An ``agentls/fileChanges`` entry's data read back; ``ValueError`` saying what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("toolCallId"), str):
        raise ValueError("agentls/fileChanges entry without a string toolCallId")
    items = data.get("changes")
    if not isinstance(items, list):
        raise ValueError("agentls/fileChanges entry without a list of changes")
    changes = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            raise ValueError("agentls/fileChanges entry with a change without a string path")
        try:
            before = Snapshot.parse(item["before"]) if item.get("before") is not None else None
            changes.append(FileChange(item["path"], before, Snapshot.parse(item.get("after"))))
        except ValueError as error:
            raise ValueError(f"agentls/fileChanges entry: {error}") from None
    return FileChanges(data["toolCallId"], tuple(changes))


@dataclass
class ChangeLog:
    """The changes of the tool calls still running, until their results are written."""

    _pending: dict[str, list[FileChange]] = field(default_factory=dict)

    def record(self, tool_call_id: str, path: Path, before: bytes | None, after: str) -> None:
        """The tools' recorder: ``path`` held ``before`` (``None``: nothing) and now holds ``after``."""
        change = FileChange(
            str(path),
            Snapshot.of(before) if before is not None else None,
            Snapshot.of(after.encode("utf-8", errors="surrogatepass")),
        )
        self._pending.setdefault(tool_call_id, []).append(change)

    def peek(self, tool_call_id: str) -> list[FileChange]:
        """The changes a call has made so far (still pending)."""
        return list(self._pending.get(tool_call_id, ()))

    def take(self, tool_call_id: str) -> FileChanges | None:
        """The changes of a finished call (its result is about to be written), if it made any."""
        changes = self._pending.pop(tool_call_id, None)
        return FileChanges(tool_call_id, tuple(changes)) if changes else None
