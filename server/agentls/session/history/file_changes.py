"""What the ``write`` and ``edit`` tools changed, as the session file records it for rewinds.

Each file a tool call writes leaves a ``custom`` entry ``agentls/fileChanges``, written
before the file itself is (so before its tool result's entry)::

    {"toolCallId": ..., "changes": [{"path": <absolute>, "before": SNAPSHOT | null, "after": SNAPSHOT}]}

A snapshot is ``{"text": ...}`` (the whole file), or ``{"sha256": ..., "bytes": n, "blob": ...}`` for
a file too large to record (more than :data:`MAX_RECORDED_BYTES`) or not UTF-8 text:
such a file can be checked but not put back. ``before: null``: the file did not exist;
``after: null`` (an ``agent/revertChanges`` that deleted a file, ``"by": "user"``): it no longer does.
The same :class:`FileChange` also describes one path of a workspace snapshot pair
(:mod:`agentls.session.history.checkpoints`), whose snapshots are git blobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.session.history.shadow_repo import blob_id
from agentls.tools.atomic_temp import remove_stale

MAX_RECORDED_BYTES = 1024 * 1024
"""The largest file (UTF-8 bytes) whose text is recorded; larger ones are recorded as hashes."""


@dataclass(frozen=True)
class Fingerprint:
    """What a file holds now, as both kinds of snapshot name content."""

    sha256: str
    blob: str

    @classmethod
    def of(cls, data: bytes) -> Fingerprint:
        return cls(hashlib.sha256(data).hexdigest(), blob_id(data))


@dataclass(frozen=True)
class Snapshot:
    """A file's content at one moment: recorded by ``write``/``edit`` (its text when it could be, always
    its SHA-256), or a blob of a workspace snapshot (its git id; the bytes are read when needed)."""

    sha256: str | None
    size: int | None
    text: str | None = None
    """``None``: too large, or not UTF-8 (only the hash was recorded), or a blob not read yet."""
    blob: str | None = None
    """The git id of the content (known for recorded text too)."""
    mode: int | None = None
    """A blob's git mode (``0o100755``: executable; ``0o120000``: a symlink)."""
    data: bytes | None = None
    """A blob read back that is not UTF-8 text."""

    @classmethod
    def of(cls, data: bytes) -> Snapshot:
        text = None
        if len(data) <= MAX_RECORDED_BYTES:
            with contextlib.suppress(UnicodeDecodeError):
                text = data.decode("utf-8")
        return cls(hashlib.sha256(data).hexdigest(), len(data), text, blob_id(data))

    @classmethod
    def of_blob(cls, blob: str, mode: int | None) -> Snapshot:
        return cls(None, None, blob=blob, mode=mode)

    def read_back(self, data: bytes) -> Snapshot:
        """This blob with its content: as text when it is UTF-8, else as bytes."""
        try:
            return dataclasses.replace(self, size=len(data), text=data.decode("utf-8"))
        except UnicodeDecodeError:
            return dataclasses.replace(self, size=len(data), data=data)

    @property
    def key(self) -> str:
        """Equal for equal contents (as far as the two snapshots can tell)."""
        return self.blob if self.blob is not None else f"sha256:{self.sha256}"

    def matches(self, now: Fingerprint) -> bool:
        return self.blob == now.blob if self.blob is not None else self.sha256 == now.sha256

    @property
    def restorable(self) -> bool:
        return self.text is not None or self.data is not None

    def wire(self) -> dict[str, Any]:
        if self.text is not None:
            return {"text": self.text}
        if self.sha256 is not None:
            blob = {"blob": self.blob} if self.blob is not None else {}
            return {"sha256": self.sha256, "bytes": self.size, **blob}
        return {"blob": self.blob}  # a snapshot's blob that could not be read (pruned)

    @classmethod
    def parse(cls, value: Any) -> Snapshot:
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            text = value["text"]
            data = text.encode("utf-8", errors="surrogatepass")
            return cls(hashlib.sha256(data).hexdigest(), len(data), text, blob_id(data))
        if isinstance(value, dict) and isinstance(value.get("sha256"), str) and _is_size(value.get("bytes")):
            blob = value.get("blob")
            return cls(value["sha256"], value["bytes"], blob=blob if isinstance(blob, str) else None)
        if isinstance(value, dict) and isinstance(value.get("blob"), str):
            return cls.of_blob(value["blob"], None)
        raise ValueError("a snapshot is {text: string} or {sha256: string, bytes: integer}")


def recordable(snapshot: Snapshot | None) -> Snapshot | None:
    """A snapshot as a ``fileChanges`` record holds it: a read blob becomes its text (or hash)."""
    if snapshot is None or snapshot.sha256 is not None:
        return snapshot
    if snapshot.text is not None:
        return Snapshot.of(snapshot.text.encode("utf-8", errors="surrogatepass"))
    return Snapshot.of(snapshot.data) if snapshot.data is not None else snapshot


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class FileChange:
    """One file changed by one action: before and after (``None``: it did not exist)."""

    path: str
    before: Snapshot | None
    after: Snapshot | None

    def wire(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "before": self.before.wire() if self.before is not None else None,
            "after": self.after.wire() if self.after is not None else None,
        }


@dataclass(frozen=True)
class FileChanges:
    """The data of an ``agentls/fileChanges`` entry."""

    tool_call_id: str
    changes: tuple[FileChange, ...]
    by: str | None = None
    """Who made the changes when it was not the tool call (``user``: an ``agent/revertChanges``)."""

    def wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"toolCallId": self.tool_call_id, "changes": [c.wire() for c in self.changes]}
        if self.by is not None:
            wire["by"] = self.by
        return wire


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
            after = Snapshot.parse(item["after"]) if item.get("after") is not None else None
        except ValueError as error:
            raise ValueError(f"agentls/fileChanges entry: {error}") from None
        changes.append(FileChange(item["path"], before, after))
    by = data.get("by")
    return FileChanges(data["toolCallId"], tuple(changes), by if isinstance(by, str) else None)


ChangeStore = Callable[[FileChanges], Awaitable[None]]
"""Writes an ``agentls/fileChanges`` entry to the session file; returns once it is there."""


@dataclass
class ChangeLog:
    """The changes of the tool calls still running, until their results are written.

    With a :attr:`store` (the session's), each change is written to the session file as it
    is recorded, which the tools do *before* they write the file: a server killed between
    the two (kill -9 during the rename) leaves a record of a change that may not be on disk,
    never a change on disk without a record. A rewind finds such a file as it was before and
    leaves it. Without a store, :meth:`take` hands the changes over with the call's result.
    """

    store: ChangeStore | None = None
    _pending: dict[str, list[FileChange]] = field(default_factory=dict)
    _unstored: dict[str, list[FileChange]] = field(default_factory=dict)

    async def record(self, tool_call_id: str, path: Path, before: bytes | None, after: str) -> None:
        """The tools' recorder: ``path`` holds ``before`` (``None``: nothing) and will hold ``after``."""
        change = FileChange(
            str(path),
            Snapshot.of(before) if before is not None else None,
            Snapshot.of(after.encode("utf-8", errors="surrogatepass")),
        )
        if self.store is not None:
            await self.store(FileChanges(tool_call_id, (change,)))
        else:
            self._unstored.setdefault(tool_call_id, []).append(change)
        self._pending.setdefault(tool_call_id, []).append(change)

    def peek(self, tool_call_id: str) -> list[FileChange]:
        """The changes a call has made so far (still pending)."""
        return list(self._pending.get(tool_call_id, ()))

    def take(self, tool_call_id: str) -> FileChanges | None:
        """The changes of a finished call not yet in the session file (its result is about to be
        written), if it made any; the call is then no longer pending."""
        self._pending.pop(tool_call_id, None)
        changes = self._unstored.pop(tool_call_id, None)
        return FileChanges(tool_call_id, tuple(changes)) if changes else None


def changed_folders(entries: Iterable[Any]) -> set[str]:
    """The folders of the files that the ``agentls/fileChanges`` data among ``entries`` name."""
    return {
        os.path.dirname(change.path)
        for data in entries
        if isinstance(data, FileChanges)
        for change in data.changes
    }


async def remove_stale_temp_files(cwd: str, entries: Iterable[Any] = ()) -> list[str]:
    """At a session's start: delete the temporary files that atomic writes of a server no longer
    running left in ``cwd`` and in the folders of the files the session changed (``entries``:
    its entries' data); the paths deleted (see :mod:`agentls.tools.atomic_temp`)."""
    folders = [cwd, *sorted(changed_folders(entries))]
    return await asyncio.to_thread(remove_stale, folders)
