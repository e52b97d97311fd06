"""The OpenAI-compatible provider: real ``httpx`` against a mock of ``/chat/completions`` streaming chunks."""

from __future__ import annotations

from typing import Any

import pytest
from agentls.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentls.ai.providers.openai_compat import short_hash

from tests.ai.providers.helpers import (
    LOCAL,
    READ_TOOL,
    collect,
    context,
    final,
    kinds,
    o_chunk,
    o_tool,
    o_usage,
    openai_provider,
)
from tests.ai.providers.mock_http import MockServer, Reply, json_reply, openai_sse

PIXEL = "iVBORw0KGgo="


def reply(*chunks: dict[str, Any], done: bool = True) -> Reply:
    return Reply(body=openai_sse(chunks, done=done))


def text_reply(text: str = "ok") -> Reply:
    return reply(o_chunk({"role": "assistant", "content": text}), o_chunk({}, "stop"), o_usage())


async def test_reasoning_text_and_tool_calls_stream_and_end_together() -> None:
    chunks = [
        o_chunk({"role": "assistant", "content": None, "reasoning_content": "Two files "}),
        o_chunk({"reasoning_content": "to read."}),
        o_chunk({"content": "Reading both."}),
        o_tool(0, "call_a", "read"),
        o_tool(1, "call_b", "read", '{"path"'),
        o_tool(0, arguments='{"path": "a.txt"}'),
        o_tool(1, arguments=': "b.txt"}'),
        o_chunk({}, "tool_calls"),
        o_usage(prompt=120, completion=40, cached=100),
    ]
    async with MockServer([reply(*chunks)]) as server:
        provider = openai_provider(
            server.url, model={**LOCAL, "cost": {"input": 1, "output": 2, "cacheRead": 0.5}}
        )
        seen, message = await collect(provider.stream(provider.models[0], context(tools=[READ_TOOL]), None))

    assert [e.type for e in seen] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "text_start",
        "text_delta",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_delta",
        "thinking_end",
        "text_end",
        "toolcall_end",
        "toolcall_end",
        "done",
    ]
    assert [(e.content_index, e.delta) for e in seen if e.type == "toolcall_delta"] == [
        (2, ""),
        (3, '{"path"'),
        (2, '{"path": "a.txt"}'),
        (3, ': "b.txt"}'),
    ]
    assert message.content == [
        ThinkingContent(thinking="Two files to read.", thinking_signature="reasoning_content"),
        TextContent(text="Reading both."),
        ToolCall(id="call_a", name="read", arguments={"path": "a.txt"}),
        ToolCall(id="call_b", name="read", arguments={"path": "b.txt"}),
    ]
    assert message.stop_reason == "toolUse" and message.response_id == "chatcmpl-1"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens) == (
        20,
        40,
        100,
        0,
        160,
    )
    assert usage.cost.total == pytest.approx((20 * 1 + 40 * 2 + 100 * 0.5) / 1e6)


async def test_reasoning_arrives_in_whichever_field_the_server_uses() -> None:
    chunks = [o_chunk({"reasoning": "Hmm."}), o_chunk({"content": "Yes."}), o_chunk({}, "length"), o_usage()]
    async with MockServer([reply(*chunks)]) as server:
        provider = openai_provider(server.url)
        seen, message = await collect(provider.stream(provider.models[0], context(), None))
    assert message.content == [
        ThinkingContent(thinking="Hmm.", thinking_signature="reasoning"),
        TextContent(text="Yes."),
    ]
    assert message.stop_reason == "length" and seen[-1].reason == "length"


async def test_the_request_follows_the_servers_settings() -> None:
    async with MockServer([text_reply(), text_reply(), text_reply()]) as server:
        default = openai_provider(server.url)
        options = StreamOptions(reasoning="high", tool_choice="auto", temperature=0.3, max_tokens=1000)
        await final(default.stream(default.models[0], context(tools=[READ_TOOL]), options))
        quirky = openai_provider(
            server.url,
            compat={
                "maxTokensField": "max_tokens",
                "supportsToolChoice": False,
                "supportsStore": False,
                "supportsDeveloperRole": False,
                "supportsUsageInStreaming": False,
                "supportsStrictMode": False,
            },
            apiKey=None,
        )
        await final(quirky.stream(quirky.models[0], context(tools=[READ_TOOL]), options))
        plain = openai_provider(server.url, model={**LOCAL, "reasoning": False})
        await final(plain.stream(plain.models[0], context(), StreamOptions(reasoning="high")))
    first, second, third = server.requests
    assert first.path == "/v1/chat/completions" and first.headers["authorization"] == "Bearer test-key"
    body = first.json()
    assert body["messages"][0] == {"role": "developer", "content": "You are terse."}
    assert body["messages"][1] == {"role": "user", "content": [{"type": "text", "text": "Hello"}]}
    assert (
        body["stream"] is True
        and body["stream_options"] == {"include_usage": True}
        and body["store"] is False
    )
    assert body["max_completion_tokens"] == 1000 and "max_tokens" not in body
    assert body["tool_choice"] == "auto" and body["temperature"] == 0.3 and body["reasoning_effort"] == "high"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL.parameters,
                "strict": False,
            },
        }
    ]
    quirks = second.json()
    assert "authorization" not in second.headers, "a local server needs no key"
    assert quirks["messages"][0]["role"] == "system"
    assert quirks["max_tokens"] == 1000 and "max_completion_tokens" not in quirks
    assert "tool_choice" not in quirks and "store" not in quirks and "stream_options" not in quirks
    assert "strict" not in quirks["tools"][0]["function"]
    assert "reasoning_effort" not in third.json() and third.json()["messages"][0]["role"] == "system"


@pytest.mark.parametrize(
    ("compat", "level", "expected"),
    [
        ({"thinkingFormat": "openrouter"}, "low", {"reasoning": {"effort": "low"}}),
        ({"thinkingFormat": "openrouter"}, None, {"reasoning": {"effort": "none"}}),
        ({"thinkingFormat": "qwen"}, "medium", {"enable_thinking": True, "reasoning_effort": "medium"}),
        (
            {"thinkingFormat": "qwen-chat-template"},
            None,
            {"chat_template_kwargs": {"enable_thinking": False, "preserve_thinking": True}},
        ),
        (
            {"thinkingFormat": "deepseek"},
            "high",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
        ),
        ({}, "xhigh", {"reasoning_effort": "high"}),
    ],
)
async def test_reasoning_is_asked_for_in_the_servers_format(
    compat: dict[str, Any], level: str | None, expected: dict[str, Any]
) -> None:
    async with MockServer([text_reply()]) as server:
        provider = openai_provider(server.url, compat=compat)
        await final(provider.stream(provider.models[0], context(), StreamOptions(reasoning=level)))  # type: ignore[arg-type]
    body = server.requests[0].json()
    keys = ("reasoning", "reasoning_effort", "enable_thinking", "chat_template_kwargs", "thinking")
    assert {k: body[k] for k in keys if k in body} == expected


async def test_history_is_converted_for_chat_completions() -> None:
    assistant = AssistantMessage(
        api="openai-completions",
        provider="local",
        model="local-model",
        stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Think", thinking_signature="reasoning_content"),
            TextContent(text="Let me look."),
            ToolCall(id="call_2", name="read", arguments={"path": "a.png"}),
        ],
    )
    messages = [
        UserMessage(content=[TextContent(text="Look"), ImageContent(data=PIXEL, mime_type="image/png")]),
        AssistantMessage(
            api="x",
            provider="other",
            model="y",
            content=[ToolCall(id="call|item/1+x", name="read", arguments={"path": "a.png"})],
            stop_reason="toolUse",
        ),
        ToolResultMessage(
            tool_call_id="call|item/1+x",
            tool_name="read",
            content=[ImageContent(data=PIXEL, mime_type="image/png")],
        ),
        assistant,
        ToolResultMessage(tool_call_id="call_2", tool_name="read", content=[]),
        UserMessage(content="Thanks"),
    ]
    async with MockServer([text_reply()]) as server:
        provider = openai_provider(server.url, compat={"requiresToolResultName": True})
        await final(provider.stream(provider.models[0], Context(messages=messages), None))
    sent = server.requests[0].json()["messages"]
    data_url = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}
    assert sent == [
        {"role": "user", "content": [{"type": "text", "text": "Look"}, data_url]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_item_1_x",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.png"}'},
                }
            ],
        },
        {"role": "tool", "content": "(see attached image)", "tool_call_id": "call_item_1_x", "name": "read"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, data_url],
        },
        {
            "role": "assistant",
            "content": "Let me look.",
            "reasoning_content": "Think",
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.png"}'},
                }
            ],
        },
        {"role": "tool", "content": "(no tool output)", "tool_call_id": "call_2", "name": "read"},
        {"role": "user", "content": "Thanks"},
    ]
    assert server.requests[0].json()["tools"] == [], "tool calls in the history need a tools list"


def test_short_hash_matches_pi() -> None:
    # the values of pi-ai's shortHash, computed with Node
    assert short_hash("") == "k4n83c7h0j2b"
    assert short_hash("call_abc|item_def") == "10fm1bx19cspbe"
    assert short_hash("é😀") == "102l7zrk951la"  # UTF-16 code units, as JavaScript counts them


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            401,
            {"error": {"message": "Invalid API key", "type": "invalid_request_error"}},
            "401: Invalid API key. The API key of provider 'local', read from models.json "
            "(providers.local.apiKey), was refused: check it.",
        ),
        (404, {"error": "model 'llama9' not found"}, "404: model 'llama9' not found"),
    ],
)
async def test_error_statuses_carry_the_servers_message(status: int, body: Any, message: str) -> None:
    async with MockServer([json_reply(status, body)]) as server:
        provider = openai_provider(server.url)
        result = await final(provider.stream(provider.models[0], context(), None))
    assert result.stop_reason == "error" and result.error_message == message


async def test_an_error_chunk_mid_stream_ends_the_message() -> None:
    error = {
        "error": {"message": "Provider returned error", "code": 502, "metadata": {"raw": "upstream timeout"}}
    }
    async with MockServer([reply(o_chunk({"content": "Par"}), error, done=False)]) as server:
        provider = openai_provider(server.url)
        seen, message = await collect(provider.stream(provider.models[0], context(), None))
    assert message.stop_reason == "error" and message.content == [TextContent(text="Par")]
    assert message.error_message == "Provider returned error\nupstream timeout"
    assert kinds(seen) == ["start", "text_start", "text_delta", "error"]


async def test_a_stream_that_ends_without_a_finish_reason() -> None:
    replies = [reply(o_chunk({"content": "Hi"})), reply(o_chunk({"content": "Hi"}))]
    async with MockServer(replies) as server:
        strict = openai_provider(server.url)
        seen, message = await collect(strict.stream(strict.models[0], context(), None))
        lenient = openai_provider(server.url, compat={"supportsFinishReason": False})
        inferred = await final(lenient.stream(lenient.models[0], context(), None))
    assert message.stop_reason == "error" and message.error_message == "Stream ended without finish_reason"
    assert kinds(seen) == ["start", "text_start", "text_delta", "text_end", "error"]
    assert inferred.stop_reason == "stop" and inferred.content == [TextContent(text="Hi")]


async def test_content_filter_is_an_error() -> None:
    async with MockServer([reply(o_chunk({"content": "..."}), o_chunk({}, "content_filter"))]) as server:
        provider = openai_provider(server.url)
        message = await final(provider.stream(provider.models[0], context(), None))
    assert (
        message.stop_reason == "error" and message.error_message == "Provider finish_reason: content_filter"
    )


def _answer(text: str, *, held_open: bool = False) -> Reply:
    chunks = [o_chunk({"role": "assistant", "content": text}), o_chunk(finish_reason="stop"), o_usage()]
    return Reply(body=openai_sse(chunks), stall=held_open)


async def test_the_body_after_done_is_read_so_the_next_request_reuses_the_connection() -> None:
    async with MockServer([_answer("one"), _answer("two"), _answer("three")], keep_alive=True) as server:
        provider = openai_provider(server.url)
        texts = []
        for _ in range(3):
            message = await final(provider.stream(provider.models[0], context()))
            texts.append(message.content[0].text)
    assert texts == ["one", "two", "three"]
    assert len(server.requests) == 3 and server.connections == 1


async def test_a_body_held_open_after_done_still_ends_the_response_complete() -> None:
    async with MockServer([_answer("held", held_open=True), _answer("next")], keep_alive=True) as server:
        provider = openai_provider(server.url)
        first = await final(provider.stream(provider.models[0], context()))
        second = await final(provider.stream(provider.models[0], context()))
    assert (first.stop_reason, first.content[0].text) == ("stop", "held")
    assert (second.stop_reason, second.content[0].text) == ("stop", "next")
    assert server.connections == 2  # the held connection was given up, not reused
