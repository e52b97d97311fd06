"""The frame parser on its own: frames, refusals and resynchronisation, however the bytes are split."""

from __future__ import annotations

import asyncio
import os
import random
import select
import threading

import pytest
from agentls.fronts.lsp.framing import MAX_HEADER_LINE, Frame, FrameParser, FramingError, OutputWriter


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def parse(data: bytes, *, chunk: int | None = None, max_body: int = 1000) -> list[Frame | FramingError]:
    """Feed ``data`` whole, or in pieces of ``chunk`` bytes."""
    parser = FrameParser(max_body)
    if chunk is None:
        return parser.feed(data)
    out: list[Frame | FramingError] = []
    for start in range(0, len(data), chunk):
        out += parser.feed(data[start : start + chunk])
    return out


def bodies(items: list[Frame | FramingError]) -> list[bytes]:
    return [item.body for item in items if isinstance(item, Frame)]


def errors(items: list[Frame | FramingError]) -> list[str]:
    return [item.message for item in items if isinstance(item, FramingError)]


DAMAGED = [
    (b"Content-Length: 99999999999999999999\r\n\r\n{}", "99999999999999999999 bytes exceeds"),
    (b"Content-Length: 123456789012345678901234\r\n\r\n{}", "a 24-digit number of bytes"),
    (b"Content-Length: 1000000000000\r\n\r\n{}", "1000000000000 bytes exceeds the limit of 1000"),
    (b"Content-Length: 5000\r\n\r\n" + b'{"a":"' + b"x" * 4990 + b'"}', "5000 bytes exceeds"),
    (b"Content-Length: 12x\r\n\r\n{}", "not a number"),
    (b"garbage\r\n\r\n{}", "not a header line"),
    (b"Content-Type: x\r\n\r\n{}", "without Content-Length"),
    (b"x" * (MAX_HEADER_LINE + 10), "longer than"),
    # a length that runs into the next frame's header: that frame is lost, the one after it is read
    (b'Content-Length: 40\r\n\r\n{"short":1}' + frame(b"x" * 60), "not a header line"),
]


@pytest.mark.parametrize("chunk", [None, 1, 7, 4096])
@pytest.mark.parametrize(("damage", "reason"), DAMAGED)
def test_damage_is_reported_once_and_the_next_frame_is_read(
    damage: bytes, reason: str, chunk: int | None
) -> None:
    items = parse(frame(b"[1]") + damage + frame(b'{"next":true}'), chunk=chunk)
    assert bodies(items)[0] == b"[1]" and bodies(items)[-1] == b'{"next":true}'
    assert any(reason in message for message in errors(items)), errors(items)


@pytest.mark.parametrize("chunk", [None, 1, 3, 64])
def test_frames_with_other_headers_and_bare_line_feeds(chunk: int | None) -> None:
    data = (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: 2\r\n\r\n{}"
        + b"Content-Length: 4\n\n[12]"
        + frame(b"\r\n" * 3)
    )
    assert parse(data, chunk=chunk) == [Frame(b"{}"), Frame(b"[12]"), Frame(b"\r\n" * 3)]


def test_random_damage_never_loses_the_frame_after_the_next_header() -> None:
    rng = random.Random(7)
    for _ in range(300):
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(0, 3000))).replace(b"ontent-", b"")
        data = junk + frame(b'{"after":1}')
        items = parse(data, chunk=rng.choice([None, 1, 13, 512]))
        assert bodies(items)[-1:] == [b'{"after":1}']


def test_memory_stays_bounded_while_skipping() -> None:
    parser = FrameParser(100)
    parser.feed(b"Content-Length: 1000000000\r\n\r\n")
    for _ in range(1000):
        assert parser.feed(b"x" * 10_000) == []
    assert len(parser._buffer) < 100
    assert parser.feed(frame(b"{}")) == [Frame(b"{}")]


def test_frames_written_from_other_threads_while_the_loop_writes_are_all_sent() -> None:
    """A log record of a worker thread is sent as a notification from that thread: none of its
    frames, nor of the loop's, may be lost between one hand-over to the writer's thread and the next."""
    read_end, write_end = os.pipe()
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_end, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    writer = OutputWriter(write_end, lambda: None)

    async def main() -> None:
        writer.attach(asyncio.get_running_loop())

        def from_thread(name: str) -> None:
            for i in range(500):
                writer.write(f"{name}-{i};".encode())

        threads = [threading.Thread(target=from_thread, args=(f"t{n}",)) for n in range(4)]
        for thread in threads:
            thread.start()
        for i in range(2000):
            writer.write(f"loop-{i};".encode())
            if i % 50 == 0:
                await asyncio.sleep(0.001)
        await asyncio.gather(*(asyncio.to_thread(thread.join) for thread in threads))
        await asyncio.sleep(0.05)  # the last hand-over (FLUSH_DELAY) and what the threads passed on

    try:
        asyncio.run(main())
        writer.close()
    finally:
        os.close(write_end)
        reader.join(10)
    frames = received.decode().split(";")[:-1]
    from_threads = [f"t{n}-{i}" for n in range(4) for i in range(500)]
    assert sorted(frames) == sorted([f"loop-{i}" for i in range(2000)] + from_threads)
    assert [f for f in frames if f.startswith("loop-")] == [f"loop-{i}" for i in range(2000)]  # in order


def read_exactly(fd: int, size: int) -> bytes:
    """``size`` bytes of ``fd``, each read waited for at most 10 s (a failure rather than a hang)."""
    data = bytearray()
    while len(data) < size:
        assert select.select([fd], [], [], 10)[0], f"only {bytes(data)!r} came"
        chunk = os.read(fd, size - len(data))
        assert chunk, "the pipe closed early"
        data.extend(chunk)
    return bytes(data)


def test_an_answer_is_handed_over_at_once_after_what_was_gathered_before_it() -> None:
    """``at_once`` (answers, the server's requests) does not wait for the gathered frames' timer: the loop
    is held here, reading the pipe, so the timer cannot run, and both frames still arrive, in order."""
    read_end, write_end = os.pipe()
    writer = OutputWriter(write_end, lambda: None)

    async def main() -> bytes:
        writer.write(b"notification;")
        writer.write(b"answer;", at_once=True)
        return read_exactly(read_end, len(b"notification;answer;"))  # blocks the loop on purpose

    try:
        assert asyncio.run(main()) == b"notification;answer;"
        writer.close()
    finally:
        os.close(write_end)
        os.close(read_end)


def test_written_waits_until_what_was_written_is_in_the_pipe() -> None:
    """:meth:`OutputWriter.written` hands over what was gathered and returns once the thread has written
    it; when the client is gone (its end closed) it returns too, the output dropped."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    writer = OutputWriter(write_end, lambda: None)
    closed_read, closed_write = os.pipe()
    os.close(closed_read)
    gone: list[str] = []
    lost = OutputWriter(closed_write, lambda: gone.append("gone"))

    async def main() -> None:
        for i in range(100):
            writer.write(b"%d;" % i)
        await asyncio.wait_for(writer.written(), 10)
        assert os.read(read_end, 1 << 16) == b"".join(b"%d;" % i for i in range(100))
        await asyncio.wait_for(writer.written(), 10)  # nothing left to write
        lost.write(b"never read")
        await asyncio.wait_for(lost.written(), 10)
        await asyncio.wait_for(lost.written(), 10)  # gone: at once

    try:
        asyncio.run(main())
        writer.close()
        lost.close()
    finally:
        for fd in (write_end, read_end, closed_write):
            os.close(fd)
    assert gone == ["gone"]
