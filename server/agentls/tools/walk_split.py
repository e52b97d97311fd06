"""A second process for a long folder walk: a fork walks a folder's last subfolders while the walk itself
walks its first ones.

One Python thread lists a large tree at about half the speed of ``rg --files``, which walks on
every core; threads do not help (the GIL is taken again for every folder entry). So once a walk
has run for a while, :class:`Helper` forks the process: the fork walks the subfolders of one
folder from the last one back, and hands each finished one over through a pipe, while the walk
goes on from the first one. Where they meet, at most one subfolder is walked by both.

The walk never waits for the helper. At each of that folder's subfolders it takes what the
pipe holds (without blocking) and uses the helper's walk of the subfolder only when the helper
has finished it; otherwise it walks the subfolder itself. So a helper that is slow, or stuck
(a fork of a threaded process may find a lock held by a thread that is not in it), costs
nothing but its own work; it is killed when the walk ends.

The fork runs nothing but the walk: garbage collection off, the server's signal handlers undone
(SIGTERM, SIGINT and SIGHUP end it), every descriptor closed but the pipe's and the folder's (a
socket or pipe of the server's must not stay open in it), no exit handlers (it leaves with
:func:`os._exit`). Linux only.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import signal
import struct
import sys
import threading
import warnings
from collections.abc import Callable
from typing import NamedTuple

from agentls.ai.local_files import write_all

Run = tuple[str, list[str], dict[str, str]]
"""A folder's relative path (``""`` or ``"a/b/"``), the names of a run of its files, and the real paths of
the symlinks among them."""


class Walked(NamedTuple):
    """The helper's walk of one subfolder, complete: its runs and what it spent."""

    runs: list[Run]
    entries: int
    """The folder entries it read."""
    too_deep: int
    """The folders it left out for being deeper than the depth bound."""


WalkOne = Callable[[int], "Walked | None"]
"""Walks the subfolder at an index completely, or gives ``None`` if a bound stopped it or the tree changed."""

_HEADER = struct.Struct("<BiI")
_STARTED, _DONE = 0, 1
_PIPE_SIZE = 1 << 20
"""A pipe this big holds most of what a helper sends: it seldom waits for the walk to read."""

MAX_BYTES = 2 << 20
"""The most a helper sends (the files of a subfolder whose walk would go past it are read by the walk): the
walk holds no more than this of a helper's, whatever the size of the tree. About 60,000 paths."""

SUPPORTED = sys.platform == "linux" and hasattr(os, "fork")

# Python 3.12 warns at every fork of a process with threads that the fork may deadlock: this one
# runs only the walk, and nothing waits for it.
warnings.filterwarnings("ignore", r"This process \(pid=\d+\) is multi-threaded", DeprecationWarning)

SPLIT_ENV = "AGENTLS_WALK_SPLIT"
SPLIT_AFTER_SECONDS = 0.01
"""How long a walk runs alone before it forks a helper (a tree of a few thousand files never does)."""


def split_after() -> float | None:
    """How long a walk runs alone: ``$AGENTLS_WALK_SPLIT`` milliseconds, or :data:`SPLIT_AFTER_SECONDS`;
    ``None`` (never splits) when it is ``off``.

    Raises :class:`ValueError` for a value that is neither.
    """
    chosen = os.environ.get(SPLIT_ENV, "").strip()
    if not chosen:
        return SPLIT_AFTER_SECONDS
    if chosen == "off":
        return None
    try:
        milliseconds = float(chosen)
    except ValueError:
        milliseconds = -1.0
    if not milliseconds >= 0:
        raise ValueError(f"{SPLIT_ENV} must be a number of milliseconds or 'off', not {chosen!r}")
    return milliseconds / 1000


class Helper:
    """A forked process walking the subfolders ``first`` .. ``count - 1`` of one folder, the last one first.

    Start it with :meth:`start`; ask :meth:`walked` for each of those subfolders as the walk gets
    to it; :meth:`close` when the walk ends.
    """

    def __init__(self, pid: int, pipe: int, first: int) -> None:
        self._pid: int | None = pid
        self._pipe = pipe
        self._first = first
        self._buffer = bytearray()
        self._done: dict[int, bytes] = {}
        self._working_on: int | None = None

    @classmethod
    def start(cls, first: int, count: int, keep: int, walk_one: WalkOne) -> Helper | None:
        """Fork a helper for the subfolders ``first`` .. ``count - 1`` (``walk_one`` walks one, in the fork);
        ``keep`` is the descriptor it walks from. ``None`` when the fork fails."""
        read, write = os.pipe()
        with contextlib.suppress(OSError, AttributeError):
            import fcntl

            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return None
        if pid == 0:  # the helper
            try:
                gc.disable()
                for ending in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                    signal.signal(ending, signal.SIG_DFL)  # a signal to the server's group ends it
                _close_all_but({write, keep})
                _walk_back(first, count, walk_one, write)
            finally:
                os._exit(0)
        os.close(write)
        os.set_blocking(read, False)
        return cls(pid, read, first)

    def walked(self, index: int) -> Walked | None:
        """The helper's complete walk of the subfolder ``index``, if it has finished it by now.

        When it has not and is walking it, the walk does it and the helper is stopped: every
        later one it had finished is kept.
        """
        if index < self._first:
            return None
        if self._pid is not None:
            self._read()
            if self._working_on is not None and self._working_on <= index:
                self._stop()
        data = self._done.pop(index, None)
        if data is None:
            return None
        runs, entries, too_deep = marshal.loads(data)
        return Walked(runs, entries, too_deep)

    def close(self) -> None:
        """Stop the helper, done or not."""
        self._done.clear()
        if self._pid is not None:
            self._stop()

    def _read(self) -> None:
        """Take what the pipe holds, without waiting."""
        while True:
            try:
                chunk = os.read(self._pipe, _PIPE_SIZE)
            except BlockingIOError:
                break
            if not chunk:
                break
            self._buffer += chunk
        buffer, at = self._buffer, 0
        while len(buffer) - at >= _HEADER.size:
            kind, index, length = _HEADER.unpack_from(buffer, at)
            end = at + _HEADER.size + length
            if end > len(buffer):
                break
            if kind == _STARTED:
                self._working_on = index
            else:
                self._done[index] = bytes(buffer[at + _HEADER.size : end])
            at = end
        del buffer[:at]

    def _stop(self) -> None:
        """Kill the helper and reap it (in a thread if it is not gone at once); what it sent is kept."""
        pid, self._pid = self._pid, None
        assert pid is not None
        os.close(self._pipe)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                threading.Thread(target=_reap, args=(pid,), daemon=True).start()


def _walk_back(first: int, count: int, walk_one: WalkOne, pipe: int) -> None:
    """The helper's work: the subfolders from the last one back, each sent when it is complete, until
    :data:`MAX_BYTES` are sent."""
    sent = 0
    for index in range(count - 1, first - 1, -1):
        write_all(pipe, _HEADER.pack(_STARTED, index, 0))
        walked = walk_one(index)
        if walked is None:
            return  # a bound or a change stopped it: the walk does the rest itself
        data = marshal.dumps(tuple(walked))
        sent += len(data)
        if sent > MAX_BYTES:
            return
        write_all(pipe, _HEADER.pack(_DONE, index, len(data)) + data)


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor of this process but ``keep`` (0, 1 and 2 too)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
