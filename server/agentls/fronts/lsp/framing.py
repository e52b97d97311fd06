"""The LSP base framing (``Content-Length`` headers, then the body), read defensively.

:class:`FrameParser` is a sans-IO parser that never trusts the peer: a body
larger than the limit, a header line that is not a header, a header block without
``Content-Length`` or an endless header line becomes a :class:`FramingError` (which the
server answers and logs), and the parser resynchronises on the next
``Content-Length:`` header. Memory stays bounded by the limit whatever arrives.

Resynchronising by searching for ``Content-Length:`` is safe for any body that is
valid JSON: JSON cannot contain that text followed by a raw line break outside a
string, and a string cannot hold a raw line break. So an oversized body sent honestly
is skipped whole, and a lying length is skipped up to the next real header.

Both directions leave the event loop to a thread of their own: :func:`read_chunks` for
what the client sends, :class:`OutputWriter` for what it is sent (also by ``agentls acp``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import re
import select
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

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


async def read_chunks(
    fd: int, size: int = 1 << 16, *, waiting: Callable[[], None] | None = None
) -> AsyncIterator[bytes]:
    """What arrives on ``fd``, until its end; ``waiting()`` each time nothing read is left.

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
    while True:
        if waiting is not None and queue.empty():
            waiting()
        if not (chunk := await queue.get()):
            return
        yield chunk


async def read_frames(
    fd: int, parser: FrameParser, *, waiting: Callable[[], None] | None = None
) -> AsyncIterator[Frame | FramingError]:
    """The frames and framing errors of everything read from ``fd``, until its end (``waiting``: as
    :func:`read_chunks`)."""
    async for chunk in read_chunks(fd, waiting=waiting):
        for item in parser.feed(chunk):
            yield item


FLUSH_DELAY = 0.002
"""Seconds a written frame may wait for others before it is handed to the writing thread (an editor
draws at most every 16 ms)."""

DEFAULT_MAX_UNREAD_BYTES = 64 * 1024 * 1024
"""Output that may wait behind a write the client does not read, before the client is taken as gone."""

MAX_UNREAD_BYTES_ENV = "AGENTLS_MAX_UNREAD_BYTES"

DRAIN_SECONDS = 1.0
"""At the end: how long the client may read nothing of the output left before it is given up."""

ANSWER_SECONDS = 10.0
"""At the end of the input: how long the requests read before it have to be answered (their runs aborted),
in ``agentls serve`` and ``agentls acp``."""

_PIECE = 1 << 20
"""The most written in one system call, so that progress shows between calls."""


def max_unread_bytes() -> int:
    """:data:`DEFAULT_MAX_UNREAD_BYTES`, or ``$AGENTLS_MAX_UNREAD_BYTES`` when it is a positive integer."""
    value = os.environ.get(MAX_UNREAD_BYTES_ENV, "")
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else DEFAULT_MAX_UNREAD_BYTES


class OutputWriter:
    """Frames to a file descriptor, written by a thread of its own: no write blocks the event loop.

    A client that stops reading fills the pipe, and a write into a full pipe waits. Made in
    the event loop, it held everything, SIGTERM's handler included, so the server and its
    runs' processes went on forever. Here the loop only hands frames over; whatever the
    client does, the server keeps reading, answering signals and ending its runs.

    The frames written within :data:`FLUSH_DELAY` are handed over together: a streaming run
    sends an event every few tens of microseconds, each in its own turn of the event loop,
    and one hand-over (one wake-up of the thread, one system call) for all of them costs
    less than the single unthreaded write of each did. Outside a running loop (at exit)
    each write is handed over at once.

    The client is gone when a write fails (it closed its end) or when it has stopped
    reading: output is handed over while more than ``max_unread`` bytes still wait behind
    the write in progress (one frame larger than that is still sent whole). Then
    ``on_gone`` is called, once, in the event loop, and what is written is dropped.
    """

    def __init__(
        self, fd: int, on_gone: Callable[[], None], max_unread: int = DEFAULT_MAX_UNREAD_BYTES
    ) -> None:
        self._fd = fd
        self._on_gone = on_gone
        self._max_unread = max_unread
        self._gathered: list[bytes] = []
        """Written in the loop since the last hand-over."""
        self._flush_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None
        """The event loop whose thread gathers the frames (the one running when the writer was made,
        or :meth:`attach`'s)."""
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()
        self._gone = False
        self._handing = threading.Condition()
        self._handed: list[bytes] = []
        """Handed over, not yet taken by the thread (guarded by :attr:`_handing`, as the two below)."""
        self._handed_size = 0
        self._handed_total = 0
        """Bytes handed over so far."""
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []
        """:meth:`written`'s callers: how many bytes each waits to see written (guarded too)."""
        self._closing = False
        self._written = 0
        """Bytes written so far (the thread's progress, read by :meth:`close`)."""
        self._thread = threading.Thread(target=self._run, name="agentls-output", daemon=True)
        self._thread.start()

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """``loop`` is the one whose thread writes from now on (for a writer made before it ran)."""
        self._loop = loop

    def write(self, data: bytes, *, at_once: bool = False) -> None:
        """Queue ``data``; from any thread (a log record of a worker thread is sent as a notification).

        ``at_once``: hand it over now, after what was gathered before it, rather than after
        :data:`FLUSH_DELAY`: an answer, or a request of the server's, which the other side waits
        for (each waited 2 ms more; a notification is seldom waited for alone).

        The frames gathered for the next hand-over belong to the event loop's thread: a write
        from another thread while the loop runs is passed to the loop, in order after what it
        has queued, so that no frame is lost between a hand-over and the next.
        """
        if self._gone:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            owner = self._loop
            if owner is not None and owner.is_running():
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: write it here
                    owner.call_soon_threadsafe(functools.partial(self.write, data, at_once=at_once))
                    return
            self._gathered.append(data)
            self.flush()
            return
        self._gathered.append(data)
        self._loop = loop
        if at_once:
            self.flush()
        elif not self._flush_pending:
            self._flush_pending = True
            loop.call_later(FLUSH_DELAY, self.flush)

    async def written(self) -> None:
        """Until what was written so far has gone to the descriptor (or the client is gone): for work
        that would otherwise hold the event loop, and so the writing thread, before an answer is out."""
        self.flush()
        future = asyncio.get_running_loop().create_future()
        with self._handing:
            if self._gone or self._written >= self._handed_total:
                return
            self._waiting.append((self._handed_total, future))
        await future

    def flush(self) -> None:
        """Hand what was written over to the thread (or find the client gone)."""
        self._flush_pending = False
        if self._gone or not self._gathered:
            return
        gathered, self._gathered = self._gathered, []
        with self._handing:
            unread = self._handed_size > self._max_unread
            if not unread:
                self._handed += gathered
                size = sum(map(len, gathered))
                self._handed_size += size
                self._handed_total += size
                self._handing.notify()
        if unread:
            self._lose(f"left more than {self._max_unread} bytes of output unread")

    def close(self) -> None:
        """Write what is left while the client reads it (given up after :data:`DRAIN_SECONDS` unread)."""
        self.flush()
        with self._handing:
            self._closing = True
            self._handing.notify()
        written = -1
        while not self._gone and self._thread.is_alive() and written != self._written:
            written = self._written
            self._thread.join(DRAIN_SECONDS)

    def _run(self) -> None:
        while True:
            with self._handing:
                while not self._handed and not self._closing:
                    self._handing.wait()
                if not self._handed:
                    return
                data = b"".join(self._handed)
                self._handed.clear()
                self._handed_size = 0
            try:
                self._write_all(data)
            except OSError as error:
                self._report(f"closed its end ({error.strerror or error})")
                return
            self._settle(lambda total: total <= self._written)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                count = os.write(self._fd, view[:_PIECE])
            except BlockingIOError:  # made non-blocking by another holder of the descriptor: wait here
                select.select([], [self._fd], [])
                continue
            view = view[count:]
            self._written += count

    def _report(self, reason: str) -> None:
        """From the thread: the client is gone, for the loop to know (or at once when there is none)."""
        try:
            if self._loop is None:
                raise RuntimeError("no loop")
            self._loop.call_soon_threadsafe(self._lose, reason)
        except RuntimeError:  # no loop, or it has closed: the server is ending anyway
            self._gone = True

    def _settle(self, reached: Callable[[int], bool]) -> None:
        """End the waits of :meth:`written` whose bytes ``reached`` says are written (from any thread)."""
        with self._handing:  # the check under the lock: a wait added just after the write is seen
            if not self._waiting:
                return
            done = [future for total, future in self._waiting if reached(total)]
            self._waiting = [(total, future) for total, future in self._waiting if not reached(total)]
        for future in done:
            with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits any more
                future.get_loop().call_soon_threadsafe(_resolve, future)

    def _lose(self, reason: str) -> None:
        if self._gone:
            return
        self._gone = True
        self._settle(lambda total: True)
        self._gathered.clear()
        logger.warning("the client %s: ending as at the end of input", reason)
        self._on_gone()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
