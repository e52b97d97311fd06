"""Appending to session files: :class:`SessionWriter`, and the few threads that do the writing.

Crash safety: a file is never rewritten, only appended to, and each entry reaches the
file in a single unbuffered ``write`` on an ``O_APPEND`` descriptor before its append
returns. A process killed at any moment therefore leaves every returned entry in the
kernel's hands (``kill -9`` loses nothing that was returned; a power cut may, since we do
not ``fsync``) and at worst one partial last line, which loading skips with a warning and
:meth:`~agentls.session.history.store.SessionStore.open_writer` fences off with a newline before appending.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentls.ai.local_files import write_all
from agentls.ai.types import AgentMessage, Usage, now_ms, parse_message
from agentls.ai.wire import to_wire
from agentls.session.history.session_lines import BINARY, encode_line
from agentls.session.history.store_errors import SessionStoreError, UnknownEntry
from agentls.session.history.transcript import BranchSummary, Compaction
from agentls.session.history.tree import BranchSettings, Node, SessionTree

__all__ = ["WRITE_THREADS", "SessionWriter", "finish_writing"]

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
        line = encode_line(entry, f"a {entry_type} entry of session {self.session_id}")
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
                        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | BINARY)
                    write_all(fd, line)
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
