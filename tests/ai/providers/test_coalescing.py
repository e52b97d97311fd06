"""Deltas that arrive together travel as one event (``coalesce_deltas``), and only those.

The builder holds a delta until the reading task gives the event loop a turn (it
waits for the network); any other event pushes what it holds first, so the order
and the text of the stream are those of the deltas one by one.
"""

from __future__ import annotations

import asyncio

import pytest
from agentls.ai import Model
from agentls.ai.event_stream import AssistantMessageEventStream
from agentls.ai.providers.streaming import ResponseBuilder

MODEL = Model(id="m", name="m", api="anthropic-messages", provider="p", base_url="http://127.0.0.1:9")


def drained(stream: AssistantMessageEventStream) -> list[tuple[str, str]]:
    events = []
    while stream._queue:
        event = stream._queue.popleft()
        events.append((event.type, getattr(event, "delta", "")))
    return events


@pytest.mark.asyncio
async def test_deltas_of_one_read_are_one_event_and_other_events_come_in_order() -> None:
    stream = AssistantMessageEventStream()
    builder = ResponseBuilder(MODEL, stream, coalesce=True)
    text = builder.open_text()
    for piece in ("a", "b", "c"):
        builder.add_text(text, piece)
    call = builder.open_tool_call("t1", "read")  # pushes the held text first
    builder.add_arguments(call, '{"pa')
    builder.add_arguments(call, 'th": "x"}')
    assert builder.output.content[call].arguments == {}, "the partial is parsed when the delta is pushed"
    await asyncio.sleep(0)  # the reader waits: what it holds goes out
    assert builder.output.content[call].arguments == {"path": "x"}
    builder.add_text(text, "d")
    builder.close(text)
    builder.output.stop_reason = "stop"
    builder.finish()
    assert drained(stream) == [
        ("start", ""),
        ("text_start", ""),
        ("text_delta", "abc"),
        ("toolcall_start", ""),
        ("toolcall_delta", '{"path": "x"}'),
        ("text_delta", "d"),
        ("text_end", ""),
        ("done", ""),
    ]


@pytest.mark.asyncio
async def test_deltas_separated_by_a_wait_stay_apart_and_without_coalescing_each_is_its_own() -> None:
    for coalesce, expected in ((True, ["a", "b"]), (False, ["a", "b", "c"])):
        stream = AssistantMessageEventStream()
        builder = ResponseBuilder(MODEL, stream, coalesce=coalesce)
        thinking = builder.open_thinking()
        builder.add_thinking(thinking, "a")
        await asyncio.sleep(0)
        builder.add_thinking(thinking, "b")
        if not coalesce:
            builder.add_thinking(thinking, "c")
        builder.fail("cut off")  # an error pushes what is held before it
        deltas = [delta for kind, delta in drained(stream) if kind == "thinking_delta"]
        assert deltas == expected
        assert builder.output.content[thinking].thinking == "".join(expected)


@pytest.mark.asyncio
async def test_a_long_answer_grows_in_place_and_text_taken_earlier_keeps_its_value() -> None:
    """Text, thinking and arguments grow in place (growing_text.grow); a listener that kept the
    text of an earlier event still has that text, not the longer one."""
    stream = AssistantMessageEventStream()
    builder = ResponseBuilder(MODEL, stream)
    thinking, text, call = builder.open_thinking(), builder.open_text(), builder.open_tool_call("t", "write")
    kept: list[str] = []
    for n in range(20_000):
        builder.add_thinking(thinking, "th")
        builder.add_text(text, f"{n % 10}")
        if n == 9:
            kept.append(builder.output.content[text].text)
    for piece in ('{"content": "', "x" * 5000, '"}'):
        builder.add_arguments(call, piece)
    builder.close(call)
    assert kept == ["0123456789"]
    assert builder.output.content[thinking].thinking == "th" * 20_000
    assert builder.output.content[text].text == "0123456789" * 2_000
    assert builder.output.content[call].arguments == {"content": "x" * 5000}
