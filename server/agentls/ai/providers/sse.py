"""Server-sent events from a streamed HTTP body (the decoder of pi-ai's ``anthropic-messages.js``).

Lines end with ``\\n``, ``\\r\\n`` or ``\\r``; ``event:`` names the event, ``data:``
lines are joined with ``\\n``, lines starting with ``:`` are comments, other fields
are ignored, and an empty line dispatches the event. What is left at the end of the
body is dispatched too.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass
class ServerSentEvent:
    event: str | None
    data: str


class _Decoder:
    def __init__(self) -> None:
        self.event: str | None = None
        self.data: list[str] = []

    def line(self, line: str) -> ServerSentEvent | None:
        if line == "":
            return self.flush()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
        return None

    def flush(self) -> ServerSentEvent | None:
        if self.event is None and not self.data:
            return None
        event = ServerSentEvent(self.event, "\n".join(self.data))
        self.event, self.data = None, []
        return event


def _split_lines(buffer: str) -> tuple[list[str], str]:
    """Complete lines of ``buffer`` and the rest; a final ``\\r`` waits, as a ``\\n`` may follow."""
    lines: list[str] = []
    start = 0
    length = len(buffer)
    while start < length:
        newline = buffer.find("\n", start)
        carriage = buffer.find("\r", start, newline if newline != -1 else length)
        if carriage != -1:
            if carriage == length - 1:
                break
            lines.append(buffer[start:carriage])
            start = carriage + 2 if buffer[carriage + 1] == "\n" else carriage + 1
        elif newline != -1:
            lines.append(buffer[start:newline])
            start = newline + 1
        else:
            break
    return lines, buffer[start:]


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[ServerSentEvent]:
    """The events of a body given as byte chunks (split anywhere, UTF-8 across chunks included)."""
    decoder = _Decoder()
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    async for chunk in chunks:
        buffer += text.decode(chunk)
        lines, buffer = _split_lines(buffer)
        for line in lines:
            if (event := decoder.line(line)) is not None:
                yield event
    buffer += text.decode(b"", final=True)
    lines, buffer = _split_lines(buffer)
    if buffer:
        lines.append(buffer.removesuffix("\r"))
    for line in lines:
        if (event := decoder.line(line)) is not None:
            yield event
    if (event := decoder.flush()) is not None:
        yield event
