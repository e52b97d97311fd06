"""The temporary files of atomic writes: named so that agentls knows its own, and removed when stale.

:func:`agentls.tools.files.write_text_atomic` writes a file's new text to a temporary file
beside it, then renames that over the file. A server killed in between (kill -9, a crash,
the machine's power) leaves the temporary file behind. Its name says who made it::

    .NAME.agentls-PID-HEX.tmp

so that a later server can tell it from anyone else's file and delete it once the process
``PID`` no longer runs (:func:`remove_stale`). Nothing else is ever deleted: not a name of
another shape, not one whose writer (or a process that took its pid) still runs, not a
folder or a symlink. The functions here block: call them from a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterable

from agentls.tools.output_files import process_runs

_STALE = re.compile(r"\..+\.agentls-(\d+)-[0-9a-f]+\.tmp")


def temp_name(name: str) -> str:
    """The name of a new temporary file for an atomic write of ``name`` (a file name, no folder)."""
    return f".{name}.agentls-{os.getpid()}-{secrets.token_hex(8)}.tmp"


def remove_stale(folders: Iterable[str]) -> list[str]:
    """Delete the temporary files of atomic writes whose writer no longer runs, in ``folders``
    (not below them); the paths deleted. A folder that cannot be listed is passed over."""
    removed = []
    for folder in dict.fromkeys(folders):
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                match = _STALE.fullmatch(entry.name)
                if match is None or process_runs(int(match.group(1))):
                    continue
                with contextlib.suppress(OSError):
                    if stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode):
                        os.unlink(entry.path)
                        removed.append(entry.path)
    return removed
