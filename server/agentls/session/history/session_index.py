"""What a session list shows of each session file, kept until the file changes.

A summary takes a reading of the whole file (the title, the model and the count are those of
the branch its last entry is on), which for 1,000 stored sessions took most of a second. So
:class:`SessionIndex` keeps each file's summary with the file's stat key (device, inode, size,
modification and change times): a session file only grows, so while the key is the same the
summary is the file's; a file with another key (appended to, by this server or another,
replaced, restored) is read again, one the folder no longer has is dropped. The summaries live
in memory and in ``<sessions>/index.json``, so that a fresh server (each ``agentls sessions``)
reads only what changed since. The file is a cache: written whole (temporary file, then
rename) after a listing that changed it, by whichever server listed last, and ignored (then
rewritten) when it is damaged, of another version, or unreadable.

A file that is no readable session keeps its reason, and a summary the warnings about its
damaged lines: each listing logs them again, as one that read the file would.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, Strict

from agentls.ai.local_files import read_json_file, write_json_file
from agentls.session.history.entries import MAX_TIMESTAMP, Count, Text
from agentls.session.history.store_errors import SessionNotFound, SessionStoreError

__all__ = ["INDEX_FILE", "SessionIndex", "SessionSummary"]

logger = logging.getLogger(__name__)

INDEX_FILE = "index.json"
"""The index's name in the sessions folder (no ``.jsonl``: never taken for a session)."""

INDEX_VERSION = 1
"""Raise it when what a summary holds or how it is made changes: older entries are then read again."""

MAX_INDEX_BYTES = 64 * 1024 * 1024
"""A larger index is ignored (about 200,000 sessions)."""

SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


@dataclass(frozen=True)
class SessionSummary:
    """What a session list shows of one stored session."""

    session_id: str
    cwd: str
    title: str | None
    """The session's name if it has one, else the text of the first user message on one line, at
    most 80 characters; ``None`` if neither."""
    created_at: int
    updated_at: int
    message_count: int
    model: tuple[str, str] | None


Reader: TypeAlias = Callable[[Path, str], tuple[SessionSummary, list[str]]]
"""Reads a session file's summary and the warnings about its damaged lines (logging them);
raises :class:`SessionStoreError` for a file that is no readable session."""

Key: TypeAlias = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class _Indexed:
    key: Key
    summary: SessionSummary | None
    """``None``: the file is no readable session, ``warnings`` holds why."""
    warnings: tuple[str, ...]


def _key(status: os.stat_result) -> Key:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


# --- the file --------------------------------------------------------------------------

_Int: TypeAlias = Annotated[int, Strict()]
_Time: TypeAlias = Annotated[int, Strict(), Field(ge=0, le=MAX_TIMESTAMP)]


class _SummaryLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    cwd: Text
    title: Text | None
    created_at: _Time
    updated_at: _Time
    message_count: Count
    model: tuple[Text, Text] | None


_SUMMARY_FIELDS = tuple(_SummaryLine.model_fields)
"""What the file keeps of a summary: all but the session id (the entry's key)."""


class _EntryLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: tuple[_Int, _Int, _Int, _Int, _Int]
    summary: _SummaryLine | None
    warnings: list[Text]


class _IndexFile(BaseModel):
    version: _Int
    sessions: dict[str, _EntryLine]


def _read_index(path: Path) -> dict[str, _Indexed]:
    try:
        data = _IndexFile.model_validate(read_json_file(path, limit=MAX_INDEX_BYTES))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:  # a ValidationError is a ValueError
        logger.info("the session index %s is not usable (%s); it is made again", path, str(error)[:200])
        return {}
    if data.version != INDEX_VERSION:
        return {}
    entries = {}
    for session_id, line in data.sessions.items():
        summary = line.summary
        if summary is None and not line.warnings:
            continue  # says neither what the file holds nor why it is unreadable: read it again
        entries[session_id] = _Indexed(
            key=line.key,
            summary=SessionSummary(session_id=session_id, **summary.model_dump()) if summary else None,
            warnings=tuple(line.warnings),
        )
    return entries


def _entry_line(entry: _Indexed) -> dict[str, object]:
    summary = entry.summary
    kept = None if summary is None else {name: getattr(summary, name) for name in _SUMMARY_FIELDS}
    return {"key": entry.key, "summary": kept, "warnings": entry.warnings}


def _write_index(path: Path, entries: dict[str, _Indexed]) -> None:
    data = {"version": INDEX_VERSION, "sessions": {sid: _entry_line(e) for sid, e in entries.items()}}
    try:
        write_json_file(path, data, indent=None)  # ASCII: a lone surrogate too
    except OSError as error:
        logger.info("cannot write the session index %s: %s", path, error)


# --- the index -------------------------------------------------------------------------


class SessionIndex:
    """The summaries of the session files in ``folder``, each read again only when its file changed.

    Thread-safe (listings run in worker threads); one listing at a time.
    """

    def __init__(self, folder: Path, read: Reader) -> None:
        self.folder = folder
        self.path = folder / INDEX_FILE
        self._read = read
        self._entries: dict[str, _Indexed] | None = None
        """By session id; read from :attr:`path` at the first listing."""
        self._lock = threading.Lock()

    def summaries(self) -> list[SessionSummary]:
        """Every readable session's summary, in no particular order; unreadable files are logged."""
        with self._lock, _no_cycle_collection():
            files = self._scan()
            if files is None:
                return []
            known = self._entries if self._entries is not None else _read_index(self.path)
            entries: dict[str, _Indexed] = {}
            changed = False
            for session_id, (path, key) in files.items():
                entry = known.get(session_id)
                if entry is not None and entry.key == key:
                    _log_again(session_id, entry)
                else:
                    entry = self._summarize(path, session_id, key)
                    changed = True
                if entry is not None:
                    entries[session_id] = entry
            if changed or entries.keys() != known.keys():
                _write_index(self.path, entries)
            self._entries = entries
            return [entry.summary for entry in entries.values() if entry.summary is not None]

    def _scan(self) -> dict[str, tuple[Path, Key]] | None:
        """The session files of the folder with their keys (``None``: the folder cannot be listed)."""
        files: dict[str, tuple[Path, Key]] = {}
        try:
            with os.scandir(self.folder) as listing:
                for item in listing:
                    session_id, suffix = os.path.splitext(item.name)
                    if suffix != ".jsonl" or not SESSION_ID.fullmatch(session_id):
                        continue
                    with contextlib.suppress(FileNotFoundError):  # deleted since the folder was listed
                        files[session_id] = (Path(item.path), _key(os.stat(item.path)))
        except FileNotFoundError:
            return None  # no session stored yet
        except OSError as error:
            logger.warning("cannot list session folder %s: %s", self.folder, error)
            return None
        return files

    def _summarize(self, path: Path, session_id: str, key: Key) -> _Indexed | None:
        """The file read now (stat before reading: a change after the key makes the next key differ)."""
        try:
            summary, warnings = self._read(path, session_id)
        except SessionNotFound:
            return None  # deleted since the folder was listed
        except SessionStoreError as error:
            logger.warning("skipping a session: %s", error)
            return _Indexed(key, None, (str(error),))
        return _Indexed(key, summary, tuple(warnings))


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector held back while a listing reads (then as it was).

    Reading a file allocates a container for every JSON object and array of every line, nearly all
    freed at once, and makes no cycles; the collector still ran 14 times during a first listing of
    1,000 sessions, once over every object of the server: 20-30 ms of its 0.17 s. It is held back
    for the whole process (the collector is one), for the time a listing takes; reference counting
    goes on freeing, and a cycle made meanwhile waits for the next collection.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _log_again(session_id: str, entry: _Indexed) -> None:
    """What reading the file logged, as reading it again would."""
    if entry.summary is None:
        logger.warning("skipping a session: %s", entry.warnings[0])
        return
    for warning in entry.warnings:
        logger.warning("session %s: %s", session_id, warning)
