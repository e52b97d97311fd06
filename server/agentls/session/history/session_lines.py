"""The lines of a session file: an entry as one line of JSON, and a line read back as JSON.

A session file is JSON Lines. Writing refuses what could not be read back (non-JSON
values, nesting beyond :data:`MAX_DEPTH`, lines beyond :data:`MAX_LINE_BYTES`); reading is
strict (no ``NaN``/``Infinity``, no number out of float range, nesting only as deep as the
stack allows) and never holds more than one line of :data:`MAX_LINE_BYTES` in memory.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import orjson

from agentls.ai.local_files import JsonTooDeep, NotARegularFile, open_regular_file, parse_strict_json
from agentls.session.history.store_errors import SessionNotFound, SessionStoreError

__all__ = [
    "BINARY",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "Line",
    "LineValues",
    "Unreadable",
    "brief",
    "cannot_read",
    "encode_line",
    "exact_value",
    "open_session_file",
    "parse_line_roughly",
    "read_lines",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line (in bytes, without its newline) the store writes or reads.

Longer lines in a file are skipped without being held in memory; an entry that would be
longer (a prompt with very many images, say) is refused when it is appended."""

MAX_DEPTH = 100
"""How deeply arrays and objects may nest in a line the store writes.

Python's JSON parser recurses once per level and fails at the interpreter's recursion
limit, minus whatever the stack already holds where it runs; this bound keeps every
written line far below that, wherever it is read."""

_BLOCK = 64 * 1024

_WHOLE_FILE = 1024 * 1024
"""A file shorter than this is read at once by :class:`LineValues`, all its lines' values held at once
(a few times its size)."""

BINARY = getattr(os, "O_BINARY", 0)
"""Windows would otherwise translate ``"\\n"`` to ``"\\r\\n"`` on ``os.write``."""

_SHAPE = bytes.maketrans(b"0123456789{", b"0000000000[")
"""Every digit as ``0``, every ``{`` as ``[``: what :func:`exact_value` looks for, found in one copy."""
_LONG_NUMBER = b"0" * 19
"""19 digits in a row (once every digit is a ``0``): maybe an integer beyond 64 bits, which ``orjson``
reads as a float, or only digits in a string (an id, a tool's output). ``bytes.translate`` and ``in``
find them ten times faster than a regular expression."""
_HUGE = 2.0**63
"""The least magnitude of what ``orjson`` makes of an integer beyond 64 bits (below -2**63, from 2**64)."""


# --- writing ---------------------------------------------------------------------------


def encode_line(entry: dict[str, Any], what: str) -> bytes:
    """One entry as one line of UTF-8 JSON that reading gives back (:func:`exact_value`).

    ``json.dumps`` escapes every control character, so the line holds no raw newline.
    A lone surrogate (which UTF-8 cannot encode) comes out as its JSON escape ``\\udXXX``
    thanks to ``backslashreplace``, so it survives the round trip. Raises
    :class:`SessionStoreError` naming ``what`` if the entry cannot be stored.
    """
    try:
        text = json.dumps(_storable(entry, 0), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise SessionStoreError(
            f"Cannot save {what}: it is not JSON data ({error}); whatever put it in the message "
            "must use JSON-compatible values"
        ) from error
    # U+2028/U+2029 are line breaks to str.splitlines (and to old JavaScript); escape them
    # so that every reader sees one entry per line. They can only occur inside strings.
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    line = (text + "\n").encode("utf-8", "backslashreplace")
    if len(line) > MAX_LINE_BYTES + 1:
        raise SessionStoreError(
            f"Cannot save {what}: it is {len(line) - 1} bytes as JSON, more than the {MAX_LINE_BYTES} "
            "a session file line may hold; send smaller images or tool output"
        )
    return line


def _storable(value: Any, depth: int) -> Any:
    """``value`` with every non-finite float replaced by 0, checked for its nesting depth.

    JSON has no NaN or Infinity, and the reader refuses them. 0 rather than JavaScript's
    ``null`` because the float fields of a message (a usage cost computed from a bad
    price, say) must still validate when the message is loaded. Raises ``ValueError``
    beyond :data:`MAX_DEPTH` levels (which also ends a circular structure).
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else 0.0
    if isinstance(value, dict | list | tuple):
        if depth >= MAX_DEPTH:
            raise ValueError(f"it nests more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return {key: _storable(item, depth + 1) for key, item in value.items()}
        return [_storable(item, depth + 1) for item in value]
    return value


# --- reading ---------------------------------------------------------------------------


class Line(NamedTuple):
    """One line of a session file, as :func:`read_lines` reads it (a tuple: made for every line)."""

    number: int
    content: bytes | None
    """The line without its newline; ``None`` when it is longer than :data:`MAX_LINE_BYTES`."""
    size: int
    ended: bool
    """Whether a newline ends it (only the last line of a file can lack one)."""


def open_session_file(path: Path, session_id: str) -> BinaryIO:
    """``path`` opened for reading, provided it is a regular file (:func:`open_regular_file`)."""
    try:
        return open_regular_file(path)
    except FileNotFoundError:
        raise SessionNotFound(session_id, path.parent) from None
    except NotARegularFile:
        what = "a folder" if path.is_dir() else "not a regular file"
        raise SessionStoreError(
            f"{path} is {what}, not a session file; move it out of the sessions folder {path.parent}"
        ) from None
    except OSError as error:
        raise cannot_read(path, error) from error


def cannot_read(path: Path, error: OSError) -> SessionStoreError:
    return SessionStoreError(f"Cannot read session file {path} ({error}); check the file's permissions")


def read_lines(file: BinaryIO) -> Iterator[Line]:
    """The lines of ``file``, holding at most :data:`MAX_LINE_BYTES` of one line in memory.

    Read in blocks of :data:`_BLOCK` bytes, cut at their newlines: a ``readline`` per line took a
    third longer.
    """
    return _cut(_blocks(file))


def _blocks(file: BinaryIO) -> Iterator[bytes]:
    return iter(functools.partial(file.read, _BLOCK), b"")


def _cut(blocks: Iterator[bytes]) -> Iterator[Line]:
    """The lines of a file read as ``blocks`` (of any sizes)."""
    number = 0
    pending: list[bytes] = []
    """The start of a line that a block did not finish (nothing once it is too long to keep)."""
    pending_size = 0
    for block in blocks:
        start = 0
        while (end := block.find(b"\n", start)) != -1:
            number += 1
            size = pending_size + end - start
            if size > MAX_LINE_BYTES:
                yield Line(number, None, size, True)
            elif pending:
                yield Line(number, b"".join(pending) + block[start:end], size, True)
            else:
                yield Line(number, block[start:end], size, True)
            pending, pending_size = [], 0
            start = end + 1
        pending_size += len(block) - start
        if pending_size > MAX_LINE_BYTES:
            pending = []
        elif start < len(block):
            pending.append(block[start:])
    if pending_size:  # the end of the file, without a newline
        content = b"".join(pending) if pending_size <= MAX_LINE_BYTES else None
        yield Line(number + 1, content, pending_size, False)


class Unreadable(NamedTuple):
    """What :class:`LineValues` gives for a line that has no value."""

    reason: str
    """What is wrong with it (:func:`parse_line_roughly`'s ``ValueError``)."""
    ended: bool
    """Whether a newline ends it: one that does not is the end of a write that did not finish."""


class LineValues:
    """The lines of a session file that are not blank, as ``(number, content, value)``: the line's
    number from 1, its bytes (empty for one too long to keep) and its JSON value as ``orjson`` reads
    it (:func:`parse_line_roughly`; :func:`exact_value` makes it the strict parser's), or
    :class:`Unreadable`.

    A file shorter than :data:`_WHOLE_FILE` (nearly every session) is read at once and, if ``orjson``
    reads every line of it, parsed in one ``map`` over its lines: a listing reads 25,000 lines of
    1,000 sessions, and going through them one by one in Python took 15% longer. Any other file
    is read line by line as :func:`read_lines` reads it.
    """

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.ends_with_newline = False
        """Whether the file's last line ends with a newline (once the lines are read)."""

    def __iter__(self) -> Iterator[tuple[int, bytes, Any]]:
        blocks = _blocks(self._file)
        size = os.fstat(self._file.fileno()).st_size
        if size < _WHOLE_FILE:
            start = self._file.read(size + 1)  # not more: a buffered read makes room for all it is asked
            if len(start) > size:  # the file grew since
                blocks = itertools.chain((start,), blocks)
            elif (values := self._at_once(start)) is not None:
                return values
            else:
                blocks = iter((start,))
        return self._one_by_one(_cut(blocks))

    def _at_once(self, data: bytes) -> Iterator[tuple[int, bytes, Any]] | None:
        """The lines of a whole file's ``data``; ``None`` if ``orjson`` does not read one of them
        (blank, damaged, or only the strict parser's)."""
        contents = data.split(b"\n")
        ended = not contents[-1]  # the file ends with a newline, or is empty
        if ended:
            contents.pop()
        try:
            values = list(map(orjson.loads, contents))
        except orjson.JSONDecodeError:
            return None
        self.ends_with_newline = ended and bool(contents)
        return zip(itertools.count(1), contents, values, strict=False)

    def _one_by_one(self, lines: Iterator[Line]) -> Iterator[tuple[int, bytes, Any]]:
        for line in lines:
            self.ends_with_newline = line.ended
            content = line.content
            if content is not None and not content.strip():
                continue
            try:
                value = parse_line_roughly(line)
            except ValueError as error:
                value = Unreadable(str(error), line.ended)
            yield line.number, content or b"", value


def parse_line_roughly(line: Line) -> Any:
    """The JSON value of ``line`` as ``orjson`` reads it (several times faster than the strict
    parser), or, where ``orjson`` reads none, the strict parser's; ``ValueError`` saying what is
    wrong if it has none.

    The strict parser is stricter than plain ``json.loads``: ``NaN``, ``Infinity`` and numbers
    beyond the float range (``1e999``) are errors rather than floats that fail every later
    comparison, and nesting too deep for the stack is an error rather than a ``RecursionError``.
    ``orjson`` refuses all that too, and more (lone surrogates, nesting beyond 1024), but it reads
    integers beyond 64 bits as floats and takes nesting the strict parser may refuse:
    :func:`exact_value` makes its value the strict parser's, for a reader that needs every value
    as written (loading). A listing's summary takes a message entry's envelope as it is: its fields
    read the same either way.
    """
    content = _content(line)
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return _parse_strictly(content)


def exact_value(content: bytes, value: Any) -> Any:
    """``value``, :func:`parse_line_roughly`'s reading of a line's ``content``, as the strict parser
    reads the line: ``value`` itself, or the strict parser's value (or its ``ValueError``) where
    ``orjson``'s may differ: integers beyond 64 bits (floats to ``orjson``) and nesting beyond
    :data:`MAX_DEPTH`, where the strict parser's limit is the stack's.
    """
    shape = content.translate(_SHAPE)
    if (shape.count(b"[") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH)) or (  # arrays and objects opened
        _LONG_NUMBER in shape and _holds_huge_float(value)
    ):
        return _parse_strictly(content)
    return value


def _content(line: Line) -> bytes:
    if line.content is None:
        raise ValueError(f"it is {line.size} bytes long, more than the {MAX_LINE_BYTES} a line may hold")
    return line.content


def _parse_strictly(content: bytes) -> Any:
    """A line's ``content`` read by the strict parser; ``ValueError`` saying what is wrong."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8: {error.reason} at byte {error.start + 1}") from None
    try:
        return parse_strict_json(text, finite=True)
    except JsonTooDeep:
        raise ValueError("not JSON that can be read: it nests too deeply") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error.msg} at column {error.colno}") from None
    except ValueError as error:  # from the hooks above, or an integer of too many digits
        raise ValueError(f"not JSON that can be read: {error}") from None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest in ``value`` more than ``limit`` levels deep."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        level = [
            item
            for container in level
            for item in (container.values() if isinstance(container, dict) else container)
            if isinstance(item, dict | list)
        ]
        if not level:
            return False
    return True


def _holds_huge_float(value: Any) -> bool:
    """Whether ``value`` holds a float of :data:`_HUGE` or more (either sign): maybe an integer that
    ``orjson`` read as a float (``value`` nests at most :data:`MAX_DEPTH` levels deep)."""
    level = [value]
    while level:
        inner: list[Any] = []
        for item in level:
            if isinstance(item, float):
                if abs(item) >= _HUGE:
                    return True
            elif isinstance(item, dict):
                inner.extend(item.values())
            elif isinstance(item, list):
                inner.extend(item)
        level = inner
    return False


def brief(value: Any) -> str:
    """``repr(value)``, cut short: damaged values can be huge and go into log lines."""
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
