"""The keepers of shell commands, and the spawner that forks them: ``python -I -S keeper.py FD``.

**A keeper** is the parent of one ``bash -c COMMAND`` (:mod:`agentls.tools.shell`): the leader of
the call's own session, with stdin, the output pipe on fd 1 and a status pipe on fd 2. It makes
itself a *child subreaper* (Linux's ``PR_SET_CHILD_SUBREAPER``), starts ``bash`` with fd 1 as its
stdout and stderr, and then lives for as long as anything the command started lives: a process
whose parent exits is re-parented by the kernel to its nearest subreaper ancestor, this keeper,
rather than to init. So every process the call started, however it forked, whatever it did to its
environment, process group or session, stays a descendant of the keeper, and
:mod:`agentls.tools.processes` finds them by walking the kernel's parent links down from it. The
keeper reaps each one as it ends and exits when it has no child left.

What it writes on fd 2, one line each: ``spawned PID`` once bash runs (or ``error TEXT`` if it
cannot start, or cannot enter the command's folder), then ``exit CODE`` when bash exits (a
negative code: killed by that signal); it then closes fd 2. It ignores SIGTERM, SIGINT and SIGHUP
(bash gets them back to their defaults): when a call is ended, its processes are signalled and the
keeper, their reaper, outlives them. It holds its *lifeline* as fd 3 (closed on exec: bash does not
inherit it) until it exits, so that the server, whose child it is not, sees it end.

Sandboxed (``--confine PLAN`` before ``bash``), it first confines itself as the JSON ``PLAN`` says
(:func:`agentls.tools.landlock.confine`, loaded by path), so bash and everything it starts inherit
the sandbox, and stays the subreaper all the same. If it cannot, it writes ``refused TEXT`` on fd
2 and exits 126 without starting bash. Where ``prctl`` is missing (macOS) orphans go to init as
usual; the keeper then exits with bash, and the call's processes are found by process group only.

**The spawner** (this file run by path with ``-I -S``, one per server:
:mod:`agentls.tools.keeper_spawner`) forks a keeper for each request read on the Unix socket FD,
so that a call does not wait for a Python to start (~10 ms). A request is its length (8 bytes,
big-endian) and JSON ``{argv, cwd, env}`` (``argv``: ``[--confine PLAN] bash -c COMMAND``), with
four descriptors passed along (SCM_RIGHTS): the keeper's stdin, fd 1, fd 2 and lifeline. The
answer is a line: ``PID STARTED`` (the keeper's start time from ``/proc``, ``-`` without it, read
while the spawner cannot have reaped it yet) or ``error TEXT``. It reaps its keepers, and exits at
the socket's end. It imports nothing of agentls: what every keeper needs (``ctypes``' libc, the
sandbox's module) is loaded once, in the spawner.
"""

from __future__ import annotations

import _signal
import ctypes
import importlib.util
import json
import os
import socket
import sys
from types import ModuleType

PR_SET_CHILD_SUBREAPER = 36
IGNORED = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
RESET = (*IGNORED, _signal.SIGPIPE, _signal.SIGQUIT, _signal.SIGTSTP, _signal.SIGTTIN, _signal.SIGTTOU)
"""Signals bash gets at their default action (Python ignores SIGPIPE; the keeper ignores more)."""
LIFELINE = 3

_libc = ctypes.CDLL(None, use_errno=True)
_landlock: ModuleType | None = None


def become_subreaper() -> None:
    prctl = getattr(_libc, "prctl", None)
    if prctl is not None:  # none on macOS: orphans go to init
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def report(line: str) -> None:
    os.write(2, f"{line}\n".encode("utf-8", "replace"))


def landlock() -> ModuleType:
    """The sandbox's module (``landlock.py`` beside this file), loaded once."""
    global _landlock
    if _landlock is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")
        spec = importlib.util.spec_from_file_location("agentls_landlock", path)
        assert spec is not None and spec.loader is not None
        _landlock = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_landlock)
    return _landlock


def confine(plan: str) -> str | None:
    """Confine this process as ``plan`` says; what went wrong, if anything."""
    try:
        landlock().confine(json.loads(plan))
    except OSError as error:
        return str(error.strerror or error)
    return None


def keep(argv: list[str]) -> int:
    """Be the keeper of ``argv`` (``[--confine PLAN] bash -c COMMAND``) until nothing it started runs."""
    become_subreaper()
    if argv[0] == "--confine":
        if (problem := confine(argv[1])) is not None:
            report(f"refused {problem}")
            return 126
        argv = argv[2:]
    for sig in IGNORED:
        _signal.signal(sig, _signal.SIG_IGN)
    try:
        shell = os.posix_spawnp(
            argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, 1, 2)], setsigdef=RESET
        )
    except OSError as error:
        report(f"error {argv[0]}: {error.strerror or error}")
        return 127
    report(f"spawned {shell}")
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 1)  # the output pipe is bash's now: its reader sees the end when bash's side closes
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:  # nothing the command started runs any more
            return 0
        if pid == shell:
            report(f"exit {os.waitstatus_to_exitcode(status)}")
            os.dup2(quiet, 2)


# --- the spawner ------------------------------------------------------------------------------


def _reap(signum: int, frame: object) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _started(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return "-"


def _request(sock: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    """The next request and its descriptors; ``None`` at the socket's end."""
    data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 4)
    body = bytearray(data)
    while len(body) < 8 or len(body) < 8 + int.from_bytes(body[:8], "big"):
        if not data:
            for fd in fds:
                os.close(fd)
            return None
        data = sock.recv(1 << 20)
        body += data
    return json.loads(body[8:]), fds


def _become_keeper(request: dict[str, object], fds: list[int], sock: socket.socket) -> int:
    """In the forked child: take the request's descriptors, environment and folder, then keep its command."""
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    os.setsid()
    stdin, output, status, lifeline = fds
    for fd, to in ((stdin, 0), (output, 1), (status, 2)):
        os.dup2(fd, to)
    os.dup2(lifeline, LIFELINE, inheritable=False)
    for fd in {*fds, sock.fileno()} - {0, 1, 2, LIFELINE}:
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])  # type: ignore[call-overload]
    try:
        os.chdir(request["cwd"])  # type: ignore[arg-type]
    except OSError as error:
        report(f"error {request['cwd']}: {error.strerror or error}")
        return 127
    return keep(request["argv"])  # type: ignore[arg-type]


def spawner(sock: socket.socket) -> int:
    """Fork a keeper for each request read on ``sock`` until its end (see the module)."""
    _signal.signal(_signal.SIGCHLD, _reap)
    while (request := _request(sock)) is not None:
        body, fds = request
        blocked = _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGCHLD})  # no reaping before _started
        try:
            pid = os.fork()
        except OSError as error:
            answer = f"error {error.strerror or error}"
        else:
            if pid == 0:
                code = 126
                try:
                    _signal.pthread_sigmask(_signal.SIG_SETMASK, blocked)
                    code = _become_keeper(body, fds, sock)
                finally:
                    os._exit(code)
            answer = f"{pid} {_started(pid)}"
        for fd in fds:
            os.close(fd)
        try:
            sock.sendall(f"{answer}\n".encode())
        finally:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, blocked)
    return 0


if __name__ == "__main__":
    sys.exit(spawner(socket.socket(fileno=int(sys.argv[1]))))
