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

How the processes are found: by what the kernel says, nothing a process can change
about itself. Each call's shell runs under a *keeper* (:mod:`agentls.tools.keeper`):
a small process that leads the call's own session and process group and is a child
subreaper, so that every process the command starts stays its descendant even once
its own parent has exited (a double fork, ``setsid x &``, ``env -i x &``, a daemon
that closes everything). A call's processes are then, from one scan of
``/proc/*/stat``: the keeper's descendants (followed by parent pid), and every process
in the keeper's session or process group (a net for a keeper that was killed, whose
orphans went to init). The keeper is known by its pid *and* its start time, so a
reused pid is never taken for it; it exits by itself once it has nothing left to reap.

What this cannot follow: a process that the command hands to another process outside
its tree to start (``systemd-run --user``, ``at``, a request to a running daemon), and,
if the keeper itself is killed, the orphans that had left its session. Without
``/proc`` or ``prctl`` (macOS) only the call's process group is ended: a process that
called ``setsid`` escapes there.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agentls.tools.environment import ToolEnvironment
from agentls.tools.output_files import OutputFolder

KILL_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL."""
POLL = 0.05
"""Seconds between two looks at whether the signalled processes are gone."""

_PROC = "/proc"
_HAS_PROC = os.path.isdir(f"{_PROC}/self")


@dataclass(frozen=True)
class _Stat:
    """What ``/proc/PID/stat`` says of a process."""

    ppid: int
    pgrp: int
    session: int
    started: int
    """Its start time (clock ticks after boot): with the pid, it names one process for good."""
    live: bool
    """Not a zombie (one that has exited and only waits to be reaped)."""


def _read_stat(pid: int | str) -> _Stat | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as stat:
            # "pid (comm) state ppid pgrp session ... starttime(22)": comm may hold spaces and parentheses
            fields = stat.read().rsplit(b")", 1)[1].split()
        ppid, pgrp, session, started = (int(fields[i]) for i in (1, 2, 3, 19))
        return _Stat(ppid, pgrp, session, started, live=fields[0] not in (b"Z", b"X"))
    except (OSError, IndexError, ValueError):  # gone meanwhile
        return None


def _scan() -> dict[int, _Stat]:
    """Every process's stat, this one's left out."""
    me = os.getpid()
    found: dict[int, _Stat] = {}
    for name in os.listdir(_PROC):
        if name.isdigit() and int(name) != me and (stat := _read_stat(name)) is not None:
            found[int(name)] = stat
    return found


@dataclass(frozen=True)
class TrackedCall:
    """One ``bash`` call, known by its keeper (pid and start time); :meth:`terminate` ends what it started."""

    keeper: int
    started: int | None
    """The keeper's start time, ``None`` without ``/proc``."""

    def keeper_alive(self, processes: dict[int, _Stat]) -> bool:
        """Whether the keeper (this one, not a later process with its pid) has not exited yet."""
        stat = processes.get(self.keeper)
        return stat is not None and stat.live and stat.started == self.started

    def members(self, processes: dict[int, _Stat]) -> set[int]:
        """The live processes of this call: the keeper's descendants, and its session and group."""
        found = {
            pid
            for pid, stat in processes.items()
            if stat.live and self.keeper in (stat.session, stat.pgrp) and pid != self.keeper
        }
        if self.keeper_alive(processes):
            children: dict[int, list[int]] = {}
            for pid, stat in processes.items():
                children.setdefault(stat.ppid, []).append(pid)
            todo = list(children.get(self.keeper, ()))
            while todo:
                pid = todo.pop()
                if processes[pid].live:
                    found.add(pid)
                todo.extend(children.get(pid, ()))
        return found

    async def terminate(self) -> None:
        """End every process this call started (SIGTERM, SIGKILL after the grace)."""
        await asyncio.to_thread(terminate, lambda: find_processes([self]))


def find_processes(calls: Iterable[TrackedCall]) -> set[int]:
    """The live processes of ``calls``, as ``kill(2)`` targets.

    Without ``/proc`` it is ``{-keeper}`` (the call's process group) for each call whose
    group still has a member, zombies included. The keepers themselves are left out:
    they end by themselves once what they reap is gone.
    """
    calls = list(calls)
    if not calls:
        return set()
    if not _HAS_PROC:
        return {-call.keeper for call in calls if _group_exists(call.keeper)}
    processes = _scan()
    return set().union(*(call.members(processes) for call in calls))


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


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


_live: set[TrackedCall] = set()
"""Every call of this process that may still have processes: what its exit ends."""


def _ended(calls: Iterable[TrackedCall]) -> set[TrackedCall]:
    """The calls whose keeper has exited: nothing of theirs can be left under it."""
    calls = list(calls)
    if not _HAS_PROC or not calls:
        return set()
    processes = _scan()
    return {call for call in calls if not call.keeper_alive(processes)}


@functools.cache
def _end_all_at_exit() -> None:
    """Once per process, at the first call: end every call's processes when this process exits."""
    atexit.register(terminate, lambda: find_processes(list(_live)))


class ProcessTracker:
    """What a session's commands start and leave: :meth:`terminate_all` ends their processes when
    its run ends, :meth:`close` also deletes their full-output files when the session closes.

    ``environment`` says what environment the calls' shells start with (by default:
    this process's, without the providers' API keys; see :mod:`agentls.tools.environment`).
    """

    def __init__(
        self, environment: ToolEnvironment | None = None, outputs: OutputFolder | None = None
    ) -> None:
        self.environment = environment or ToolEnvironment()
        self.outputs = outputs if outputs is not None else OutputFolder()
        """Where the calls' cut outputs are kept whole (a session's ``bash`` and ``agent/bash`` share one,
        which its ``read`` may open)."""
        self._calls: set[TrackedCall] = set()
        """The calls since the last :meth:`terminate_all` (or still holding processes)."""

    def track(self, keeper: int, started: int | None) -> TrackedCall:
        """A call whose keeper (just started) is ``keeper``, which started at ``started`` (see
        :attr:`TrackedCall.started`)."""
        _end_all_at_exit()
        call = TrackedCall(keeper, started)
        self._calls.add(call)
        _live.add(call)
        return call

    async def terminate_all(self) -> None:
        """End every live process that this tracker's calls started (SIGTERM, SIGKILL after the grace)."""
        if not self._calls:
            return
        calls = set(self._calls)
        await asyncio.to_thread(terminate, lambda: find_processes(calls))
        ended = await asyncio.to_thread(_ended, calls)
        self._calls -= ended
        _live.difference_update(ended)

    async def close(self) -> None:
        """The session is over: end what its calls left running and delete their output files."""
        await self.terminate_all()
        await asyncio.to_thread(self.outputs.remove)
