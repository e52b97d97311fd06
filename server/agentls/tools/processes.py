"""The processes the ``bash`` tool starts: finding them and ending them.

The rule: **processes started by bash live until the run that started them ends.**
A command may leave work in the background (``server &``, ``nohup x &``,
``setsid x &``) for later tool calls of the same run; when the run ends, before its
``agent/settled`` (whether it stopped, failed or was aborted), the session calls
:meth:`ProcessTracker.terminate_all`. Closing a session (``agent/deleteSession``,
``shutdown``) aborts its run, so the same happens; and when the server process
exits, whatever any of its calls started is ended too. An aborted, timed-out or
cancelled call ends its own processes at once (:meth:`TrackedCall.terminate`).
Ending means SIGTERM, then SIGKILL for whatever still runs after :data:`KILL_GRACE`
seconds; zombies do not count as running, so an ending is over as soon as the last
live process has exited.

How the processes are found. Each call's shell gets a unique marker in its
environment, ``AGENTLS_BASH_CALL=<server>/<tracker>/<call>``, which every process it
starts inherits, in its process group or not, however deeply forked and even once
re-parented to init: a scan of ``/proc/*/environ`` finds them. That is more robust
than following parent pids from the shell, which loses a process as soon as its
parent exits (a double fork, or ``setsid x &`` once the shell is gone), and than
process groups and sessions, which ``setsid`` leaves (and whose ids the system reuses
once they are empty). ``/proc/PID/environ`` is the environment the process was
started with, so an ``unset`` in a shell does not hide it. What the scan cannot see
is a process started with a cleared environment (``env -i``) or one that overwrites
its environment block (setproctitle): if it stays in the call's process group it is
still ended with the group when the call is aborted or times out, but not at the end
of the run. Without ``/proc`` (macOS) only the call's process group is ended, on
abort or timeout.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import itertools
import os
import signal
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL."""
POLL = 0.05
"""Seconds between two looks at whether the signalled processes are gone."""
MARKER = "AGENTLS_BASH_CALL"
"""The environment variable that marks the processes of one ``bash`` call."""

_PROC = "/proc"
_HAS_PROC = os.path.isdir(f"{_PROC}/self")
_SERVER = uuid.uuid4().hex[:12]
"""This process's part of every marker, so that its exit ends its calls' processes and no one else's."""
_trackers = itertools.count(1)


def _needle(value: str) -> bytes:
    """What ``b"\\0" + /proc/PID/environ`` contains when the marker's value starts with ``value``."""
    return f"\0{MARKER}={value}".encode()


def find_processes(pgid: int | None, needle: bytes) -> set[int]:
    """The live processes in process group ``pgid`` or whose environment contains ``needle``.

    Zombies are left out: they have exited and only wait for their parent (or init,
    which may be slow to reap) to collect them. So is this process. The result holds
    ``kill(2)`` targets: without ``/proc`` it is ``{-pgid}`` (the whole group) while
    the group has a member, zombies included.
    """
    if not _HAS_PROC:
        if pgid is None:
            return set()
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return set()
        except PermissionError:
            pass
        return {-pgid}
    found: set[int] = set()
    me = os.getpid()
    for name in os.listdir(_PROC):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"{_PROC}/{name}/stat", "rb") as stat:
                # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses
                fields = stat.read().rsplit(b")", 1)[1].split()
            if fields[0] in (b"Z", b"X"):
                continue
            if pgid is not None and int(fields[2]) == pgid:
                found.add(int(name))
                continue
            with open(f"{_PROC}/{name}/environ", "rb") as environ:
                if needle in b"\0" + environ.read():
                    found.add(int(name))
        except (OSError, IndexError, ValueError):  # gone meanwhile, or not ours to read
            continue
    return found


def terminate(find: Callable[[], set[int]], grace: float = KILL_GRACE) -> None:
    """SIGTERM what ``find()`` returns, then SIGKILL what it still returns after ``grace`` seconds.

    ``find`` is asked again at each poll, so a process forked meanwhile is signalled
    too; each process gets SIGTERM once (a second one makes some programs skip their
    clean shutdown). This blocks: call it in a worker thread from async code. A
    process that outlives SIGKILL for another ``grace`` (stuck in the kernel) is left.
    """
    deadline = time.monotonic() + grace
    warned: set[int] = set()
    while pids := find():
        now = time.monotonic()
        if now >= deadline + grace:
            return
        if now < deadline:
            targets, sig = pids - warned, signal.SIGTERM
            warned |= targets
        else:
            targets, sig = pids, signal.SIGKILL
        for pid in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        time.sleep(POLL)


@functools.cache
def _end_all_at_exit() -> None:
    """Once per process, at the first call: end every call's processes when this process exits."""
    needle = _needle(f"{_SERVER}/")
    atexit.register(terminate, lambda: find_processes(None, needle))


@dataclass(frozen=True)
class TrackedCall:
    """One ``bash`` call: the environment to start its shell with, and how to end what it started."""

    environment: dict[str, str]
    needle: bytes

    async def terminate(self, pgid: int) -> None:
        """End the call's process group (``pgid``) and every process carrying its marker."""
        await asyncio.to_thread(terminate, lambda: find_processes(pgid, self.needle))


class ProcessTracker:
    """The processes a session's ``bash`` calls started; :meth:`terminate_all` ends them when its run ends."""

    def __init__(self) -> None:
        self._prefix = f"{_SERVER}/{next(_trackers)}/"
        self._calls = itertools.count(1)
        self._started = False
        """Whether a call started since the last :meth:`terminate_all` (if not, there is nothing to end)."""

    def start_call(self) -> TrackedCall:
        _end_all_at_exit()
        self._started = True
        value = f"{self._prefix}{next(self._calls)}"
        return TrackedCall(environment={**os.environ, MARKER: value}, needle=_needle(value) + b"\0")

    async def terminate_all(self) -> None:
        """End every live process that this tracker's calls started (SIGTERM, SIGKILL after the grace)."""
        if not self._started:
            return
        self._started = False
        needle = _needle(self._prefix)
        await asyncio.to_thread(terminate, lambda: find_processes(None, needle))
