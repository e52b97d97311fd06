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
    """The events of a body given as byte chunks (split anywhere, UTF-8 across chunks included).

    One loop with the decoder's state in locals: a streamed answer is tens of thousands
    of events, and a method call per line was a good part of reading one.
    """
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    event: str | None = None
    data: list[str] = []
    buffer = ""
    finished = False
    chunk_iterator = aiter(chunks)
    while not finished:
        try:
            buffer += decode(await anext(chunk_iterator))
        except StopAsyncIteration:
            finished = True
            buffer += decode(b"", final=True)
        if "\r" in buffer:
            lines, buffer = _split_lines(buffer)
        else:
            lines = buffer.split("\n")
            buffer = lines.pop()
        if finished and buffer:
            lines.append(buffer.removesuffix("\r"))
        for line in lines:
            if not line:
                if event is not None or data:
                    yield ServerSentEvent(event, "\n".join(data))
                    event, data = None, []
                continue
            if line[0] == ":":
                continue
            name, colon, value = line.partition(":")
            if colon and value[:1] == " ":
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
    if event is not None or data:
        yield ServerSentEvent(event, "\n".join(data))
