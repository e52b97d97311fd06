"""A window of a text's lines, read from a stream without holding the whole text.

``read`` of a 100 MB file (or of one 100 MB line) must not load it, decode it and split
it, several copies at once, to show 50 KB of it. :func:`read_window` reads the stream in
chunks, counts every line, and keeps only the lines of the window, within a line and a
byte budget; a line longer than the whole budget is measured, never kept. Its cost in
memory is one chunk plus the budget, whatever the file's size.

Lines are numbered as editors and ``sed`` number them (see :func:`agentls.tools.read.split_lines`):
split on ``\\n``, one ``\\r`` dropped per line, a final newline ends the last line rather
than starting an empty one, and a UTF-8 BOM at the start is not text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentls.ai.abort import AbortSignal

CHUNK_BYTES = 1024 * 1024
BOM = b"\xef\xbb\xbf"


@dataclass
class LineWindow:
    """What :func:`read_window` found: the lines kept, and about the whole text."""

    start: int
    """The 0-based index of the window's first line."""
    lines: list[str] = field(default_factory=list)
    """The window's lines from ``start`` on, decoded (invalid UTF-8 replaced), within the budgets."""
    total: int = 0
    """How many lines the whole text has."""
    long_line: int | None = None
    """The size in bytes of the line at ``start`` if it alone is over the byte budget (no lines then)."""


class _Collector:
    """Keeps the lines of the window as they complete, within the budgets."""

    def __init__(self, window: LineWindow, stop: int | None, max_lines: int, max_bytes: int) -> None:
        self.window = window
        self.stop = stop
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.used = 0
        self.line = bytearray()
        """The current line's bytes, up to one past the budget (enough to know it is over)."""
        self.size = 0
        """The current line's full size."""
        self.full = max_lines <= 0 or stop == window.start

    def add(self, piece: bytes) -> None:
        room = self.max_bytes + 1 - len(self.line)
        if room > 0:
            self.line += piece[:room]
        self.size += len(piece)

    def end_line(self) -> None:
        """The current line is complete: keep it if it fits, else the window is full."""
        window = self.window
        cost = self.size + (1 if window.lines else 0)
        if self.used + cost > self.max_bytes:
            if not window.lines:
                window.long_line = self.size
            self.full = True
            return
        window.lines.append(bytes(self.line).decode("utf-8", errors="replace").removesuffix("\r"))
        self.used += cost
        self.line.clear()
        self.size = 0
        end = window.start + len(window.lines)
        self.full = len(window.lines) >= self.max_lines or (self.stop is not None and end >= self.stop)


def read_window(
    chunks: Iterable[bytes],
    start: int,
    stop: int | None,
    max_lines: int,
    max_bytes: int,
    signal: AbortSignal | None = None,
) -> LineWindow:
    """The lines ``start`` (0-based) to ``stop`` (exclusive, ``None``: the end) of the text in ``chunks``.

    At most ``max_lines`` lines are kept, and no more than ``max_bytes`` bytes of them
    (counting a line break between two lines); the first line that does not fit ends the
    window. Every chunk is counted, so :attr:`LineWindow.total` is the whole text's. An
    abort of ``signal`` stops the reading between chunks (:class:`AbortError`). Blocking:
    run it in a worker thread.
    """
    window = LineWindow(start)
    collector = _Collector(window, stop, max_lines, max_bytes)
    breaks = 0  # the line breaks seen so far: the index of the current line
    last = b""
    first = True
    for chunk in chunks:
        if signal is not None:
            signal.throw_if_aborted()
        if first:
            chunk, first = chunk.removeprefix(BOM), False
        if not chunk:
            continue
        last = chunk[-1:]
        position = 0
        if not collector.full and breaks < start:  # skip to the window's first line
            count = chunk.count(b"\n")
            if breaks + count < start:
                breaks += count
                continue
            while breaks < start:
                position = chunk.index(b"\n", position) + 1
                breaks += 1
        while not collector.full:
            end = chunk.find(b"\n", position)
            collector.add(chunk[position : len(chunk) if end == -1 else end])
            if end == -1:
                position = len(chunk)
                break
            collector.end_line()
            breaks, position = breaks + 1, end + 1
        breaks += chunk.count(b"\n", position)
    ends_open = bool(last) and last != b"\n"
    window.total = breaks + (1 if ends_open else 0)
    if ends_open and not collector.full and breaks >= start:
        collector.end_line()  # the last line, which no line break ends
    return window
