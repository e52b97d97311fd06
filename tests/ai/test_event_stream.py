"""The push-based event streams behave like pi-ai's EventStream."""

from __future__ import annotations

import asyncio

from agentls.ai import AssistantMessage, AssistantMessageEventStream, DoneEvent, EventStream, StartEvent
from agentls.ai.wire import dumps_compact


async def test_consumer_gets_events_pushed_before_and_after_it_starts() -> None:
    stream: EventStream[int, str] = EventStream(lambda e: e == 3, lambda e: f"done at {e}")
    stream.push(1)
    seen: list[int] = []

    async def consume() -> None:
        async for event in stream:
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    stream.push(2)
    stream.push(3)
    stream.push(4)  # after completion: ignored
    stream.end()
    await task
    assert seen == [1, 2, 3]
    assert await stream.result() == "done at 3"


async def test_result_waits_for_end_and_first_result_wins() -> None:
    stream: EventStream[int, str] = EventStream(lambda e: False, lambda e: "")
    waiter = asyncio.create_task(stream.result())
    await asyncio.sleep(0)
    assert not waiter.done()
    stream.end("first")
    stream.end("second")
    assert await waiter == "first"


async def test_assistant_stream_result_is_the_done_message() -> None:
    stream = AssistantMessageEventStream()
    partial = AssistantMessage(stop_reason="pending")
    final = AssistantMessage(stop_reason="stop")
    stream.push(StartEvent(partial=partial))
    stream.push(DoneEvent(reason="stop", message=final))
    assert [e.type async for e in stream] == ["start", "done"]
    assert await stream.result() is final


def test_compact_json_matches_javascript() -> None:
    assert dumps_compact({"a": 1.0, "b": [2.5, "ü"], "c": None}) == '{"a":1,"b":[2.5,"ü"],"c":null}'
