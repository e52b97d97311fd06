"""The Anthropic provider: the real ``anthropic`` SDK against a mock of the Messages API's SSE stream."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from agentls.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    StreamOptions,
    TextContent,
    ThinkingBudgets,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    user_message,
)

from tests.ai.providers.helpers import (
    CLAUDE,
    READ_TOOL,
    a_end,
    a_error,
    a_reply,
    a_start,
    a_text,
    a_tool,
    anthropic_provider,
    collect,
    context,
    final,
    kinds,
)
from tests.ai.providers.mock_http import MockServer, Pause, Reply, anthropic_sse, json_reply

PIXEL = "iVBORw0KGgo="


def thinking_blocks() -> list[dict[str, Any]]:
    return [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "The user "},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "wants a file."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCkYI"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "AhgCKkBa"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "opaque=="},
        },
        {"type": "content_block_stop", "index": 1},
    ]


async def test_a_response_streams_thinking_text_and_a_tool_call() -> None:
    events = [
        a_start(input_tokens=100, cache_read_input_tokens=2000, cache_creation_input_tokens=50),
        {"type": "ping"},
        *thinking_blocks(),
        *a_text(2, "Let me ", "read it."),
        *a_tool(3, "toolu_01", "read", '{"pa', 'th": "READ', 'ME.md"}'),
        *a_end("tool_use", output_tokens=80),
    ]
    async with MockServer([a_reply(*events)]) as server:
        provider = anthropic_provider(server.url)
        stream = provider.stream(provider.models[0], context(tools=[READ_TOOL]), None)
        seen, message = await collect(stream)

    assert kinds(seen) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "thinking_start",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    deltas = [e for e in seen if e.type == "toolcall_delta"]
    assert [e.delta for e in deltas] == ['{"pa', 'th": "READ', 'ME.md"}']
    assert all(e.content_index == 3 for e in deltas)
    end = next(e for e in seen if e.type == "toolcall_end")
    assert end.tool_call == ToolCall(id="toolu_01", name="read", arguments={"path": "README.md"})
    assert seen[-1].reason == "toolUse"

    assert message.content == [
        ThinkingContent(thinking="The user wants a file.", thinking_signature="EqQBCkYIAhgCKkBa"),
        ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque==", redacted=True),
        TextContent(text="Let me read it."),
        ToolCall(id="toolu_01", name="read", arguments={"path": "README.md"}),
    ]
    assert message.stop_reason == "toolUse" and message.response_id == "msg_01"
    assert (message.api, message.provider, message.model) == (
        "anthropic-messages",
        "anthropic",
        "claude-test",
    )
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (100, 80, 2000, 50)
    assert usage.total_tokens == 2230
    assert usage.cost.input == pytest.approx(100 * 3 / 1e6)
    assert usage.cost.output == pytest.approx(80 * 15 / 1e6)
    assert usage.cost.cache_read == pytest.approx(2000 * 0.3 / 1e6)
    assert usage.cost.cache_write == pytest.approx(50 * 3.75 / 1e6)
    assert usage.cost.total == pytest.approx(
        usage.cost.input + usage.cost.output + 2000 * 0.3 / 1e6 + 50 * 3.75 / 1e6
    )


async def test_the_partial_arguments_grow_with_each_delta() -> None:
    """The partial message is one growing object (as in pi-ai): read it as each delta arrives."""
    pieces = ['{"path": "a', "b.txt", '", "limit": 1', "0}"]
    body: list[bytes | Pause] = []
    for part in anthropic_sse([a_start(), *a_tool(0, "toolu_01", "read", *pieces), *a_end("tool_use")]):
        body += [part, Pause(0.02)]
    async with MockServer([Reply(body=body)]) as server:
        provider = anthropic_provider(server.url)
        stream = provider.stream(provider.models[0], context(tools=[READ_TOOL]), None)
        arguments = [dict(e.partial.content[0].arguments) async for e in stream if e.type == "toolcall_delta"]
    assert arguments == [
        {"path": "a"},
        {"path": "ab.txt"},
        {"path": "ab.txt", "limit": 1},
        {"path": "ab.txt", "limit": 10},
    ]


async def test_the_request_has_the_system_prompt_tools_and_cache_breakpoints() -> None:
    async with MockServer([a_reply(a_start(), a_text(0, "ok"), a_end())]) as server:
        provider = anthropic_provider(server.url)
        options = StreamOptions(temperature=0.2, tool_choice="auto", metadata={"user_id": "u-1"})
        await final(provider.stream(provider.models[0], context("Hi", tools=[READ_TOOL]), options))
    [request] = server.requests
    assert request.path == "/v1/messages"
    assert "test-key" in (request.headers.get("x-api-key", "") + request.headers.get("authorization", ""))
    assert "anthropic-version" in request.headers and "anthropic-beta" not in request.headers
    body = request.json()
    ephemeral = {"type": "ephemeral"}
    assert body["model"] == "claude-test" and body["stream"] is True and body["max_tokens"] == 32000
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": ephemeral}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": ephemeral}]}
    ]
    assert body["tools"] == [
        {
            "name": "read",
            "description": "Read a file",
            "eager_input_streaming": True,
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
            "cache_control": ephemeral,
        }
    ]
    assert body["thinking"] == {"type": "disabled"}
    assert body["temperature"] == 0.2 and body["tool_choice"] == {"type": "auto"}
    assert body["metadata"] == {"user_id": "u-1"}


async def test_no_cache_breakpoints_with_cache_retention_none_and_an_hour_with_long() -> None:
    replies = [a_reply(a_start(), a_text(0, "ok"), a_end()) for _ in range(2)]
    async with MockServer(replies) as server:
        provider = anthropic_provider(server.url)
        await final(provider.stream(provider.models[0], context(), StreamOptions(cache_retention="none")))
        await final(provider.stream(provider.models[0], context(), StreamOptions(cache_retention="long")))
    plain, long = (r.json() for r in server.requests)
    assert plain["system"] == [{"type": "text", "text": "You are terse."}]
    assert plain["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}]
    assert long["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


async def test_a_thinking_level_becomes_a_budget_with_interleaved_thinking() -> None:
    async with MockServer([a_reply(a_start(), a_text(0, "ok"), a_end())]) as server:
        provider = anthropic_provider(server.url)
        options = StreamOptions(reasoning="medium", temperature=0.5)
        await final(provider.stream(provider.models[0], context(), options))
    [request] = server.requests
    body = request.json()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert body["max_tokens"] == 32000 and "temperature" not in body
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"


async def test_custom_budgets_fit_under_the_output_limit() -> None:
    model = {**CLAUDE, "maxTokens": 4000}
    async with MockServer([a_reply(a_start(), a_text(0, "ok"), a_end())]) as server:
        provider = anthropic_provider(server.url, model)
        options = StreamOptions(reasoning="high", thinking_budgets=ThinkingBudgets(high=6000))
        await final(provider.stream(provider.models[0], context(), options))
    body = server.requests[0].json()
    assert body["max_tokens"] == 4000
    assert body["thinking"]["budget_tokens"] == 4000 - 1024


async def test_adaptive_thinking_asks_for_an_effort() -> None:
    model = {
        **CLAUDE,
        "thinkingLevelMap": {"off": None, "xhigh": "xhigh"},
        "compat": {"forceAdaptiveThinking": True},
    }
    replies = [a_reply(a_start(), a_text(0, "ok"), a_end()) for _ in range(3)]
    async with MockServer(replies) as server:
        provider = anthropic_provider(server.url, model)
        for level in ("xhigh", "minimal", None):
            await final(provider.stream(provider.models[0], context(), StreamOptions(reasoning=level)))
    xhigh, minimal, off = (r.json() for r in server.requests)
    assert xhigh["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert xhigh["output_config"] == {"effort": "xhigh"}
    assert minimal["output_config"] == {"effort": "low"}
    assert "thinking" not in off, "a model whose 'off' maps to null cannot be told not to think"
    assert all("anthropic-beta" not in r.headers for r in server.requests)


async def test_history_is_sent_back_with_signatures_images_and_tool_results() -> None:
    same_model = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Plan", thinking_signature="sig-1"),
            ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="opaque==", redacted=True),
            TextContent(text="Looking."),
            ToolCall(id="toolu_01", name="read", arguments={"path": "a.png"}),
            ToolCall(id="toolu_02", name="read", arguments={"path": "b.txt"}),
        ],
    )
    other_model = AssistantMessage(
        api="openai-completions",
        provider="local",
        model="other",
        content=[
            ThinkingContent(thinking="Other thoughts", thinking_signature="reasoning_content"),
            TextContent(text="Hi"),
        ],
    )
    aborted = AssistantMessage(
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason="aborted",
        content=[TextContent(text="cut")],
    )
    messages = [
        UserMessage(content=[TextContent(text="Look"), ImageContent(data=PIXEL, mime_type="image/png")]),
        same_model,
        ToolResultMessage(
            tool_call_id="toolu_01",
            tool_name="read",
            content=[ImageContent(data=PIXEL, mime_type="image/png")],
        ),
        user_message("and?"),
        other_model,
        aborted,
        ToolResultMessage(
            tool_call_id="x|y", tool_name="read", content=[TextContent(text="line 1")], is_error=True
        ),
    ]
    async with MockServer([a_reply(a_start(), a_text(0, "ok"), a_end())]) as server:
        provider = anthropic_provider(server.url)
        await final(provider.stream(provider.models[0], Context(messages=messages, tools=[READ_TOOL]), None))
    body = server.requests[0].json()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}}
    assert "system" not in body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Plan", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque=="},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.png"}},
                {"type": "tool_use", "id": "toolu_02", "name": "read", "input": {"path": "b.txt"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": [{"type": "text", "text": "(see attached image)"}, image],
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": "No result provided",
                    "is_error": True,
                },
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "and?"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Other thoughts"}, {"type": "text", "text": "Hi"}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "x|y",
                    "content": "line 1",
                    "is_error": True,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        },
    ]


async def test_stop_reasons() -> None:
    refusal = [
        {
            "type": "message_delta",
            "delta": {"stop_reason": "refusal", "stop_details": {"explanation": "No."}},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]
    replies = [
        a_reply(a_start(), a_text(0, "trunc"), a_end("max_tokens")),
        a_reply(a_start(), a_text(0, "I can't"), refusal),
        a_reply(a_start(), a_text(0, "?"), a_end("something_new")),
        a_reply(a_start(), a_text(0, "paused"), a_end("pause_turn")),
    ]
    async with MockServer(replies) as server:
        provider = anthropic_provider(server.url)
        results = [await collect(provider.stream(provider.models[0], context(), None)) for _ in replies]
    (length_events, length), (refusal_events, refused), (_, unknown), (_, paused) = results
    assert (
        length.stop_reason == "length"
        and length_events[-1].type == "done"
        and length_events[-1].reason == "length"
    )
    assert refused.stop_reason == "error" and refused.error_message == "No."
    assert refusal_events[-1].type == "error" and refused.content == [TextContent(text="I can't")]
    assert unknown.stop_reason == "error" and unknown.error_message == "Unhandled stop reason: something_new"
    assert paused.stop_reason == "stop"


async def test_a_stream_without_message_stop_is_an_error() -> None:
    async with MockServer([Reply(body=anthropic_sse([a_start(), *a_text(0, "Hi"), *a_end()[:1]]))]) as server:
        provider = anthropic_provider(server.url)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "error"
    assert message.error_message == "Anthropic stream ended before message_stop"
    assert message.content == [TextContent(text="Hi")]


async def test_overloaded_before_content_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    """529 ``overloaded_error``, then the same as an error event before any content: both retried."""
    caplog.set_level(logging.WARNING)
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    mid_stream = Reply(body=[*anthropic_sse([a_start()]), a_error("overloaded_error", "Overloaded")])
    replies = [json_reply(529, overloaded), mid_stream, a_reply(a_start(), a_text(0, "Fine"), a_end())]
    async with MockServer(replies) as server:
        provider = anthropic_provider(server.url)
        seen, message = await collect(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "stop" and message.content == [TextContent(text="Fine")]
    assert kinds(seen) == ["start", "text_start", "text_delta", "text_end", "done"]
    lines = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert [line.split(", retrying")[0] for line in lines] == [
        "anthropic: 529 overloaded",
        "anthropic: overloaded_error",
    ]


async def test_overloaded_after_content_ends_the_message_without_a_retry() -> None:
    body = [*anthropic_sse([a_start(), *a_text(0, "Half")[:2]]), a_error("overloaded_error", "Overloaded")]
    async with MockServer([Reply(body=body), a_reply(a_start(), a_text(0, "dup"), a_end())]) as server:
        provider = anthropic_provider(server.url)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert len(server.requests) == 1
    assert message.stop_reason == "error" and message.content == [TextContent(text="Half")]
    assert message.error_message == "Anthropic stream error (overloaded_error): Overloaded"


async def test_without_an_api_key_the_stream_says_how_to_set_one() -> None:
    provider = anthropic_provider("http://127.0.0.1:9", apiKey=None, apiKeyEnv="ANTHROPIC_API_KEY")
    seen, message = await collect(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "error" and kinds(seen) == ["error"]
    assert message.error_message == (
        "No API key for provider 'anthropic': set ANTHROPIC_API_KEY or add \"apiKey\" to providers.anthropic "
        "in models.json"
    )


async def test_the_api_key_of_the_request_comes_first_and_hooks_see_the_payload_and_response() -> None:
    seen_responses: list[dict[str, Any]] = []

    def on_payload(params: dict[str, Any], model: Any) -> dict[str, Any]:
        return {**params, "max_tokens": 77}

    async def on_response(response: dict[str, Any], model: Any) -> None:
        seen_responses.append(response)

    async with MockServer([a_reply(a_start(), a_text(0, "ok"), a_end())]) as server:
        provider = anthropic_provider(server.url)
        options = StreamOptions(api_key="from-the-session", on_payload=on_payload, on_response=on_response)
        await final(provider.stream(provider.models[0], context(), options))
    [request] = server.requests
    assert "from-the-session" in request.headers.get("x-api-key", "") + request.headers.get(
        "authorization", ""
    )
    assert request.json()["max_tokens"] == 77
    assert seen_responses[0]["status"] == 200
    assert seen_responses[0]["headers"]["content-type"] == "text/event-stream"
