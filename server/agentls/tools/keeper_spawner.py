"""The keepers of shell commands, forked by one spawner process instead of a Python started for each.

Every ``bash`` call runs under a keeper (:mod:`agentls.tools.keeper`). Started as a process of
its own (``python -I -S keeper.py``), each keeper paid a Python's start, ~10 ms of every call and
most of a short command's. Instead, one *spawner* (``keeper.py FD``), started with a server's first
session (:func:`start_soon`) or else by the first call, forks them: every call asks it for a
keeper over a Unix socket: the request (the keeper's arguments,
the folder, the environment) with four descriptors (stdin, the output pipe, the status pipe, the
lifeline; SCM_RIGHTS). The spawner forks, the child becomes the keeper, and the answer is its pid
and start time, read before the spawner can reap it, so that they name it for good.

The keeper is the spawner's child, not this process's: its end is seen as the end of its
*lifeline*, a pipe whose only write end it holds (closed on exec, so that nothing it starts holds
it). The spawner lives in a session of its own (a terminal's Ctrl-C, under ``agentls chat``, is
not for it) and exits when this process's end of the socket closes; one that is gone (killed) is
started again by the next call. The exchange blocks: :func:`spawn` runs in a worker thread, one
call at a time.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

KEEPER = str(Path(__file__).with_name("keeper.py"))
ANSWER_SECONDS = 30.0
"""How long the spawner may take to answer (it forks at once; one that does not answer, stopped
or stuck, is killed and the command fails)."""


class _Spawner:
    """The spawner process and this process's end of its socket."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def ensure(self) -> None:
        with self._lock:
            self._start_unless_running()

    def spawn(self, request: bytes, fds: list[int]) -> tuple[int, int | None]:
        with self._lock:
            self._start_unless_running()
            assert self._socket is not None
            try:
                self._send(self._socket, request, fds)
            except OSError:  # gone since its last answer: nothing was forked, so ask a new one
                self._start()
                self._send(self._socket, request, fds)
            return self._answer(self._socket)

    def _start_unless_running(self) -> None:
        """Under the lock."""
        if not self.running():
            self._start()

    def _start(self) -> None:
        self._stop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", KEEPER, str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        self._socket = ours

    def _stop(self) -> None:
        if self._socket is not None:
            self._socket.close()  # the spawner exits at the socket's end
            self._socket = None
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
            self._process = None

    @staticmethod
    def _send(sock: socket.socket, request: bytes, fds: list[int]) -> None:
        message = len(request).to_bytes(8, "big") + request
        sent = socket.send_fds(sock, [message[: 1 << 16]], fds)
        sock.sendall(message[sent:])

    def _answer(self, sock: socket.socket) -> tuple[int, int | None]:
        sock.settimeout(ANSWER_SECONDS)
        answer = b""
        while not answer.endswith(b"\n"):
            try:
                chunk = sock.recv(256)
            except TimeoutError:
                chunk = b""
            if not chunk:
                self._stop()
                raise OSError("the process that starts the commands' keepers ended or did not answer")
            answer += chunk
        first, _, second = answer.decode("utf-8", "replace").strip().partition(" ")
        if first == "error":
            raise OSError(f"cannot start the command's keeper: {second}")
        return int(first), int(second) if second.isdigit() else None


_spawner = _Spawner()


def spawn(
    argv: list[str], cwd: str | os.PathLike[str], env: dict[str, str], fds: list[int]
) -> tuple[int, int | None]:
    """Fork a keeper of ``argv`` (``[--confine PLAN] bash -c COMMAND``) in ``cwd`` with ``env``, and
    ``fds`` as its stdin, fd 1, fd 2 and lifeline; its pid and start time (``None`` without
    ``/proc``). Blocks: call it in a worker thread. ``OSError`` when it cannot be started."""
    request = json.dumps({"argv": argv, "cwd": os.fspath(cwd), "env": env}).encode()
    return _spawner.spawn(request, fds)


def start_soon() -> None:
    """Start the spawner in a thread unless it runs: a session's first command then finds it ready
    (a command that starts it waits ~25 ms more)."""
    if not _spawner.running():
        threading.Thread(target=_spawner.ensure, name="agentls-keeper-spawner", daemon=True).start()
