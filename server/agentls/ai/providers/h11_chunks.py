"""Chunked response bodies read a buffer at a time instead of one HTTP chunk at a time.

A streamed answer arrives as thousands of small HTTP chunks (one per server-sent event),
and h11, httpx's HTTP/1.1 parser, makes each its own ``Data`` event: every event then
climbs h11's state machine, httpcore's and httpx's generators and the provider's reader,
about 15 µs of Python each, a fifth of a server's CPU on a long answer. Chunk boundaries
carry no meaning in HTTP (h11 says so too), so :func:`install` gives h11 a chunked reader
that returns, as one ``Data`` event, every complete chunk already in the receive buffer.
It changes nothing else: the bytes, their order, the end of the body, malformed chunks
(h11's own reader parses each chunk) are as before.

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
        from h11._readers import READERS, ChunkedReader
        from h11._state import SEND_BODY
    except ImportError:
        return
    readers = READERS.get(SEND_BODY)
    if not isinstance(readers, dict) or readers.get("chunked") is not ChunkedReader:
        return

    class BufferedChunkedReader(ChunkedReader):  # type: ignore[misc]
        """h11's reader, asked again while the buffer holds more: the chunks read are one event."""

        def __init__(self) -> None:
            super().__init__()
            self._held: Any = None
            """An event read after data already returned in this call's event: the next call's."""

        def __call__(self, buf: Any) -> Any:
            if self._held is not None:
                held, self._held = self._held, None
                return held
            event = super().__call__(buf)
            if type(event) is not Data or not buf:
                return event
            parts = [event.data]
            last = event
            while buf:
                more = super().__call__(buf)
                if more is None:
                    break
                if type(more) is not Data:
                    self._held = more
                    break
                parts.append(more.data)
                last = more
            if last is event:
                return event
            return Data(data=b"".join(parts), chunk_start=event.chunk_start, chunk_end=last.chunk_end)

    readers["chunked"] = BufferedChunkedReader
