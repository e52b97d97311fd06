"""Reading the files a client names (faux scripts, ``models.json``, session files) without trusting them,
and writing agentls's own JSON files whole.

A client chooses the data folder and the faux script, so a path may name a folder, a
FIFO that never delivers (a plain ``open`` would block the server), a device such as
``/dev/zero`` that never ends, or a file of any size and content. These helpers open
only regular files, without blocking, read at most a limit, and parse strict JSON
(no ``NaN`` or infinities, which JSON does not have) with every failure an ``OSError``
(cannot read) or a ``ValueError`` (unusable content).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

MAX_CONFIG_BYTES = 16 * 1024 * 1024
"""The largest configuration file (faux script, ``models.json``, permission rules) read."""

_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)


class NotARegularFile(OSError):
    def __init__(self, path: Path) -> None:
        super().__init__(errno.EINVAL, "not a regular file", str(path))


def open_regular_file(path: Path) -> BinaryIO:
    """``path`` opened for reading in binary, provided it is a regular file; raises :class:`OSError`."""
    fd = os.open(path, _FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class JsonTooDeep(ValueError):
    """JSON nested deeper than the parser's stack allows."""


def _not_a_value(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        shown = repr(text) if len(text) <= 58 else repr(text[:57]) + "…"
        raise ValueError(f"the number {shown} is out of range")
    return value


def parse_strict_json(data: bytes | str, *, allow_nan: bool = False, finite: bool = False) -> Any:
    """JSON as RFC 8259 has it; raises :class:`ValueError`, :class:`JsonTooDeep` for deep nesting.

    ``allow_nan`` also takes ``NaN`` and ``Infinity`` as Python writes them; ``finite``
    refuses numbers beyond the float range (``1e999``), which would read as infinity.
    """
    hooks: dict[str, Any] = {} if allow_nan else {"parse_constant": _not_a_value}
    if finite:
        hooks["parse_float"] = _finite_float
    try:
        return json.loads(data, **hooks)
    except RecursionError:
        raise JsonTooDeep("the JSON is nested too deeply") from None


def read_json_file(path: Path, *, limit: int = MAX_CONFIG_BYTES, allow_nan: bool = False) -> Any:
    """The strict JSON content of a regular file of at most ``limit`` bytes.

    Raises :class:`OSError` when it cannot be read (``FileNotFoundError`` when it is
    missing) and :class:`ValueError` when its content is unusable.
    """
    with open_regular_file(path) as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"the file is larger than {limit} bytes")
    return parse_strict_json(data, allow_nan=allow_nan)


def write_json_file(path: Path, data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as the whole of ``path`` atomically: a temporary file beside it, then a rename,
    so a reader (another server, a crash) never sees half a file. ``indent=None``: compact.

    Raises :class:`OSError` when it cannot be written; the temporary file is then removed.
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            # json.dumps, not json.dump: only a whole-value dump without indent takes the C encoder
            file.write(json.dumps(data, indent=indent, separators=None if indent else (",", ":")))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
