"""Where the full output of a cut command goes (``fullOutputPath``), and when it is deleted.

Each server process has one folder in the system's temporary folder,
``agentls-server-<pid>-<random>`` (made by :func:`tempfile.mkdtemp`: private to the user), and
each :class:`OutputFolder` (one per session's ``bash`` tool, one per its ``agent/bash``)
a ``session-<random>`` folder in it, made when its first output is cut. A session's
folder is deleted when the session closes; the server's when the server exits. A server
that could not clean up (killed) leaves its folder behind: the next server to cut an
output deletes every ``agentls-server-<pid>-*`` folder of the same user whose pid no longer
runs. Every function here blocks: call them from a worker thread.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
import threading

_SERVER_FOLDER = re.compile(r"agentls-server-(\d+)-[A-Za-z0-9_]+")
_lock = threading.Lock()
_root: str | None = None


def process_runs(pid: int) -> bool:
    """Whether a process ``pid`` runs (this one included), whoever it belongs to."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        pass
    return True


def remove_stale_folders(parent: str | None = None) -> list[str]:
    """Delete the folders that servers no longer running left in ``parent`` (the temporary folder).

    Only the user's own folders named ``agentls-server-<pid>-…`` are deleted, and only when no
    process has that pid. Returns the paths deleted.
    """
    parent = parent or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for entry in entries:
            match = _SERVER_FOLDER.fullmatch(entry.name)
            if match is None or int(match.group(1)) == os.getpid():
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not entry.is_dir(follow_symlinks=False) or info.st_uid != os.getuid():
                continue
            if not process_runs(int(match.group(1))):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed


def server_folder() -> str:
    """This server's folder, made (and the stale ones of dead servers removed) on first use.

    Whatever this process keeps in it is deleted when it exits, or by the next server if
    it is killed.
    """
    global _root
    with _lock:
        if _root is None or not os.path.isdir(_root):
            remove_stale_folders()
            _root = tempfile.mkdtemp(prefix=f"agentls-server-{os.getpid()}-")
            atexit.register(shutil.rmtree, _root, True)
        return _root


class OutputFolder:
    """The full-output files of one session's commands: made on demand, deleted by :meth:`remove`."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._lock = threading.Lock()

    def new_file(self, prefix: str) -> tuple[int, str]:
        """A new file (``PREFIX….log``) for one command's output: its open descriptor and its path."""
        with self._lock:
            if self._path is None or not os.path.isdir(self._path):
                self._path = tempfile.mkdtemp(prefix="session-", dir=server_folder())
            return tempfile.mkstemp(prefix=prefix, suffix=".log", dir=self._path)

    def holds(self, path: str) -> bool:
        """Whether ``path`` names a file in this folder: one of its outputs (which ``read`` may open)."""
        folder = self._path
        if folder is None or not os.path.isabs(path):
            return False
        real = os.path.realpath(path)
        return os.path.dirname(real) == os.path.realpath(folder) and os.path.isfile(real)

    def remove(self) -> None:
        """Delete every output file made so far (the next cut output makes the folder again)."""
        with self._lock:
            path, self._path = self._path, None
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
