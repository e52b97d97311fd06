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
and in :attr:`LoadedSession.transcript` (see :mod:`agentls.session.transcript`).

Crash safety: a file is never rewritten, only appended to, and each entry reaches the
file in a single unbuffered ``write`` on an ``O_APPEND`` descriptor before its append
returns. A process killed at any moment therefore leaves every returned entry in the
kernel's hands (``kill -9`` loses nothing that was returned; a power cut may, since we do
not ``fsync``) and at worst one partial last line, which loading skips with a warning and
:meth:`SessionStore.open_writer` fences off with a newline before appending.

Damaged files: every value read from a file is checked for type and range before use,
and the JSON is parsed strictly (no ``NaN``/``Infinity``, no number out of float range,
nesting only as deep as the stack allows, lines of at most :data:`MAX_LINE_BYTES`). An
entry line that fails is skipped with a warning naming the file and line; a file whose
header fails (or that is not a regular file) raises :class:`SessionStoreError`, which
:meth:`SessionStore.list` turns into a warning and a skipped session. The writer holds
itself to the same rules, so that whatever it writes loads back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import threading
import uuid
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

import platformdirs

from agentls.ai.local_files import JsonTooDeep, NotARegularFile, open_regular_file, parse_strict_json
from agentls.ai.types import AgentMessage, Usage, UserMessage, now_ms, parse_message
from agentls.ai.wire import to_wire
from agentls.session.file_changes import parse_file_changes
from agentls.session.messages import branch_summary_message, compaction_summary_message
from agentls.session.transcript import BranchSummary, Compaction, Transcript
from agentls.session.tree import FILE_CHANGES, BranchSettings, Node, SessionTree, settings_on

__all__ = [
    "FORMAT_VERSION",
    "LoadedSession",
    "SessionHeader",
    "SessionNotFound",
    "SessionStore",
    "SessionStoreError",
    "SessionSummary",
    "SessionWriter",
    "default_data_dir",
    "new_session_id",
]

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
"""The ``version`` of the header this module writes and reads."""

TITLE_LENGTH = 80

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line (in bytes, without its newline) the store writes or reads.

Longer lines in a file are skipped without being held in memory; an entry that would be
longer (a prompt with very many images, say) is refused when it is appended."""

MAX_DEPTH = 100
"""How deeply arrays and objects may nest in a line the store writes.

Python's JSON parser recurses once per level and fails at the interpreter's recursion
limit, minus whatever the stack already holds where it runs; this bound keeps every
written line far below that, wherever it is read."""

_MAX_TIMESTAMP = 253_402_300_799_999
"""The last millisecond of the year 9999: later timestamps (and negative ones) are damage."""

_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_ENTRY_TYPES = (
    "message",
    "branch_summary",
    "custom",
    "label",
    "model_change",
    "thinking_level_change",
    "system_prompt_change",
    "compaction",
    "session_info",
)
# Windows would otherwise translate "\n" to "\r\n" on os.write.
_BINARY = getattr(os, "O_BINARY", 0)


# --- errors ----------------------------------------------------------------------------


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


# --- data ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionHeader:
    """The first line of a session file: what the session started with."""

    id: str
    cwd: str
    created_at: int
    system_prompt: str
    """The session's custom system prompt, replacing agentls's base one; ``""`` for none."""
    model: tuple[str, str] | None
    """``(provider, model id)``, or ``None`` when the session started without a model."""
    thinking_level: str
    permissions: dict[str, str] | None = None
    """The session's own tool policy (``{tool: allow|ask|deny}``) over the server's, if it set one."""
    allow_outside_workspace: bool = False
    """Whether the tools may use paths outside ``cwd``."""
    append_system_prompt: str | None = None
    """Text added to the system prompt."""
    context_files: bool = True
    """Whether the project instructions (``AGENTS.md``, ``CLAUDE.md``) are read into the system prompt."""
    compaction: dict[str, Any] | None = None
    """The session's own compaction settings (``enabled``, ``reserveTokens``, ``keepRecentTokens``; wire
    names) instead of the server's, if it set any."""
    forked_from: tuple[str, str] | None = None
    """``(session id, entry id)`` of the session and entry this one was forked from (``agent/fork``)."""
    mcp_servers: dict[str, Any] | list[Any] | None = None
    """The MCP servers ``agent/newSession`` gave the session, as given (checked when it starts)."""


@dataclass
class LoadedSession:
    """A session read back from its file.

    ``model``, ``thinking_level`` and ``system_prompt`` are the header's values with the
    entries on the leaf's branch applied (:func:`~agentls.session.tree.settings_on`), as Pi's.
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


def default_data_dir() -> Path:
    """``$AGENTLS_DATA_DIR`` if set, else the platform's user data folder for agentls."""
    value = os.environ.get("AGENTLS_DATA_DIR")
    if value:
        return Path(value).expanduser()
    # appauthor=False: on Windows the default would be ...\agentls\agentls.
    return Path(platformdirs.user_data_dir("agentls", appauthor=False))


def new_session_id() -> str:
    """A fresh random session id (32 hex digits)."""
    return uuid.uuid4().hex


def _normalize_cwd(cwd: str) -> str:
    return str(Path(cwd).expanduser().resolve())


def _encode_line(entry: dict[str, Any], what: str) -> bytes:
    """One entry as one line of UTF-8 JSON that :func:`_parse_line` reads back.

    ``json.dumps`` escapes every control character, so the line holds no raw newline.
    A lone surrogate (which UTF-8 cannot encode) comes out as its JSON escape ``\\udXXX``
    thanks to ``backslashreplace``, so it survives the round trip. Raises
    :class:`SessionStoreError` naming ``what`` if the entry cannot be stored.
    """
    try:
        text = json.dumps(_storable(entry, 0), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise SessionStoreError(
            f"Cannot save {what}: it is not JSON data ({error}); whatever put it in the message "
            "must use JSON-compatible values"
        ) from error
    # U+2028/U+2029 are line breaks to str.splitlines (and to old JavaScript); escape them
    # so that every reader sees one entry per line. They can only occur inside strings.
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    line = (text + "\n").encode("utf-8", "backslashreplace")
    if len(line) > MAX_LINE_BYTES + 1:
        raise SessionStoreError(
            f"Cannot save {what}: it is {len(line) - 1} bytes as JSON, more than the {MAX_LINE_BYTES} "
            "a session file line may hold; send smaller images or tool output"
        )
    return line


def _storable(value: Any, depth: int) -> Any:
    """``value`` with every non-finite float replaced by 0, checked for its nesting depth.

    JSON has no NaN or Infinity, and the reader refuses them. 0 rather than JavaScript's
    ``null`` because the float fields of a message (a usage cost computed from a bad
    price, say) must still validate when the message is loaded. Raises ``ValueError``
    beyond :data:`MAX_DEPTH` levels (which also ends a circular structure).
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else 0.0
    if isinstance(value, dict | list | tuple):
        if depth >= MAX_DEPTH:
            raise ValueError(f"it nests more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return {key: _storable(item, depth + 1) for key, item in value.items()}
        return [_storable(item, depth + 1) for item in value]
    return value


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def header_settings(header: SessionHeader) -> BranchSettings:
    """What the session started with, before any entry."""
    return BranchSettings(header.model, header.thinking_level, header.system_prompt)


def _header_to_wire(header: SessionHeader) -> dict[str, Any]:
    return {
        "type": "session",
        "version": FORMAT_VERSION,
        "id": header.id,
        "cwd": header.cwd,
        "createdAt": header.created_at,
        "systemPrompt": header.system_prompt,
        "model": {"provider": header.model[0], "id": header.model[1]} if header.model else None,
        "thinkingLevel": header.thinking_level,
        **({"permissions": header.permissions} if header.permissions else {}),
        **({"allowOutsideWorkspace": True} if header.allow_outside_workspace else {}),
        **({"appendSystemPrompt": header.append_system_prompt} if header.append_system_prompt else {}),
        **({} if header.context_files else {"contextFiles": False}),
        **({"compaction": header.compaction} if header.compaction else {}),
        **(
            {"forkedFrom": {"sessionId": header.forked_from[0], "entryId": header.forked_from[1]}}
            if header.forked_from
            else {}
        ),
        **({"mcpServers": header.mcp_servers} if header.mcp_servers else {}),
    }


# --- writer ----------------------------------------------------------------------------


_pool: ThreadPoolExecutor | None = None
"""The threads that write every session's lines (made on first use, shared by all writers)."""
_pool_lock = threading.Lock()

WRITE_THREADS = 4
"""Threads writing session files at once, however many sessions are open."""


def _write_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="agentls-session-writes")
        return _pool


def finish_writing() -> None:
    """Wait until every line handed to any writer is written and its file closed.

    Normal interpreter exit joins these threads itself; a process that ends with
    ``os._exit`` (the server, to skip the teardown of its modules) calls this first.
    """
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True)


class SessionWriter:
    """Appends entries to one session file (from :meth:`SessionStore.create` or ``open_writer``).

    Each append builds its line and assigns the entry id and ``parentId`` at once, when it
    is called, then queues the line and waits for it to be written. The writer's lines are
    written in queue order by one job of a small pool shared by all writers, which opens
    the file, writes what is queued and closes it again: an idle session holds neither a
    file descriptor nor a thread, so a server can keep any number of sessions open. The
    lines land in call order even when several appends run concurrently, and the event
    loop never waits on the disk. An append whose caller is cancelled is still written:
    its id is already in the chain.

    If a write fails the writer stops writing (a later line would otherwise follow a
    partial one); every later append raises :class:`SessionStoreError`.
    """

    def __init__(self, path: Path, session_id: str, tree: SessionTree, start: BranchSettings) -> None:
        self.path = path
        self.session_id = session_id
        self.tree = tree
        """The session's entries: every append adds its entry below the leaf, at once."""
        self.start = start
        """The settings the session's header starts with (before the entries of a branch apply)."""
        self._closed = False
        self._failure: BaseException | None = None
        self._lock = threading.Lock()
        self._queue: deque[tuple[bytes, Future[None]]] = deque()
        self._draining = False
        """Whether a job of the pool is writing this queue (one at a time: the lines keep their order)."""

    @property
    def last_entry_id(self) -> str | None:
        """The tree's leaf: the next entry's ``parentId``."""
        return self.tree.leaf_id

    def move_leaf(self, entry_id: str | None) -> None:
        """Make the next entry a child of ``entry_id`` (``None``: a new root), as Pi's ``branch``."""
        if entry_id is not None and entry_id not in self.tree:
            raise UnknownEntry(f"Session {self.session_id} has no entry {entry_id!r}")
        self.tree.leaf_id = entry_id

    @property
    def closed(self) -> bool:
        return self._closed

    async def append_message(self, message: AgentMessage) -> str:
        """Append one finished message; returns the entry id once the line is in the file."""
        wire = to_wire(parse_message(message))
        return await self._append("message", {"message": wire}, message=message)

    async def append_model_change(self, provider: str, model_id: str) -> str:
        _require_str("provider", provider)
        _require_str("model_id", model_id)
        return await self._append(
            "model_change", {"provider": provider, "modelId": model_id}, data=(provider, model_id)
        )

    async def append_thinking_level_change(self, level: str) -> str:
        _require_str("level", level)
        return await self._append("thinking_level_change", {"thinkingLevel": level}, data=level)

    async def append_system_prompt_change(self, text: str) -> str:
        _require_str("text", text)
        return await self._append("system_prompt_change", {"systemPrompt": text}, data=text)

    async def append_session_info(self, name: str) -> str:
        """Pi's ``session_info``: the session's display name (on one line; empty clears it)."""
        _require_str("name", name)
        return await self._append("session_info", {"name": " ".join(name.split())})

    async def append_compaction(self, summary: AgentMessage, compaction: Compaction) -> str:
        """Append a compaction: its ``compactionSummary`` message (whose timestamp the entry takes) and
        the rest of the entry; returns the entry id once the line is in the file."""
        message = to_wire(summary)
        payload = {
            "summary": message["summary"],
            "firstKeptEntryId": compaction.first_kept_entry_id,
            "tokensBefore": message["tokensBefore"],
            **_summary_wire(compaction.read_files, compaction.modified_files, compaction.usage),
        }
        return await self._append(
            "compaction", payload, message["timestamp"], message=summary, compaction=compaction
        )

    async def append_branch_summary(self, summary: AgentMessage, info: BranchSummary) -> str:
        """Append Pi's ``branch_summary`` entry of a ``branchSummary`` message (with its timestamp)."""
        message = to_wire(summary)
        payload = {
            "fromId": message["fromId"],
            "summary": message["summary"],
            **_summary_wire(info.read_files, info.modified_files, info.usage),
        }
        return await self._append("branch_summary", payload, message["timestamp"], message=summary, data=info)

    async def append_custom(self, custom_type: str, data: Any, wire_data: Any) -> str:
        """Append Pi's ``custom`` entry (no part of the context): ``wire_data`` in the file, ``data`` in
        the tree."""
        payload = {"customType": custom_type, "data": wire_data}
        return await self._append("custom", payload, custom_type=custom_type, data=data)

    async def append_label(self, target_id: str, label: str | None) -> str:
        """Pi's ``label`` entry: a bookmark on ``target_id`` (``None`` clears it)."""
        if target_id not in self.tree:
            raise UnknownEntry(f"Session {self.session_id} has no entry {target_id!r}")
        data = {"targetId": target_id, "label": label}
        return await self._append("label", data, data=data)

    def close(self) -> None:
        """Stop accepting appends; those already issued are still written (the file is then closed).

        Does not wait for them (it is safe to call from the event loop); idempotent.
        """
        self._closed = True

    async def _append(
        self, entry_type: str, payload: dict[str, Any], timestamp: int | None = None, **node: Any
    ) -> str:
        # Everything up to the queueing runs synchronously at call time: that fixes the
        # order of the entries and their parentId chain before any other append can run.
        if self._closed:
            raise SessionStoreError(
                f"The writer of session {self.session_id} is closed; "
                "open a new one with SessionStore.open_writer to append more"
            )
        self._raise_if_failed()
        entry_id, parent_id = self.tree.new_id(), self.tree.leaf_id
        timestamp = now_ms() if timestamp is None else timestamp
        entry = {"type": entry_type, "id": entry_id, "parentId": parent_id, "timestamp": timestamp, **payload}
        line = _encode_line(entry, f"a {entry_type} entry of session {self.session_id}")
        self.tree.add(Node(entry_id, parent_id, entry_type, timestamp, **node))
        written: Future[None] = Future()
        with self._lock:
            self._queue.append((line, written))
            start, self._draining = not self._draining, True
        if start:
            _write_pool().submit(self._drain)
        future = asyncio.wrap_future(written)
        # If the caller is cancelled the failure (if any) is still retrieved, and reported by
        # the next append, instead of asyncio logging "exception was never retrieved".
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        # shield: a cancelled caller must not unqueue a write whose id is already in the chain.
        await asyncio.shield(future)
        return entry_id

    def _drain(self) -> None:
        """Runs in the pool: write the queued lines in order, then close the file until the next append."""
        fd: int | None = None
        try:
            while True:
                with self._lock:
                    if not self._queue:
                        self._draining = False
                        return
                    line, written = self._queue.popleft()
                try:
                    self._raise_if_failed()
                    if fd is None:
                        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | _BINARY)
                    _write_all(fd, line)
                except SessionStoreError as error:
                    written.set_exception(error)
                except OSError as error:
                    self._failure = error
                    written.set_exception(self._failure_error(error))
                else:
                    written.set_result(None)
        finally:
            if fd is not None:
                os.close(fd)

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure_error(self._failure) from self._failure

    def _failure_error(self, error: BaseException) -> SessionStoreError:
        return SessionStoreError(
            f"Could not write to session file {self.path} ({error}); the session is no longer being "
            "saved. Free disk space or fix the folder's permissions, then load the session again "
            "to continue saving it"
        )


def _summary_wire(read: tuple[str, ...], modified: tuple[str, ...], usage: Usage | None) -> dict[str, Any]:
    """The ``details`` (file lists) and ``usage`` of a summary entry."""
    details: dict[str, Any] = {"details": {"readFiles": list(read), "modifiedFiles": list(modified)}}
    if usage is not None:
        details["usage"] = to_wire(usage)
    return details


def _require_str(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")


# --- reading ---------------------------------------------------------------------------


@dataclass
class _ReadResult:
    loaded: LoadedSession
    ends_with_newline: bool


@dataclass(frozen=True)
class _Line:
    """One line of a session file, as :func:`_lines` reads it."""

    number: int
    content: bytes | None
    """The line without its newline; ``None`` when it is longer than :data:`MAX_LINE_BYTES`."""
    size: int
    ended: bool
    """Whether a newline ends it (only the last line of a file can lack one)."""


def _open(path: Path, session_id: str) -> BinaryIO:
    """``path`` opened for reading, provided it is a regular file (:func:`open_regular_file`)."""
    try:
        return open_regular_file(path)
    except FileNotFoundError:
        raise SessionNotFound(session_id, path.parent) from None
    except NotARegularFile:
        what = "a folder" if path.is_dir() else "not a regular file"
        raise SessionStoreError(
            f"{path} is {what}, not a session file; move it out of the sessions folder {path.parent}"
        ) from None
    except OSError as error:
        raise _cannot_read(path, error) from error


def _cannot_read(path: Path, error: OSError) -> SessionStoreError:
    return SessionStoreError(f"Cannot read session file {path} ({error}); check the file's permissions")


def _lines(file: BinaryIO) -> Iterator[_Line]:
    """The lines of ``file``, holding at most :data:`MAX_LINE_BYTES` of one line in memory."""
    number = 0
    while chunk := file.readline(MAX_LINE_BYTES + 1):
        number += 1
        if chunk.endswith(b"\n"):
            yield _Line(number, chunk[:-1], len(chunk) - 1, True)
        elif len(chunk) <= MAX_LINE_BYTES:
            yield _Line(number, chunk, len(chunk), False)  # the end of the file
        else:
            size = len(chunk)
            while chunk and not chunk.endswith(b"\n"):
                chunk = file.readline(MAX_LINE_BYTES)
                size += len(chunk)
            ended = chunk.endswith(b"\n")
            yield _Line(number, None, size - 1 if ended else size, ended)


def _parse_line(line: _Line) -> Any:
    """The JSON value of ``line``; ``ValueError`` saying what is wrong if it has none.

    Stricter than plain ``json.loads``: ``NaN``, ``Infinity`` and numbers beyond the float
    range (``1e999``) are errors rather than floats that fail every later comparison, and
    nesting too deep for the stack is an error rather than a ``RecursionError``.
    """
    if line.content is None:
        raise ValueError(f"it is {line.size} bytes long, more than the {MAX_LINE_BYTES} a line may hold")
    try:
        text = line.content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8: {error.reason} at byte {error.start + 1}") from None
    try:
        return parse_strict_json(text, finite=True)
    except JsonTooDeep:
        raise ValueError("not JSON that can be read: it nests too deeply") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error.msg} at column {error.colno}") from None
    except ValueError as error:  # from the hooks above, or an integer of too many digits
        raise ValueError(f"not JSON that can be read: {error}") from None


def _brief(value: Any) -> str:
    """``repr(value)``, cut short: damaged values can be huge and go into log lines."""
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _is_timestamp(value: Any) -> bool:
    """Milliseconds since 1970, up to the year 9999 (which also keeps them exact in JavaScript)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= _MAX_TIMESTAMP


def _read_header(path: Path, line: _Line | None) -> SessionHeader:
    def broken(reason: str) -> SessionStoreError:
        return SessionStoreError(
            f"{path} is not a readable session file (line 1: {reason}). The file is damaged or is not "
            "an agentls session; move it out of the sessions folder or delete the session"
        )

    if line is None or (line.content is not None and not line.content.strip()):
        raise broken("there is no header")
    try:
        data = _parse_line(line)
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
        raise broken(f"the header has version {_brief(version)}, expected {FORMAT_VERSION}")
    session_id, cwd, created_at = data.get("id"), data.get("cwd"), data.get("createdAt")
    if not isinstance(session_id, str):
        raise broken("the header has no string id")
    # The tools work in cwd: a relative one would be the server's folder, a NUL no path at all.
    if not isinstance(cwd, str) or "\0" in cwd or not os.path.isabs(cwd):
        raise broken("the header's cwd is not an absolute path")
    if not _is_timestamp(created_at):
        raise broken(f"the header's createdAt {_brief(created_at)} is not a time in milliseconds")
    system_prompt = data.get("systemPrompt")
    if system_prompt is None:
        system_prompt = ""
    if not isinstance(system_prompt, str):
        raise broken("the header's systemPrompt is not a string")
    thinking_level = data.get("thinkingLevel", "off")
    if not isinstance(thinking_level, str):
        raise broken("the header's thinkingLevel is not a string")
    model = data.get("model")
    if model is not None:
        model = _model_tuple(model)
        if model is None:
            raise broken('the header\'s model is not {"provider": string, "id": string} or null')
    permissions = data.get("permissions")
    if permissions is not None and not (
        isinstance(permissions, dict) and all(isinstance(v, str) for v in permissions.values())
    ):
        raise broken("the header's permissions is not an object of strings")
    append_system_prompt = data.get("appendSystemPrompt")
    if append_system_prompt is not None and not isinstance(append_system_prompt, str):
        raise broken("the header's appendSystemPrompt is not a string")
    compaction = data.get("compaction")
    if compaction is not None and not _is_compaction_settings(compaction):
        raise broken(
            "the header's compaction is not "
            "{enabled?: boolean, reserveTokens?: integer, keepRecentTokens?: integer}"
        )
    return SessionHeader(
        id=session_id,
        cwd=cwd,
        created_at=int(created_at),
        system_prompt=system_prompt,
        model=model,
        thinking_level=thinking_level,
        permissions=permissions or None,
        allow_outside_workspace=data.get("allowOutsideWorkspace") is True,
        append_system_prompt=append_system_prompt or None,
        context_files=data.get("contextFiles") is not False,
        compaction=compaction or None,
        forked_from=_forked_from(data.get("forkedFrom")),
        mcp_servers=mcp if isinstance(mcp := data.get("mcpServers"), dict | list) and mcp else None,
    )


def _forked_from(value: Any) -> tuple[str, str] | None:
    """The header's ``forkedFrom`` (informational: a malformed one is ignored, not a damaged file)."""
    if isinstance(value, dict):
        session_id, entry_id = value.get("sessionId"), value.get("entryId")
        if isinstance(session_id, str) and isinstance(entry_id, str):
            return (session_id, entry_id)
    return None


def _is_count(value: Any) -> bool:
    """A non-negative integer (not a boolean), as token counts are."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_compaction_settings(value: Any) -> bool:
    if not isinstance(value, dict) or not set(value) <= {"enabled", "reserveTokens", "keepRecentTokens"}:
        return False
    return isinstance(value.get("enabled", True), bool) and all(
        _is_count(value[key]) for key in ("reserveTokens", "keepRecentTokens") if key in value
    )


def _model_tuple(value: Any) -> tuple[str, str] | None:
    if (
        isinstance(value, dict)
        and isinstance(value.get("provider"), str)
        and isinstance(value.get("id"), str)
    ):
        return (value["provider"], value["id"])
    return None


def _read_session_file(path: Path, session_id: str) -> _ReadResult:
    """Read a session file, skipping (with a warning) every line that is not a valid entry."""
    with _open(path, session_id) as file:
        try:
            return _replay(path, session_id, _lines(file))
        except OSError as error:
            raise _cannot_read(path, error) from error


def _replay(path: Path, session_id: str, lines: Iterator[_Line]) -> _ReadResult:
    """The session in ``lines``: the header, then every valid entry applied in order."""
    first = next(lines, None)
    header = _read_header(path, first)
    ends_with_newline = first is not None and first.ended
    warnings: list[str] = []

    def warn(message: str) -> None:
        warnings.append(message)
        logger.warning("session %s: %s", session_id, message)

    def skip(number: int, reason: str) -> None:
        warn(f"{path} line {number}: skipped ({reason})")

    if header.id != session_id:
        warn(f"{path}: the header names session {_brief(header.id)}; using the file name's id")

    tree = SessionTree()
    name: str | None = None
    updated_at = header.created_at
    for line in lines:
        number = line.number
        ends_with_newline = line.ended
        if line.content is not None and not line.content.strip():
            continue
        try:
            entry = _parse_line(line)
        except ValueError as error:
            skip(number, str(error) if line.ended else "truncated: the write of this line did not finish")
            continue
        if not isinstance(entry, dict):
            skip(number, "not a JSON object")
            continue
        entry_type = entry.get("type")
        if entry_type not in _ENTRY_TYPES:
            skip(number, f"unknown entry type {_brief(entry_type)}")
            continue
        entry_id, timestamp = entry.get("id"), entry.get("timestamp")
        if not isinstance(entry_id, str) or not entry_id:
            skip(number, f"{entry_type} entry without a string id")
            continue
        if entry_id in tree:
            skip(number, f"{entry_type} entry whose id {_brief(entry_id)} an earlier entry has")
            continue
        if not _is_timestamp(timestamp):
            skip(
                number,
                f"{entry_type} entry whose timestamp {_brief(timestamp)} is not a time in milliseconds",
            )
            continue
        try:
            fields = _node_fields(entry, tree)
        except ValueError as error:
            skip(number, str(error))
            continue
        if entry_type == "session_info":
            name = (entry.get("name") or "").strip() or None
        tree.add(Node(entry_id, _parent(entry.get("parentId"), tree), entry_type, int(timestamp), **fields))
        updated_at = max(updated_at, int(timestamp))

    settings = settings_on(tree.branch(), header_settings(header))
    loaded = LoadedSession(
        header=header,
        tree=tree,
        transcript=tree.transcript(tree.leaf_id),
        model=settings.model,
        thinking_level=settings.thinking_level,
        system_prompt=settings.system_prompt,
        updated_at=updated_at,
        name=name,
        warnings=warnings,
    )
    return _ReadResult(loaded, ends_with_newline)


def _parent(parent_id: Any, tree: SessionTree) -> str | None:
    """An entry's parent: the one it names, or the entry before it when that one is not in the file.

    A damaged or truncated line takes its entry out of the tree; the entries below it
    then hang from the entry before it, so the conversation stays in one piece.
    """
    if parent_id is None:
        return None
    return parent_id if isinstance(parent_id, str) and parent_id in tree else tree.leaf_id


def _node_fields(entry: dict[str, Any], tree: SessionTree) -> dict[str, Any]:
    """What an entry puts in its :class:`Node` besides id, parent, type and time; ``ValueError``
    saying what is wrong with a damaged one."""
    entry_type = entry["type"]
    if entry_type == "message":
        try:
            return {"message": parse_message(entry.get("message"))}
        except Exception as error:  # a pydantic ValidationError or anything odd: never a crash
            raise ValueError(f"the message does not parse: {_one_line(error)}") from None
    if entry_type == "compaction":
        try:
            return _compaction_fields(entry, tree)
        except ValueError as error:
            raise ValueError(f"compaction entry {error}") from None
    if entry_type == "branch_summary":
        return _branch_summary_fields(entry)
    if entry_type == "custom":
        custom_type = entry.get("customType")
        if not isinstance(custom_type, str):
            raise ValueError("custom entry without a string customType")
        data = entry.get("data")
        if custom_type == FILE_CHANGES:
            data = parse_file_changes(data)
        return {"custom_type": custom_type, "data": data}
    if entry_type == "label":
        target, label = entry.get("targetId"), entry.get("label")
        if not isinstance(target, str) or not (label is None or isinstance(label, str)):
            raise ValueError("label entry without a string targetId and a string or null label")
        return {"data": {"targetId": target, "label": label}}
    if entry_type == "model_change":
        if not isinstance(entry.get("provider"), str) or not isinstance(entry.get("modelId"), str):
            raise ValueError("model_change without string provider and modelId")
        return {"data": (entry["provider"], entry["modelId"])}
    if entry_type == "thinking_level_change":
        if not isinstance(entry.get("thinkingLevel"), str):
            raise ValueError("thinking_level_change without a string thinkingLevel")
        return {"data": entry["thinkingLevel"]}
    if entry_type == "session_info":
        if entry.get("name") is not None and not isinstance(entry.get("name"), str):
            raise ValueError("session_info whose name is not a string")
        return {}
    if not isinstance(entry.get("systemPrompt"), str):
        raise ValueError("system_prompt_change without a string systemPrompt")
    return {"data": entry["systemPrompt"]}


def _compaction_fields(entry: dict[str, Any], tree: SessionTree) -> dict[str, Any]:
    """A compaction entry's summary message and :class:`Compaction`; ``ValueError`` saying what is wrong.

    Its ``firstKeptEntryId`` must name a message entry on the path to it: a compaction
    that kept nothing it can name would hide the whole conversation before it, so it is
    skipped instead, and the model sees that conversation in full.
    """
    summary, kept, tokens = entry.get("summary"), entry.get("firstKeptEntryId"), entry.get("tokensBefore")
    if not isinstance(summary, str) or not _is_count(tokens):
        raise ValueError("without a string summary and a token count tokensBefore")
    above = tree.path(_parent(entry.get("parentId"), tree))
    if not any(node.id == kept and node.type == "message" for node in above):
        raise ValueError(f"whose firstKeptEntryId {_brief(kept)} names no message entry before it")
    read, modified, usage = _summary_details(entry)
    message = compaction_summary_message(summary, int(tokens), int(entry["timestamp"]))
    return {"message": message, "compaction": Compaction(kept, read, modified, usage)}


def _branch_summary_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``branch_summary`` entry's ``branchSummary`` message and :class:`BranchSummary`."""
    summary, from_id = entry.get("summary"), entry.get("fromId")
    if not isinstance(summary, str) or not isinstance(from_id, str):
        raise ValueError("branch_summary entry without a string summary and fromId")
    try:
        read, modified, usage = _summary_details(entry)
    except ValueError as error:
        raise ValueError(f"branch_summary entry {error}") from None
    message = branch_summary_message(summary, from_id, int(entry["timestamp"]))
    return {"message": message, "data": BranchSummary(read, modified, usage)}


def _summary_details(entry: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...], Usage | None]:
    """A summary entry's ``details`` (read and modified files) and ``usage``."""
    details = entry.get("details") or {}
    keys = ("readFiles", "modifiedFiles")
    files = [details.get(key, []) if isinstance(details, dict) else None for key in keys]
    if not all(isinstance(names, list) and all(isinstance(n, str) for n in names) for names in files):
        raise ValueError("whose details are not {readFiles?: [string], modifiedFiles?: [string]}")
    try:
        usage = Usage.model_validate(entry["usage"]) if entry.get("usage") is not None else None
    except Exception as error:  # pydantic's ValidationError
        raise ValueError(f"whose usage does not parse: {_one_line(error)}") from None
    return tuple(files[0]), tuple(files[1]), usage  # type: ignore[arg-type]


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:299] + "…"


def _same_folder(cwd: str, wanted: str) -> bool:
    """Whether a stored ``cwd`` is the resolved folder ``wanted``, as it is or once resolved itself."""
    if cwd == wanted:
        return True
    try:
        return _normalize_cwd(cwd) == wanted
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13) names no folder
        return False


def _title(messages: list[AgentMessage]) -> str | None:
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                text = message.content
            else:
                text = " ".join(block.text for block in message.content if block.type == "text")
            text = " ".join(text.split())
            if len(text) > TITLE_LENGTH:
                text = text[: TITLE_LENGTH - 1].rstrip() + "…"
            return text
    return None


# --- store -----------------------------------------------------------------------------


class SessionStore:
    """The session files under ``<root>/sessions``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.folder = self.root / "sessions"

    def _path(self, session_id: Any) -> Path:
        """The file of ``session_id``; rejects anything but a plain id, so no path leaves the folder."""
        if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
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
        if not _is_timestamp(header.created_at):  # the reader would refuse the file
            raise ValueError(f"created_at {header.created_at!r} is not a time in milliseconds")
        wire = _header_to_wire(replace(header, cwd=_normalize_cwd(header.cwd)))
        header_line = _encode_line(wire, f"the header of session {header.id}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as error:  # FileExistsError too: a file where the folder should be
            raise self._cannot_create(self.folder, error) from error
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _BINARY, 0o600)
        except FileExistsError:
            raise SessionStoreError(
                f"Session {header.id} already exists in {self.folder}; create a new session with "
                "an id from new_session_id(), or use open_writer to continue this one"
            ) from None
        except OSError as error:
            raise self._cannot_create(path, error) from error
        try:
            _write_all(fd, header_line + entries)
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
        with _open(path, session_id) as file:
            for line in _lines(file):
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
                kept.append(_encode_line(entry, f"entry {entry['id']} of session {session_id}"))
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
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | _BINARY)
        except FileNotFoundError:
            raise SessionNotFound(session_id, self.folder) from None
        except OSError as error:
            raise SessionStoreError(
                f"Cannot open session file {path} for appending ({error}); check the file's permissions"
            ) from error
        try:
            if not result.ends_with_newline:
                _write_all(fd, b"\n")
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
        logged warning, as are damaged lines. Reads every file in full.
        """
        wanted = _normalize_cwd(cwd) if cwd is not None else None
        try:
            paths = sorted(self.folder.glob("*.jsonl"))
        except OSError as error:
            logger.warning("cannot list session folder %s: %s", self.folder, error)
            return []
        summaries: list[SessionSummary] = []
        for path in paths:
            session_id = path.stem
            if not _SESSION_ID.fullmatch(session_id):
                continue
            try:
                loaded = _read_session_file(path, session_id).loaded
            except SessionNotFound:
                continue  # deleted since the folder was listed
            except SessionStoreError as error:
                logger.warning("skipping a session: %s", error)
                continue
            if wanted is not None and not _same_folder(loaded.header.cwd, wanted):
                continue
            summaries.append(
                SessionSummary(
                    session_id=session_id,
                    cwd=loaded.header.cwd,
                    title=loaded.name or _title(loaded.messages),
                    created_at=loaded.header.created_at,
                    updated_at=loaded.updated_at,
                    message_count=len(loaded.messages),
                    model=loaded.model,
                )
            )
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
