"""Session persistence: one append-only JSONL file per session.

``<root>/sessions/<sessionId>.jsonl`` holds a header line, then one entry per line::

    {"type":"session","version":1,"id":...,"cwd":...,"createdAt":<ms>,"systemPrompt":...,
     "model":{"provider":...,"id":...} | null,"thinkingLevel":...}
    {"type":"message","id":...,"parentId":...,"timestamp":<ms>,"message":{...wire message...}}
    {"type":"model_change","id":...,"parentId":...,"timestamp":<ms>,"provider":...,"modelId":...}
    {"type":"thinking_level_change","id":...,"parentId":...,"timestamp":<ms>,"thinkingLevel":...}
    {"type":"system_prompt_change","id":...,"parentId":...,"timestamp":<ms>,"systemPrompt":...}
    {"type":"session_info","id":...,"parentId":...,"timestamp":<ms>,"name":...}
    {"type":"compaction","id":...,"parentId":...,"timestamp":<ms>,"summary":...,"firstKeptEntryId":...,
     "tokensBefore":<n>,"details":{"readFiles":[...],"modifiedFiles":[...]},"usage":{...}?}

Every entry names the entry before it in ``parentId`` (``null`` for the first). A
``compaction`` entry (Pi's ``CompactionEntry``) replaces, for the model, the messages
before the message entry ``firstKeptEntryId`` with its summary; they stay in the file
and in :attr:`LoadedSession.transcript` (see :mod:`agentls.session.history.transcript`).

The file in parts: :mod:`~agentls.session.history.session_lines` turns an entry into one line and a
line back into JSON, :mod:`~agentls.session.history.entries` reads that JSON as a typed entry, and
:mod:`~agentls.session.history.session_writer` appends (crash safety: a file is never rewritten, and
each returned append is in the file). This module reads a whole file back and keeps the folder.

Damaged files: every value read from a file is checked for type and range before use,
and the JSON is parsed strictly (no ``NaN``/``Infinity``, no number out of float range,
nesting only as deep as the stack allows, lines of at most
:data:`~agentls.session.history.session_lines.MAX_LINE_BYTES`). An entry line that fails is skipped
with a warning naming the file and line; a file whose header fails (or that is not a
regular file) raises :class:`SessionStoreError`, which :meth:`SessionStore.list` turns into
a warning and a skipped session; a file cut short by a crash ends in a partial line, which
loading skips and :meth:`SessionStore.open_writer` fences off with a newline before
appending. The writer holds itself to the same rules, so that whatever it writes loads back.
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentls.ai.local_files import parse_strict_json, write_all
from agentls.ai.types import AgentMessage
from agentls.session.history.entries import (
    SessionInfoEntry,
    is_timestamp,
    message_envelope,
    parent_in,
    plain_custom_node,
    read_entry,
)
from agentls.session.history.header import FORMAT_VERSION, SessionHeader, header_to_wire, read_header
from agentls.session.history.session_index import SESSION_ID, SessionIndex, SessionSummary
from agentls.session.history.session_lines import (
    BINARY,
    LineValues,
    Unreadable,
    brief,
    cannot_read,
    encode_line,
    exact_value,
    open_session_file,
    read_lines,
)
from agentls.session.history.session_summary import Unchecked, UncheckedMessage, summarize
from agentls.session.history.session_writer import SessionWriter, finish_writing
from agentls.session.history.store_errors import SessionNotFound, SessionStoreError, UnknownEntry
from agentls.session.history.transcript import Transcript
from agentls.session.history.tree import BranchSettings, Node, SessionTree, settings_on

__all__ = [
    "FORMAT_VERSION",
    "LoadedSession",
    "SessionHeader",
    "SessionNotFound",
    "SessionStore",
    "SessionStoreError",
    "SessionSummary",
    "SessionWriter",
    "UnknownEntry",
    "finish_writing",
    "new_session_id",
]

logger = logging.getLogger(__name__)

_READ_LATER = ("user", "assistant")
"""The roles of the unchecked messages a summary may read (its title, its model)."""

# --- data ------------------------------------------------------------------------------


@dataclass
class LoadedSession:
    """A session read back from its file.

    ``model``, ``thinking_level`` and ``system_prompt`` are the header's values with the
    entries on the leaf's branch applied (:func:`~agentls.session.history.tree.settings_on`), as Pi's.
    """

    header: SessionHeader
    tree: SessionTree
    """Every entry; its leaf is the file's last entry."""
    transcript: Transcript
    """The messages of the branch the leaf is on, each with its entry id, and the compactions in place."""
    model: tuple[str, str] | None
    thinking_level: str
    system_prompt: str
    updated_at: int
    """The newest timestamp in the file (the header's ``createdAt`` if it has no entries)."""
    name: str | None = None
    """The display name of the latest ``session_info`` entry (Pi's ``/name``); ``None``: none, or cleared."""
    warnings: list[str] = field(default_factory=list)
    """One line per skipped (truncated or malformed) line of the file."""

    @property
    def messages(self) -> list[AgentMessage]:
        """The whole history (a compaction's summary where it happened)."""
        return self.transcript.messages()


def new_session_id() -> str:
    """A fresh random session id (32 hex digits)."""
    return uuid.uuid4().hex


def _normalize_cwd(cwd: str) -> str:
    return str(Path(cwd).expanduser().resolve())


def header_settings(header: SessionHeader) -> BranchSettings:
    """What the session started with, before any entry."""
    return BranchSettings(header.model, header.thinking_level, header.system_prompt)


# --- reading ---------------------------------------------------------------------------


@dataclass
class _Entries:
    """A session file read entry by entry."""

    header: SessionHeader
    tree: SessionTree
    name: str | None
    """The display name of the latest ``session_info`` entry."""
    updated_at: int
    warnings: list[str]
    ends_with_newline: bool


@dataclass
class _ReadResult:
    loaded: LoadedSession
    ends_with_newline: bool


def _read_header(path: Path, first: tuple[int, bytes, Any] | None) -> SessionHeader:
    """The header in ``first``, the first of a file's :class:`LineValues`."""

    def broken(reason: str) -> SessionStoreError:
        return SessionStoreError(
            f"{path} is not a readable session file (line 1: {reason}). The file is damaged or is not "
            "an agentls session; move it out of the sessions folder or delete the session"
        )

    if first is None or first[0] != 1:  # no line, or a blank one
        raise broken("there is no header")
    _, content, value = first
    if type(value) is Unreadable:
        raise broken(value.reason)
    try:
        data = exact_value(content, value)
    except ValueError as error:
        raise broken(str(error)) from None
    if not isinstance(data, dict) or data.get("type") != "session":
        raise broken('it is not a {"type":"session"} header')
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        raise SessionStoreError(
            f"{path} was written by a newer agentls (session format version {version}, this one "
            f"reads version {FORMAT_VERSION}); upgrade agentls to open it"
        )
    if version != FORMAT_VERSION:
        raise broken(f"the header has version {brief(version)}, expected {FORMAT_VERSION}")
    try:
        return read_header(data)
    except ValueError as error:
        raise broken(str(error)) from None


def _read_entries(path: Path, session_id: str, unchecked: Unchecked | None = None) -> _Entries:
    """Read a session file, skipping every line that is not a valid entry (``warnings`` says which).

    With ``unchecked``, a message entry that only its message could make invalid is taken without
    checking the message (:func:`~agentls.session.history.entries.message_envelope`), from its line as
    ``orjson`` reads it: its node has no message, and ``unchecked`` gets the JSON of each user and
    assistant message so taken, by entry id (see :mod:`~agentls.session.history.session_summary`).
    """
    with open_session_file(path, session_id) as file:
        try:
            return _replay(path, session_id, LineValues(file), unchecked)
        except OSError as error:
            raise cannot_read(path, error) from error


def _read_session_file(path: Path, session_id: str) -> _ReadResult:
    """Read a session file, skipping (with a warning) every line that is not a valid entry."""
    read = _read_entries(path, session_id)
    _log(session_id, read.warnings)
    tree = read.tree
    settings = settings_on(tree.branch(), header_settings(read.header))
    loaded = LoadedSession(
        header=read.header,
        tree=tree,
        transcript=tree.transcript(tree.leaf_id),
        model=settings.model,
        thinking_level=settings.thinking_level,
        system_prompt=settings.system_prompt,
        updated_at=read.updated_at,
        name=read.name,
        warnings=read.warnings,
    )
    return _ReadResult(loaded, read.ends_with_newline)


def _log(session_id: str, warnings: list[str]) -> None:
    for warning in warnings:
        logger.warning("session %s: %s", session_id, warning)


def _replay(path: Path, session_id: str, lines: LineValues, unchecked: Unchecked | None) -> _Entries:
    """The session in ``lines``: the header, then every valid entry applied in order."""
    values = iter(lines)
    header = _read_header(path, next(values, None))
    warnings: list[str] = []

    def skip(number: int, reason: str) -> None:
        warnings.append(f"{path} line {number}: skipped ({reason})")

    if header.id != session_id:
        warnings.append(f"{path}: the header names session {brief(header.id)}; using the file name's id")

    tree = SessionTree()
    name: str | None = None
    updated_at = header.created_at
    for number, content, value in values:
        if type(value) is Unreadable:
            skip(number, value.reason if value.ended else "truncated: the write of this line did not finish")
            continue
        envelope = None
        try:
            # a message entry's envelope is the same in orjson's reading; any other entry is read exactly
            if unchecked is None or (envelope := message_envelope(value, tree)) is None:
                data = exact_value(content, value)
        except ValueError as error:
            skip(number, str(error))
            continue
        if envelope is not None:
            entry_id, parent_id, timestamp, message = envelope
            if message["role"] in _READ_LATER:
                unchecked[entry_id] = message
            node = Node(entry_id, parent_in(parent_id, tree), "message", int(timestamp))
        elif (node := plain_custom_node(data, tree)) is not None:
            timestamp = node.timestamp
        else:
            try:
                entry = read_entry(data, tree)
            except ValueError as error:
                skip(number, str(error))
                continue
            if isinstance(entry, SessionInfoEntry):
                name = entry.display_name
            node = entry.to_node(parent_in(entry.parent_id, tree))
            timestamp = entry.timestamp
        tree.add(node)
        if timestamp > updated_at:
            updated_at = int(timestamp)
    return _Entries(header, tree, name, updated_at, warnings, lines.ends_with_newline)


def _same_folder(cwd: str, wanted: str) -> bool:
    """Whether a stored ``cwd`` is the resolved folder ``wanted``, as it is or once resolved itself."""
    if cwd == wanted:
        return True
    try:
        return _normalize_cwd(cwd) == wanted
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13) names no folder
        return False


def _summary(path: Path, session_id: str) -> tuple[SessionSummary, list[str]]:
    """What a session list shows of the file, and the warnings about its damaged lines (logged).

    Read with most messages unchecked (:mod:`~agentls.session.history.session_summary`), or as
    loading reads the file when a message the summary shows something of is damaged.
    """
    unchecked: Unchecked = {}
    read = _read_entries(path, session_id, unchecked)
    try:
        summary = summarize(session_id, read.header, read.tree, read.name, read.updated_at, unchecked)
    except UncheckedMessage:
        read = _read_entries(path, session_id)
        summary = summarize(session_id, read.header, read.tree, read.name, read.updated_at, {})
    _log(session_id, read.warnings)
    return summary, read.warnings


# --- store -----------------------------------------------------------------------------


class SessionStore:
    """The session files under ``<root>/sessions``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.folder = self.root / "sessions"
        self.index = SessionIndex(self.folder, _summary)

    def _path(self, session_id: Any) -> Path:
        """The file of ``session_id``; rejects anything but a plain id, so no path leaves the folder."""
        if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
            raise SessionNotFound(
                str(session_id),
                self.folder,
                f"No session {session_id!r} in {self.folder}: a session id is 1 to 128 letters, "
                "digits, '_' or '-'; use an id from the session list",
            )
        return self.folder / f"{session_id}.jsonl"

    def exists(self, session_id: str) -> bool:
        return self._path(session_id).is_file()

    def create(self, header: SessionHeader, entries: bytes = b"") -> SessionWriter:
        """Start the file of a new session with ``header`` (then ``entries``, whole lines); its writer.

        ``header.cwd`` is stored as an absolute, resolved path (``list(cwd)`` compares against it).
        """
        path = self._path(header.id)
        if not is_timestamp(header.created_at):  # the reader would refuse the file
            raise ValueError(f"created_at {header.created_at!r} is not a time in milliseconds")
        wire = header_to_wire(replace(header, cwd=_normalize_cwd(header.cwd)))
        header_line = encode_line(wire, f"the header of session {header.id}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as error:  # FileExistsError too: a file where the folder should be
            raise self._cannot_create(self.folder, error) from error
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | BINARY, 0o600)
        except FileExistsError:
            raise SessionStoreError(
                f"Session {header.id} already exists in {self.folder}; create a new session with "
                "an id from new_session_id(), or use open_writer to continue this one"
            ) from None
        except OSError as error:
            raise self._cannot_create(path, error) from error
        try:
            write_all(fd, header_line + entries)
        except OSError as error:
            path.unlink(missing_ok=True)
            raise SessionStoreError(
                f"Cannot write session file {path} ({error}); free disk space or check permissions"
            ) from error
        finally:
            os.close(fd)
        return SessionWriter(path, header.id, SessionTree(), header_settings(header))

    def _cannot_create(self, path: Path, error: OSError) -> SessionStoreError:
        return SessionStoreError(
            f"Cannot create {path} ({error}); check that {self.root} is a writable folder "
            "or point AGENTLS_DATA_DIR at one"
        )

    def fork(self, session_id: str, entry_id: str, new_id: str, created_at: int) -> None:
        """A new session ``new_id``: ``session_id``'s settings and the entries on the path to ``entry_id``.

        The entries are copied with their ids and timestamps, so the new session's history
        is that path; its header records where it came from. Raises :class:`UnknownEntry`
        when ``entry_id`` is not a valid entry of the session.
        """
        path = self._path(session_id)
        result = _read_session_file(path, session_id)
        tree = result.loaded.tree
        if entry_id not in tree:
            raise UnknownEntry(f"Session {session_id} has no entry {entry_id!r}")
        parents = {node.id: node.parent_id for node in tree.path(entry_id)}
        kept: list[bytes] = []
        with open_session_file(path, session_id) as file:
            for line in read_lines(file):
                if line.number == 1 or line.content is None:
                    continue
                try:
                    entry = parse_strict_json(line.content.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    continue  # a damaged line: skipped when read, so not copied
                if not isinstance(entry, dict) or entry.get("id") not in parents:
                    continue
                # the parent as read (a damaged parent's place taken by the entry before it)
                entry["parentId"] = parents.pop(entry["id"])
                kept.append(encode_line(entry, f"entry {entry['id']} of session {session_id}"))
                if entry["id"] == entry_id:
                    break
        header = replace(
            result.loaded.header, id=new_id, created_at=created_at, forked_from=(session_id, entry_id)
        )
        self.create(header, b"".join(kept)).close()

    def open_writer(self, session_id: str) -> SessionWriter:
        """A writer appending to an existing session, continuing after its last valid entry.

        Reads the whole file (synchronously) to find that entry. If the file ends in a
        partial line (a write cut short by a crash), a newline is written first so the next
        entry starts on a line of its own.
        """
        path = self._path(session_id)
        return self._writer_after(path, session_id, _read_session_file(path, session_id))

    def load_for_append(self, session_id: str) -> tuple[LoadedSession, SessionWriter]:
        """:meth:`load` and :meth:`open_writer` in one reading of the file (one warning per damaged line)."""
        path = self._path(session_id)
        result = _read_session_file(path, session_id)
        return result.loaded, self._writer_after(path, session_id, result)

    def _writer_after(self, path: Path, session_id: str, result: _ReadResult) -> SessionWriter:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | BINARY)
        except FileNotFoundError:
            raise SessionNotFound(session_id, self.folder) from None
        except OSError as error:
            raise SessionStoreError(
                f"Cannot open session file {path} for appending ({error}); check the file's permissions"
            ) from error
        try:
            if not result.ends_with_newline:
                write_all(fd, b"\n")
        except OSError as error:
            raise SessionStoreError(
                f"Cannot write session file {path} ({error}); free disk space or check permissions"
            ) from error
        finally:
            os.close(fd)
        return SessionWriter(path, session_id, result.loaded.tree, header_settings(result.loaded.header))

    def load(self, session_id: str) -> LoadedSession:
        """Read a session back; damaged lines are skipped and reported in ``warnings``.

        Raises :class:`SessionNotFound` if there is no such session and
        :class:`SessionStoreError` if its header is missing or broken.
        """
        return _read_session_file(self._path(session_id), session_id).loaded

    def list(self, cwd: str | None = None) -> list[SessionSummary]:
        """Summaries of the stored sessions, most recently updated first.

        With ``cwd``, only the sessions started in that folder (compared as resolved absolute
        paths). Files that cannot be read (or whose header is damaged) are skipped with a
        logged warning, as are damaged lines. Reads the files changed since the last listing
        (see :mod:`~agentls.session.history.session_index`); blocks, so call it in a thread.
        """
        wanted = _normalize_cwd(cwd) if cwd is not None else None
        summaries = [
            summary
            for summary in self.index.summaries()
            if wanted is None or _same_folder(summary.cwd, wanted)
        ]
        summaries.sort(key=lambda s: (s.updated_at, s.created_at, s.session_id), reverse=True)
        return summaries

    def delete(self, session_id: str) -> bool:
        """Remove a session's file; ``False`` if there was none."""
        path = self._path(session_id)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        except OSError as error:
            raise SessionStoreError(
                f"Cannot delete session file {path} ({error}); check the folder's permissions"
            ) from error
        return True
