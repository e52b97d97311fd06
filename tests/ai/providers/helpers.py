"""Providers pointed at a :class:`MockServer`, and the recorded shapes of their APIs' streams.

Both providers are configured as ``models.json`` would configure them, with tiny retry
delays so that the fault tests stay fast. The idle timeout is 10 s (a loaded CI machine
can take longer than a fraction of a second to connect); the stall tests set
:data:`STALL_TIMEOUT_MS`. A :class:`Dialect`
describes one API's stream (Anthropic's events, OpenAI's chunks) so that one fault
test runs against both providers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentls.ai import AssistantMessage, AssistantMessageEventStream, Context, Tool, user_message
from agentls.ai.providers.anthropic import AnthropicProvider
from agentls.ai.providers.catalog import ProviderConfig, resolve_provider
from agentls.ai.providers.openai_compat import OpenAICompatProvider

from tests.ai.providers.mock_http import Pause, Reply, anthropic_sse, openai_sse

IDLE_TIMEOUT_MS = 10_000
STALL_TIMEOUT_MS = 300
"""The idle timeout of the tests that make the server stall."""

READ_TOOL = Tool(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def context(text: str = "Hello", tools: list[Tool] | None = None) -> Context:
    return Context(system_prompt="You are terse.", messages=[user_message(text)], tools=tools)


def _spec(provider_id: str, api: str, base_url: str, model: dict[str, Any], config: dict[str, Any]) -> Any:
    entry = ProviderConfig.model_validate(
        {
            "api": api,
            "baseUrl": base_url,
            "apiKey": "test-key",
            "retryBaseDelayMs": 5,
            "idleTimeoutMs": IDLE_TIMEOUT_MS,
            "models": [model],
            **config,
        }
    )
    return resolve_provider(provider_id, entry, {}, builtin=False, config_file="models.json")


CLAUDE = {
    "id": "claude-test",
    "reasoning": True,
    "input": ["text", "image"],
    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    "contextWindow": 200000,
    "maxTokens": 32000,
}
LOCAL = {
    "id": "local-model",
    "reasoning": True,
    "input": ["text", "image"],
    "contextWindow": 32768,
    "maxTokens": 4096,
}


def anthropic_provider(url: str, model: dict[str, Any] | None = None, **config: Any) -> AnthropicProvider:
    return AnthropicProvider(_spec("anthropic", "anthropic-messages", url, model or CLAUDE, config))


def openai_provider(url: str, model: dict[str, Any] | None = None, **config: Any) -> OpenAICompatProvider:
    return OpenAICompatProvider(_spec("local", "openai-completions", f"{url}/v1", model or LOCAL, config))


async def collect(stream: AssistantMessageEventStream) -> tuple[list[Any], AssistantMessage]:
    events = [event async for event in stream]
    return events, await stream.result()


async def final(stream: AssistantMessageEventStream) -> AssistantMessage:
    """The final message, after reading every event."""
    return (await collect(stream))[1]


def kinds(events: list[Any]) -> list[str]:
    """Event types, consecutive deltas of one kind collapsed."""
    out: list[str] = []
    for event in events:
        if not (event.type.endswith("_delta") and out and out[-1] == event.type):
            out.append(event.type)
    return out


# --- Anthropic's stream ----------------------------------------------------------------------


def a_start(input_tokens: int = 12, model: str = "claude-test", **usage: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1, **usage},
        },
    }


def a_text(index: int, *pieces: str) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}}
            for p in pieces
        ),
        {"type": "content_block_stop", "index": index},
    ]


def a_tool(index: int, call_id: str, name: str, *json_pieces: str, stop: bool = True) -> list[dict[str, Any]]:
    start = {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
    }
    deltas = [
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": p},
        }
        for p in json_pieces
    ]
    return [start, *deltas, *([{"type": "content_block_stop", "index": index}] if stop else [])]


def a_end(stop_reason: str = "end_turn", output_tokens: int = 20) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def a_reply(*events: dict[str, Any] | list[dict[str, Any]]) -> Reply:
    flat: list[dict[str, Any]] = []
    for item in events:
        flat.extend(item if isinstance(item, list) else [item])
    return Reply(body=anthropic_sse(flat))


def a_error(error_type: str, message: str) -> bytes:
    data = json.dumps({"type": "error", "error": {"type": error_type, "message": message}})
    return f"event: error\ndata: {data}\n\n".encode()


# --- OpenAI's stream -------------------------------------------------------------------------


def o_chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
    }


def o_usage(prompt: int = 12, completion: int = 20, cached: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "local-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def o_tool(
    index: int, call_id: str | None = None, name: str | None = None, arguments: str = ""
) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        call.update(id=call_id, type="function")
        call["function"]["name"] = name
    return o_chunk({"tool_calls": [call]})


# --- one fault test, two APIs ------------------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """How one API streams, for the fault tests that both providers must pass."""

    name: str
    provider: Callable[..., Any]
    text_events: Callable[[str], list[bytes | Pause]]
    """A whole successful response answering ``text`` in two pieces."""
    text_head: Callable[[str], list[bytes | Pause]]
    """The beginning of a response: ``text`` streamed, the block still open."""
    tool_head: Callable[[str], list[bytes | Pause]]
    """The beginning of a response: a ``read`` tool call whose arguments stop at the given JSON piece."""
    malformed: bytes
    """A data line whose JSON is cut off."""


def _anthropic_text(text: str) -> list[bytes | Pause]:
    half = len(text) // 2
    return anthropic_sse([a_start(), *a_text(0, text[:half], text[half:]), *a_end()])


def _anthropic_text_head(text: str) -> list[bytes | Pause]:
    return anthropic_sse([a_start(), *a_text(0, text)[:2]])


def _anthropic_tool_head(piece: str) -> list[bytes | Pause]:
    return anthropic_sse([a_start(), *a_tool(0, "toolu_01", "read", piece, stop=False)])


def _openai_text(text: str) -> list[bytes | Pause]:
    half = len(text) // 2
    chunks = [o_chunk({"role": "assistant", "content": ""}), o_chunk({"content": text[:half]})]
    return openai_sse([*chunks, o_chunk({"content": text[half:]}), o_chunk({}, "stop"), o_usage()])


def _openai_text_head(text: str) -> list[bytes | Pause]:
    return openai_sse([o_chunk({"role": "assistant", "content": text})], done=False)


def _openai_tool_head(piece: str) -> list[bytes | Pause]:
    return openai_sse([o_tool(0, "call_01", "read"), o_tool(0, arguments=piece)], done=False)


ANTHROPIC = Dialect(
    "anthropic",
    anthropic_provider,
    _anthropic_text,
    _anthropic_text_head,
    _anthropic_tool_head,
    b"event: content_block_delta\n"
    b'data: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_de\n\n',
)
OPENAI = Dialect(
    "openai",
    openai_provider,
    _openai_text,
    _openai_text_head,
    _openai_tool_head,
    b'data: {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "Wor\n\n',
)
DIALECTS = [ANTHROPIC, OPENAI]
