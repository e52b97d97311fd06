"""The fault matrix: each failure ends in success or a clean error message, never a hang or an exception.

Every test runs against both providers (their real clients, a mock server on 127.0.0.1)
and ends its stream within a few tenths of a second: retry delays are milliseconds and
the stall tests use a 0.3 s idle timeout. Anthropic's ``overloaded_error`` is in ``test_anthropic.py``.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from agentls.ai import (
    AbortController,
    AssistantMessage,
    Context,
    StreamOptions,
    TextContent,
    ToolCall,
    user_message,
)

from tests.ai.providers.helpers import (
    DIALECTS,
    READ_TOOL,
    STALL_TIMEOUT_MS,
    Dialect,
    collect,
    context,
    final,
    kinds,
)
from tests.ai.providers.mock_http import MockServer, Pause, Reply, json_reply

pytestmark = pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)

RATE_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
SERVER_ERROR = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}


def retry_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]


async def test_429_with_retry_after_then_success(dialect: Dialect, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    replies = [
        json_reply(429, RATE_LIMITED, {"retry-after": "0.2"}),
        Reply(body=dialect.text_events("Hi there")),
    ]
    async with MockServer(replies) as server:
        provider = dialect.provider(server.url)
        started = time.monotonic()
        events, message = await collect(provider.stream(provider.models[0], context(), None))
        waited = time.monotonic() - started
    assert message.stop_reason == "stop" and message.content == [TextContent(text="Hi there")]
    assert len(server.requests) == 2 and waited >= 0.2
    assert kinds(events) == ["start", "text_start", "text_delta", "text_end", "done"]
    [line] = retry_lines(caplog)
    assert line == f"{provider.provider}: 429 rate limited, retrying in 0.2 s (attempt 2 of 4)"


async def test_retry_after_longer_than_the_maximum_delay_fails_at_once(dialect: Dialect) -> None:
    async with MockServer([json_reply(429, RATE_LIMITED, {"retry-after": "120"})]) as server:
        provider = dialect.provider(server.url, maxRetryDelayMs=1000)
        events, message = await collect(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "error" and len(server.requests) == 1
    assert message.error_message is not None and "429" in message.error_message
    assert "asked to retry in 120 s, more than the maximum retry delay of 1 s" in message.error_message
    assert kinds(events) == ["error"]


async def test_500_twice_then_success(dialect: Dialect, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    replies = [
        json_reply(500, SERVER_ERROR),
        json_reply(502, SERVER_ERROR),
        Reply(body=dialect.text_events("ok")),
    ]
    async with MockServer(replies) as server:
        provider = dialect.provider(server.url)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "stop" and message.content == [TextContent(text="ok")]
    assert len(server.requests) == 3
    assert [line.split(", retrying")[0] for line in retry_lines(caplog)] == [
        f"{provider.provider}: 500 server error",
        f"{provider.provider}: 502 server error",
    ]
    assert "attempt 3 of 4" in retry_lines(caplog)[1]


async def test_retries_run_out_with_the_last_error(dialect: Dialect) -> None:
    async with MockServer([json_reply(503, SERVER_ERROR) for _ in range(3)]) as server:
        provider = dialect.provider(server.url, maxRetries=2)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert len(server.requests) == 3
    assert message.stop_reason == "error" and message.error_message is not None
    assert message.error_message.startswith("503") and "Internal server error" in message.error_message


async def test_a_client_error_is_not_retried(dialect: Dialect) -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}
    async with MockServer([json_reply(400, error), Reply(body=dialect.text_events("never"))]) as server:
        provider = dialect.provider(server.url)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert len(server.requests) == 1 and message.stop_reason == "error"
    assert message.error_message is not None and "400" in message.error_message
    assert "max_tokens: too large" in message.error_message


async def test_connection_reset_before_any_byte_is_retried(
    dialect: Dialect, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with MockServer([Reply(reset=True), Reply(body=dialect.text_events("back"))]) as server:
        provider = dialect.provider(server.url)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "stop" and message.content == [TextContent(text="back")]
    assert len(server.requests) == 2
    [line] = retry_lines(caplog)
    assert "connection error" in line


async def test_a_refused_connection_ends_with_a_connection_error(dialect: Dialect) -> None:
    async with MockServer() as server:
        url = server.url
    provider = dialect.provider(url, maxRetries=1)  # the server is gone: nothing listens there
    events, message = await collect(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "error" and message.error_message is not None
    assert "onnect" in message.error_message  # "Connection error" / "connect" in the transport's words
    assert kinds(events) == ["error"]


_INT_BELOW_STR = "'<' not supported between instances of 'int' and 'str'"


def _unserializable_tool_call() -> Context:
    """A history whose tool call has arguments JSON cannot encode (a set)."""
    call = ToolCall(id="call_01", name="read", arguments={"path": {"a", "b"}})
    answer = AssistantMessage(api="x", provider="x", model="x", stop_reason="toolUse", content=[call])
    return Context(messages=[user_message("Read it"), answer, user_message("Again")], tools=[READ_TOOL])


@pytest.mark.parametrize(
    ("request_context", "options", "reason"),
    [
        (_unserializable_tool_call(), None, "Object of type set is not JSON serializable"),
        (context(), StreamOptions(max_tokens="many"), _INT_BELOW_STR),  # type: ignore[arg-type]
    ],
    ids=["unserializable message", "bad option"],
)
async def test_a_request_that_cannot_be_built_ends_with_an_error_and_sends_nothing(
    dialect: Dialect, request_context: Context, options: StreamOptions | None, reason: str
) -> None:
    async with MockServer([Reply(body=dialect.text_events("never"))]) as server:
        provider = dialect.provider(server.url)
        events, message = await collect(provider.stream(provider.models[0], request_context, options))
    assert server.requests == [] and kinds(events) == ["error"]
    assert message.stop_reason == "error" and message.error_message == f"Cannot build the request: {reason}"


async def test_stream_cut_in_the_middle_of_a_tool_calls_arguments(dialect: Dialect) -> None:
    replies = [
        Reply(body=dialect.tool_head('{"path": "src/ma'), cut=True),
        Reply(body=dialect.text_events("no")),
    ]
    async with MockServer(replies) as server:
        provider = dialect.provider(server.url)
        events, message = await collect(provider.stream(provider.models[0], context(tools=[READ_TOOL]), None))
    assert len(server.requests) == 1, "content was streamed: a retry would duplicate it"
    assert message.stop_reason == "error" and message.error_message
    assert kinds(events) == ["start", "toolcall_start", "toolcall_delta", "error"]
    [call] = message.content
    assert isinstance(call, ToolCall) and call.name == "read"
    assert call.arguments == {"path": "src/ma"}, "the partial arguments parsed so far"


async def test_a_malformed_sse_line_ends_the_message_with_an_error(dialect: Dialect) -> None:
    body = [*dialect.text_head("Hello"), dialect.malformed]
    async with MockServer([Reply(body=body), Reply(body=dialect.text_events("no"))]) as server:
        provider = dialect.provider(server.url)
        events, message = await collect(provider.stream(provider.models[0], context(), None))
    assert len(server.requests) == 1
    assert message.stop_reason == "error" and message.error_message is not None
    assert message.error_message.startswith("Could not parse")
    assert message.content == [TextContent(text="Hello")]
    assert kinds(events) == ["start", "text_start", "text_delta", "error"]


async def test_a_stall_after_content_ends_with_an_idle_timeout(dialect: Dialect) -> None:
    async with MockServer([Reply(body=dialect.text_head("Hel"), stall=True)]) as server:
        provider = dialect.provider(server.url, idleTimeoutMs=STALL_TIMEOUT_MS)
        started = time.monotonic()
        message = await final(provider.stream(provider.models[0], context(), None))
        waited = time.monotonic() - started
    assert 0.3 <= waited < 5, "the idle timeout, not a hang (the first request also imports the SDK)"
    assert message.stop_reason == "error" and message.content == [TextContent(text="Hel")]
    assert message.error_message == "Stream stalled: the server sent no data for 0.3 s (idle timeout)"
    assert len(server.requests) == 1


async def test_a_stall_before_content_is_retried(dialect: Dialect, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    replies = [Reply(silent=True), Reply(body=[], stall=True), Reply(body=dialect.text_events("Finally"))]
    async with MockServer(replies) as server:
        provider = dialect.provider(server.url, idleTimeoutMs=STALL_TIMEOUT_MS)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "stop" and message.content == [TextContent(text="Finally")]
    assert len(server.requests) == 3
    assert [line.split(", retrying")[0] for line in retry_lines(caplog)] == [
        f"{provider.provider}: stream stalled"
    ] * 2


async def test_abort_mid_stream_keeps_what_was_received(dialect: Dialect) -> None:
    body = [*dialect.text_head("Partial answer"), Pause(10), *dialect.text_events("never sent")]
    async with MockServer([Reply(body=body)]) as server:
        provider = dialect.provider(server.url)
        controller = AbortController()
        stream = provider.stream(provider.models[0], context(), StreamOptions(signal=controller.signal))
        events = []
        started = time.monotonic()
        async for event in stream:
            events.append(event)
            if event.type == "text_delta":
                controller.abort()
        message = await stream.result()
        assert time.monotonic() - started < 5, "the abort, not the 10 s pause, ended the stream"
        await asyncio.wait_for(server.wait_for_hang_up(), 2)  # the HTTP stream was closed, not left open
    assert message.stop_reason == "aborted" and message.error_message == "Request was aborted"
    assert message.content == [TextContent(text="Partial answer")]
    assert kinds(events) == ["start", "text_start", "text_delta", "error"]
    assert events[-1].reason == "aborted"


async def test_abort_during_a_retry_wait(dialect: Dialect) -> None:
    async with MockServer([json_reply(429, RATE_LIMITED, {"retry-after": "30"})]) as server:
        provider = dialect.provider(server.url)
        controller = AbortController()
        stream = provider.stream(provider.models[0], context(), StreamOptions(signal=controller.signal))
        await asyncio.wait_for(server.wait_for_requests(), 2)
        await asyncio.sleep(0.05)
        controller.abort()
        events, message = await asyncio.wait_for(collect(stream), 2)
    assert message.stop_reason == "aborted" and kinds(events) == ["error"]


async def test_an_aborted_signal_sends_no_request(dialect: Dialect) -> None:
    async with MockServer([Reply(body=dialect.text_events("no"))]) as server:
        provider = dialect.provider(server.url)
        controller = AbortController()
        controller.abort()
        message = await final(
            provider.stream(provider.models[0], context(), StreamOptions(signal=controller.signal))
        )
        await asyncio.sleep(0.05)
    assert message.stop_reason == "aborted" and server.requests == []
