"""The keeper of one ``bash`` call: ``python -I -S keeper.py bash -c COMMAND``.

Run by :mod:`agentls.tools.shell` as the leader of the call's own session, with the
output pipe on fd 1 and a status pipe on fd 2. It makes itself a *child subreaper*
(Linux's ``PR_SET_CHILD_SUBREAPER``), starts ``bash`` with fd 1 as its stdout and
stderr, and then lives for as long as anything the command started lives: a process
whose parent exits is re-parented by the kernel to its nearest subreaper ancestor,
this keeper, rather than to init. So every process the call started, however it
forked, whatever it did to its environment, process group or session, stays a
descendant of the keeper, and :mod:`agentls.tools.processes` finds them by walking the
kernel's parent links down from it. The keeper reaps each one as it ends and exits
when it has no child left.

What it writes on fd 2, one line each: ``spawned PID`` once bash runs (or
``error TEXT`` if it cannot start), then ``exit CODE`` when bash exits (a negative
code: killed by that signal); it then closes fd 2. It ignores SIGTERM, SIGINT and
SIGHUP (bash gets them back to their defaults): when a call is ended, its processes
are signalled and the keeper, their reaper, outlives them.

Sandboxed: ``keeper.py --confine PLAN bash -c COMMAND`` first confines itself as the JSON
``PLAN`` says (:func:`agentls.tools.landlock.confine`, loaded by path), so bash and everything
it starts inherit the sandbox, and stays the subreaper all the same. If it cannot, it writes
``refused TEXT`` on fd 2 and exits 126 without starting bash.

Where ``prctl`` is missing (macOS) orphans go to init as usual; the keeper then exits
with bash, and the call's processes are found by process group only. This file is run
by path with ``-I -S``: it imports nothing of agentls and only what starts fast. Every ``bash``
call waits for its start (25 ms of it was imports), so what only a confined call needs
(``json``, ``importlib.util``, which import ``re`` and more) is imported by :func:`confine`,
and the signals come from ``_signal``, the C module under ``signal`` (which builds its enums
with ``enum``: 4-5 ms).
"""

import _signal
import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36
IGNORED = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)
RESET = (*IGNORED, _signal.SIGPIPE, _signal.SIGQUIT, _signal.SIGTSTP, _signal.SIGTTIN, _signal.SIGTTOU)
"""Signals bash gets at their default action (Python ignores SIGPIPE; the keeper ignores more)."""


def become_subreaper() -> None:
    try:  # noqa: SIM105 (contextlib.suppress: its import is 2-3 ms of each start)
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl (not Linux): orphans go to init
        pass


def report(line: str) -> None:
    os.write(2, f"{line}\n".encode("utf-8", "replace"))


def confine(plan: str) -> str | None:
    """Confine this process as ``plan`` says; what went wrong, if anything."""
    import importlib.util
    import json

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "landlock.py")
    spec = importlib.util.spec_from_file_location("agentls_landlock", path)
    assert spec is not None and spec.loader is not None
    landlock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(landlock)
    try:
        landlock.confine(json.loads(plan))
    except OSError as error:
        return str(error.strerror or error)
    return None


def main(argv: list[str]) -> int:
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
