"""The LSP base framing (``Content-Length`` headers, then the body), read defensively.

pygls reads a frame's body with whatever length the header claims, outside its error
handling: ``Content-Length: 99999999999999999999`` or ``1000000000000`` ended the
process. :class:`FrameParser` is a sans-IO parser that never trusts the peer: a body
larger than the limit, a header line that is not a header, a header block without
``Content-Length`` or an endless header line becomes a :class:`FramingError` (which the
server answers and logs), and the parser resynchronises on the next
``Content-Length:`` header. Memory stays bounded by the limit whatever arrives.

Resynchronising by searching for ``Content-Length:`` is safe for any body that is
valid JSON: JSON cannot contain that text followed by a raw line break outside a
string, and a string cannot hold a raw line break. So an oversized body sent honestly
is skipped whole, and a lying length is skipped up to the next real header.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import BinaryIO

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""A frame body larger than this is refused (``--max-message-bytes`` / ``AGENTLS_MAX_MESSAGE_BYTES``)."""

MAX_HEADER_LINE = 8192
"""Longest header line accepted; real clients send ~30 bytes."""

_HEADER = re.compile(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$")
_NEXT_HEADER = re.compile(rb"content-length:", re.IGNORECASE)
_TAIL = len(b"content-length:") - 1
"""Bytes kept from the end of skipped data, so a header split across two reads is found."""


def frame_bytes(body: bytes) -> bytes:
    """``body`` after its ``Content-Length`` header (the only one: ``Content-Type`` is optional)."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@dataclass(frozen=True, slots=True)
class Frame:
    body: bytes


@dataclass(frozen=True, slots=True)
class FramingError:
    """Input that is not a frame; the parser has skipped it and looks for the next header."""

    message: str
    too_large: bool = False


class FrameParser:
    """Feed it bytes as they arrive; it returns the complete frames and framing errors, in order."""

    def __init__(self, max_body: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.max_body = max_body
        self._buffer = bytearray()
        self._length: int | None = None
        """The announced body length, once the header block has ended."""
        self._header_length: int | None = None
        self._skipping = False

    def feed(self, data: bytes) -> list[Frame | FramingError]:
        self._buffer += data
        out: list[Frame | FramingError] = []
        while True:
            if self._skipping and not self._resynchronise():
                break
            if self._length is not None:
                if len(self._buffer) < self._length:
                    break
                body = bytes(self._buffer[: self._length])
                del self._buffer[: self._length]
                self._length = None
                out.append(Frame(body))
                continue
            line_end = self._buffer.find(b"\n")
            if line_end < 0:
                if len(self._buffer) > MAX_HEADER_LINE:
                    del self._buffer[:-_TAIL]  # too short to hold a header: resynchronising moves on
                    out.append(self._skip(f"a header line longer than {MAX_HEADER_LINE} bytes"))
                    continue
                break
            line = bytes(self._buffer[:line_end]).rstrip(b"\r")
            error = self._header_line(line)
            # A refused line is dropped by resynchronising, which starts inside it: damage
            # that ran into the next frame's header leaves that header usable.
            del self._buffer[: 1 if self._skipping else line_end + 1]
            if error is not None:
                out.append(error)
        return out

    def _header_line(self, line: bytes) -> FramingError | None:
        if not line:
            if self._header_length is None:
                return FramingError("a header block without Content-Length")
            self._length, self._header_length = self._header_length, None
            return None
        if len(line) > MAX_HEADER_LINE:
            return self._skip(f"a header line longer than {MAX_HEADER_LINE} bytes")
        match = _HEADER.match(line)
        if match is None or _NEXT_HEADER.search(line, 1):
            return self._skip(f"not a header line: {_preview(line)}")
        if match.group(1).lower() != b"content-length":
            return None  # Content-Type and other headers carry nothing we need
        value = match.group(2)
        if not value.isdigit() or not value.isascii():
            return self._skip(f"Content-Length is not a number: {_preview(value)}")
        length = int(value) if len(value) <= 20 else None
        if length is None or length > self.max_body:
            size = f"{length} bytes" if length is not None else f"a {len(value)}-digit number of bytes"
            return self._skip(
                f"a message of {size} exceeds the limit of {self.max_body} bytes "
                "(agentls serve --max-message-bytes)",
                too_large=True,
            )
        self._header_length = length
        return None

    def _skip(self, message: str, *, too_large: bool = False) -> FramingError:
        self._skipping = True
        self._header_length = None
        return FramingError(message, too_large)

    def _resynchronise(self) -> bool:
        """Drop input up to the next ``Content-Length:``; ``True`` when one was found."""
        match = _NEXT_HEADER.search(self._buffer)
        if match is None:
            del self._buffer[: max(0, len(self._buffer) - _TAIL)]
            return False
        del self._buffer[: match.start()]
        self._skipping = False
        return True


def _preview(data: bytes, limit: int = 40) -> str:
    text = data[:limit].decode("utf-8", "backslashreplace")
    return repr(text + ("…" if len(data) > limit else ""))


async def read_chunks(fd: int, size: int = 1 << 16) -> AsyncIterator[bytes]:
    """What arrives on ``fd``, until its end.

    A daemon thread does the blocking reads, so neither the event loop nor the
    process's exit waits for a client that stays silent; a small queue between the two
    holds the thread back while the server is busy (backpressure, bounded memory).
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=8)

    def pump() -> None:
        chunk = b"-"
        while chunk:
            try:
                chunk = os.read(fd, size)
            except OSError:
                chunk = b""
            put = queue.put(chunk)
            try:
                asyncio.run_coroutine_threadsafe(put, loop).result()
            except RuntimeError:  # the loop has closed: the coroutine never ran
                put.close()
                return
            except concurrent.futures.CancelledError:  # the loop ended while it waited
                return

    threading.Thread(target=pump, name="agentls-stdin", daemon=True).start()
    while chunk := await queue.get():
        yield chunk


async def read_frames(fd: int, parser: FrameParser) -> AsyncIterator[Frame | FramingError]:
    """The frames and framing errors of everything read from ``fd``, until its end."""
    async for chunk in read_chunks(fd):
        for item in parser.feed(chunk):
            yield item


FLUSH_DELAY = 0.002
"""Seconds a written frame may wait for others before the stream is flushed (an editor draws at
most every 16 ms)."""


class CoalescingWriter:
    """Frames to a binary stream, flushed at most every :data:`FLUSH_DELAY` rather than once per frame.

    A streaming run sends an event every few tens of microseconds, each in its own turn of
    the event loop; one flush for all that came in the last 2 ms saves a system call per
    frame. Outside a running loop (at exit) every write is flushed at once. ``on_error`` is
    called, once, when the stream fails (the client is gone).
    """

    def __init__(self, stream: BinaryIO, on_error: Callable[[OSError], None]) -> None:
        self._stream = stream
        self._on_error = on_error
        self._flush_pending = False
        self._failed = False

    def write(self, data: bytes) -> None:
        if self._failed:
            return
        try:
            self._stream.write(data)
        except (OSError, ValueError) as error:
            self._fail(error)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        if not self._flush_pending:
            self._flush_pending = True
            loop.call_later(FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        self._flush_pending = False
        if self._failed:
            return
        try:
            self._stream.flush()
        except (OSError, ValueError) as error:
            self._fail(error)

    def close(self) -> None:
        self.flush()
        with contextlib.suppress(OSError, ValueError):
            self._stream.close()

    def _fail(self, error: Exception) -> None:
        self._failed = True
        self._on_error(error if isinstance(error, OSError) else OSError(str(error)))
