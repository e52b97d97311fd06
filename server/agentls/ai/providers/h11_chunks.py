"""Chunked response bodies read a buffer at a time instead of one HTTP chunk at a time.

A streamed answer arrives as thousands of small HTTP chunks (one per server-sent event),
and h11, httpx's HTTP/1.1 parser, makes each its own ``Data`` event: every event then
climbs h11's state machine, httpcore's and httpx's generators and the provider's reader,
about 15 µs of Python each, a fifth of a server's CPU on a long answer. Chunk boundaries
carry no meaning in HTTP (h11 says so too), so :func:`install` gives h11 a chunked reader
that returns, as one ``Data`` event, every complete chunk already in the receive buffer.
It changes nothing else: the bytes, their order, the end of the body, malformed chunks
are as before. Complete chunks are found in one pass over the buffer (a ``find`` and
h11's own header pattern each, ~1 µs, where h11's reader took ~5 µs a chunk); anything
else (a chunk cut by the end of the buffer, the last chunk and its trailer, a header or
footer h11 would refuse) is left to h11's reader, which reads or refuses it as before.

h11 has no public hook for its readers: this replaces the ``chunked`` entry of its
``READERS`` table, and does nothing when that table is not where and what it was in h11
0.14-0.16 (the body is then read as before).
"""

from __future__ import annotations

from typing import Any

_installed = False


def install() -> None:
    """Put the buffer-at-a-time chunked reader into h11 (once; nothing if h11 is not as expected)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from h11 import Data
        from h11._readers import READERS, ChunkedReader, chunk_header_re
        from h11._receivebuffer import ReceiveBuffer
        from h11._state import SEND_BODY
    except ImportError:
        return
    readers = READERS.get(SEND_BODY)
    if not isinstance(readers, dict) or readers.get("chunked") is not ChunkedReader:
        return
    if not isinstance(getattr(ReceiveBuffer(), "_data", None), bytearray):
        return
    header_match = chunk_header_re.fullmatch

    class BufferedChunkedReader(ChunkedReader):  # type: ignore[misc]
        """h11's reader, asked again while the buffer holds more: the chunks read are one event."""

        def __init__(self) -> None:
            super().__init__()
            self._held: Any = None
            """An event read after data already returned in this call's event: the next call's."""

        def _complete_chunks(self, buf: Any, parts: list[Any]) -> bool:
            """Take the complete chunks at the start of the buffer out of it, into ``parts`` (and the
            CRLF still owed by a chunk h11 read before them); whether anything was taken."""
            data: bytearray = buf._data
            start = len(self._bytes_to_discard)
            if start and not data.startswith(self._bytes_to_discard):
                return False
            while (line_end := data.find(b"\r\n", start)) != -1:
                header = header_match(data, start, line_end + 2)
                if header is None:
                    break
                size = int(header["chunk_size"], 16)
                body_end = line_end + 2 + size
                if size == 0 or data[body_end : body_end + 2] != b"\r\n":
                    break
                parts.append(data[line_end + 2 : body_end])
                start = body_end + 2
            if not start:
                return False
            buf._extract(start)
            self._bytes_to_discard = b""
            return True

        def __call__(self, buf: Any) -> Any:
            if self._held is not None:
                held, self._held = self._held, None
                return held
            if not buf:
                return super().__call__(buf)
            parts: list[Any] = []
            chunk_start = chunk_end = True
            while buf:
                at_boundary = not (self._bytes_in_chunk or self._reading_trailer)
                if at_boundary and self._complete_chunks(buf, parts):
                    continue
                event = super().__call__(buf)
                if event is None:
                    break
                if type(event) is not Data:
                    if not parts:
                        return event
                    self._held = event
                    break
                if not parts:
                    chunk_start = event.chunk_start
                parts.append(event.data)
                chunk_end = event.chunk_end
            if not parts:
                return None
            return Data(data=b"".join(parts), chunk_start=chunk_start, chunk_end=chunk_end)

    readers["chunked"] = BufferedChunkedReader
