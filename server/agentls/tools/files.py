"""Atomic file writes: what the disk workspace does for ``write`` and ``edit``."""

from __future__ import annotations

import contextlib
import os
import stat as stat_module
import tempfile
from pathlib import Path


def _new_file_mode() -> int:
    """``0o666`` less the process umask: the mode ``open()`` gives a new file.

    Read once at import: ``os.umask`` can only be read by setting it, which is not
    safe to do from the worker threads the writes run in.
    """
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


_NEW_FILE_MODE = _new_file_mode()


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically, creating parent folders.

    The bytes go to a temporary file in the same folder, are flushed to disk, and the
    temporary file then replaces ``path`` with ``os.replace``: readers see the old
    content or the new, never a partial file. An existing file keeps its permission
    bits; a symlink is followed, so its target is replaced and the link stays.
    The text is written as is (no newline translation). Blocking: run it in a thread.
    """
    data = text.encode("utf-8")
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat_module.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    fd, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
