"""The chunked reader that h11 is given (``agentls.ai.providers.h11_chunks``), through h11 itself."""

from __future__ import annotations

import h11
import pytest
from agentls.ai.providers import h11_chunks

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
EVENTS = [f'event: delta\ndata: {{"n": {n}}}\n\n'.encode() for n in range(50)]
BODY = b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in EVENTS) + b"0\r\n\r\n"


def response_events(*pieces: bytes) -> list[h11.Event]:
    """What an h11 client reads of a response arriving in ``pieces``."""
    h11_chunks.install()
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="POST", target="/v1/messages", headers=[("Host", "x")]))
    connection.send(h11.EndOfMessage())
    events: list[h11.Event] = []
    for piece in pieces:
        connection.receive_data(piece)
        while (event := connection.next_event()) not in (h11.NEED_DATA, h11.PAUSED):
            events.append(event)
    return events


def body_of(events: list[h11.Event]) -> bytes:
    return b"".join(event.data for event in events if isinstance(event, h11.Data))


def test_the_chunks_in_the_buffer_come_as_one_data_event_then_the_end() -> None:
    events = response_events(HEAD + BODY)
    assert [type(event) for event in events] == [h11.Response, h11.Data, h11.EndOfMessage]
    assert body_of(events) == b"".join(EVENTS)
    assert events[1].chunk_start and events[1].chunk_end


def test_a_body_split_anywhere_gives_the_same_bytes_in_order() -> None:
    whole = HEAD + BODY
    for size in (1, 7, 64, 1000):
        pieces = [whole[i : i + size] for i in range(0, len(whole), size)]
        events = response_events(*pieces)
        assert body_of(events) == b"".join(EVENTS), size
        assert isinstance(events[-1], h11.EndOfMessage)
        assert sum(isinstance(event, h11.EndOfMessage) for event in events) == 1


def test_the_next_response_on_the_connection_is_read_after_the_end() -> None:
    h11_chunks.install()
    connection = h11.Connection(h11.CLIENT)
    for _ in range(2):
        connection.send(h11.Request(method="POST", target="/", headers=[("Host", "x")]))
        connection.send(h11.EndOfMessage())
        connection.receive_data(HEAD + BODY)
        events = []
        while (event := connection.next_event()) not in (h11.NEED_DATA, h11.PAUSED):
            events.append(event)
        assert body_of(events) == b"".join(EVENTS) and isinstance(events[-1], h11.EndOfMessage)
        connection.start_next_cycle()


def test_a_malformed_chunk_is_still_refused() -> None:
    with pytest.raises(h11.RemoteProtocolError):
        response_events(HEAD + b"5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n")


def test_chunk_extensions_upper_case_sizes_and_trailing_spaces_read_as_h11_reads_them() -> None:
    body = b"5;name=value\r\nhello\r\nA  \r\n0123456789\r\n3\r\n!!!\r\n0\r\n\r\n"
    events = response_events(HEAD + body)
    assert body_of(events) == b"hello0123456789!!!"
    assert isinstance(events[-1], h11.EndOfMessage)


@pytest.mark.parametrize(
    "body",
    [
        b"5\r\nhelloXX3\r\nabc\r\n0\r\n\r\n",  # a chunk's footer is not CRLF
        b"3\r\nabc\r\n+5\r\nhello\r\n0\r\n\r\n",  # a size int() would take, h11 does not
        b"3\r\nabc\r\n0x5\r\nhello\r\n0\r\n\r\n",
    ],
)
def test_a_chunk_h11_would_refuse_after_good_ones_is_refused(body: bytes) -> None:
    with pytest.raises(h11.RemoteProtocolError):
        response_events(HEAD + body)


def test_a_trailer_after_the_chunks_ends_the_body() -> None:
    events = response_events(HEAD + b"3\r\nabc\r\n2\r\nde\r\n0\r\nx-trailer: 1\r\n\r\n")
    assert body_of(events) == b"abcde"
    assert isinstance(events[-1], h11.EndOfMessage)
    assert events[-1].headers == [(b"x-trailer", b"1")]
