"""The Anthropic Messages API over ``httpx`` (pi-ai's ``api/anthropic-messages.js``).

``POST {baseUrl}/v1/messages`` with the key in ``x-api-key`` and the API version
header, as the official SDK sends it; retries are :mod:`agentls.ai.providers.retry`'s.
As in pi-ai, the streamed body is read as raw server-sent events and turned into
the assistant message event stream here: text, thinking (with its signature, sent
back on later turns; redacted thinking kept opaque), tool use with the arguments'
JSON streamed as ``toolcall_delta``, usage and cost.

Not the ``anthropic`` SDK: importing it took 0.85 s, which every new editor window
paid before its first token, and it copied and encoded the whole request again on
every turn. The request is plain JSON; this module sends it as the SDK did.

Not ported from pi-ai: OAuth subscription tokens (Claude Code identity), deferred
tools and tool references, server-side model fallback, mid-conversation effort
changes and strict (constrained-sampling) tools.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentls.ai.event_stream import AssistantMessageEventStream
from agentls.ai.models import error_stream
from agentls.ai.providers.body_bytes import BodyEncoder
from agentls.ai.providers.budgets import (
    adjust_max_tokens_for_thinking,
    always_thinks,
    clamp_max_tokens_to_context,
    clamp_thinking_budget_to_answer_room,
)
from agentls.ai.providers.catalog import ProviderSpec
from agentls.ai.providers.json_parse import parse_json_with_repair
from agentls.ai.providers.sse import ServerSentEvent
from agentls.ai.providers.sse_request import SsePost, StatusError, StreamEnded, StreamError, stream_sse
from agentls.ai.providers.streaming import ResponseBuilder
from agentls.ai.providers.transform import sanitize_surrogates, transform_messages
from agentls.ai.providers.wire_forms import MessageForms, WireForms, WirePrefix
from agentls.ai.secrets import CredentialError
from agentls.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    import httpx  # the stack is imported with the first request (clients.http_client)

logger = logging.getLogger(__name__)

FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
_MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
_RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "api_error", "rate_limit_error"})
"""Error events (mid-stream) that mean "try again", like the statuses 529, 500 and 429."""


API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header (the SDK's)."""
_ERROR_BODY_LIMIT = 2000


# --- settings of one request ----------------------------------------------------------------


@dataclass(frozen=True)
class AnthropicCompat:
    force_adaptive_thinking: bool = False
    supports_temperature: bool = True
    supports_eager_tool_input_streaming: bool = True
    supports_long_cache_retention: bool = True
    supports_cache_control_on_tools: bool = True
    allow_empty_signature: bool = False


@dataclass(frozen=True)
class Thinking:
    """What a thinking level asks of one request (pi-ai's ``streamSimple``)."""

    enabled: bool
    max_tokens: int
    budget_tokens: int | None = None
    effort: str | None = None


def _effort(level: str, level_map: dict[str, str | None]) -> str:
    mapped = level_map.get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def plan_thinking(
    model: Model,
    context: Context,
    options: StreamOptions | None,
    compat: AnthropicCompat,
    level_map: dict[str, str | None],
) -> Thinking:
    requested = options.max_tokens if options and options.max_tokens is not None else model.max_tokens
    max_tokens = clamp_max_tokens_to_context(model, context, requested)
    level = options.reasoning if options else None
    if not level:
        return Thinking(enabled=False, max_tokens=max_tokens)
    if compat.force_adaptive_thinking:
        return Thinking(enabled=True, max_tokens=max_tokens, effort=_effort(level, level_map))
    budgets = options.thinking_budgets if options else None
    adjusted, budget = adjust_max_tokens_for_thinking(max_tokens, model.max_tokens, level, budgets)
    max_tokens = clamp_max_tokens_to_context(model, context, adjusted)
    budget = clamp_thinking_budget_to_answer_room(budget, max_tokens)
    return Thinking(enabled=True, max_tokens=max_tokens, budget_tokens=budget)


def cache_control(options: StreamOptions | None, compat: AnthropicCompat) -> dict[str, str] | None:
    retention = (options.cache_retention if options else None) or "short"
    if retention == "none":
        return None
    if retention == "long" and compat.supports_long_cache_retention:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


# --- the request body -----------------------------------------------------------------------


def normalize_tool_call_id(call_id: str) -> str:
    """Anthropic's tool-use ids: ``^[a-zA-Z0-9_-]+$``, at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id)[:64]


def _image(block: ImageContent) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _tool_result_content(content: list[TextContent | ImageContent]) -> str | list[dict[str, Any]]:
    """Text alone as one string; with images, blocks (and a placeholder text if there is no text)."""
    if not any(isinstance(block, ImageContent) for block in content):
        return sanitize_surrogates(
            "\n".join(block.text for block in content if isinstance(block, TextContent))
        )
    blocks = [
        {"type": "text", "text": sanitize_surrogates(b.text)} if isinstance(b, TextContent) else _image(b)
        for b in content
    ]
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": "(see attached image)"})
    return blocks


def _user(message: UserMessage) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        text = sanitize_surrogates(message.content)
        return {"role": "user", "content": text} if text.strip() else None
    blocks = [
        {"type": "text", "text": sanitize_surrogates(b.text)} if isinstance(b, TextContent) else _image(b)
        for b in message.content
        if not (isinstance(b, TextContent) and not b.text.strip())
    ]
    return {"role": "user", "content": blocks} if blocks else None


def _assistant(message: AssistantMessage, allow_empty_signature: bool) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
                continue
            signature = block.thinking_signature
            signed = bool(signature and signature.strip())
            if not block.thinking.strip() and not signed:
                continue
            thinking = sanitize_surrogates(block.thinking)
            if signed:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
            elif allow_empty_signature:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": ""})
            else:  # an unsigned thinking block (an aborted stream) is refused: send it as text
                blocks.append({"type": "text", "text": thinking})
        else:
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments or {}}
            )
    return {"role": "assistant", "content": blocks} if blocks else None


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": _tool_result_content(message.content),
        "is_error": message.is_error,
    }


def _convert(message: Message, allow_empty_signature: bool) -> dict[str, Any] | None:
    if isinstance(message, UserMessage):
        return _user(message)
    if isinstance(message, AssistantMessage):
        return _assistant(message, allow_empty_signature)
    return _tool_result(message)


def convert_messages(
    messages: list[Message],
    cache: dict[str, str] | None,
    allow_empty_signature: bool,
    forms: WireForms | None = None,
) -> list[dict[str, Any]]:
    """Anthropic's messages: consecutive tool results share a user message; the last is cached.

    A request whose messages begin with those the last one converted up to its last
    wire message (which the next messages may still join) reuses that part.
    """
    forms = forms or WireForms()
    forms.start(allow_empty_signature)

    def convert(message: Message) -> dict[str, Any] | None:
        return _convert(message, allow_empty_signature)

    ids = list(map(id, messages))
    last = forms.resume
    if isinstance(last, WirePrefix) and last.matches(allow_empty_signature, ids):
        index, params = len(last.ids), list(last.forms)
    else:
        index, params = 0, []
    last_start: int | None = None
    """Where the last wire message made here began (the next request goes on from there)."""
    while index < len(messages):
        message = messages[index]
        start = index
        index += 1
        if isinstance(message, ToolResultMessage):
            results = [forms.get(message, convert)]
            while index < len(messages) and isinstance(following := messages[index], ToolResultMessage):
                results.append(forms.get(following, convert))
                index += 1
            params.append({"role": "user", "content": results})
            last_start = start
        elif (form := forms.get(message, convert)) is not None:
            params.append(form)
            last_start = start
    forms.done()
    if last_start is not None:
        forms.resume = WirePrefix(allow_empty_signature, messages[:last_start], ids[:last_start], params[:-1])
    if cache is not None and params and params[-1]["role"] == "user":
        last = params[-1]
        if isinstance(last["content"], str):
            params[-1] = {
                **last,
                "content": [{"type": "text", "text": last["content"], "cache_control": cache}],
            }
        elif last["content"] and last["content"][-1]["type"] in ("text", "image", "tool_result"):
            *rest, final = last["content"]
            params[-1] = {**last, "content": [*rest, {**final, "cache_control": cache}]}
    return params


def convert_tools(
    tools: list[Tool], eager_input_streaming: bool, cache: dict[str, str] | None
) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        entry: dict[str, Any] = {"name": tool.name, "description": tool.description}
        if eager_input_streaming:
            entry["eager_input_streaming"] = True
        entry["input_schema"] = {
            "type": "object",
            "properties": tool.parameters.get("properties", {}),
            "required": tool.parameters.get("required", []),
        }
        converted.append(entry)
    if cache is not None and converted:
        converted[-1]["cache_control"] = cache
    return converted


def build_params(
    model: Model,
    context: Context,
    options: StreamOptions | None,
    compat: AnthropicCompat,
    thinking: Thinking,
    level_map: dict[str, str | None],
    forms: MessageForms | None = None,
) -> dict[str, Any]:
    """The body of ``POST /v1/messages`` (pi-ai's ``buildParams``); ``forms`` keeps messages' forms."""
    cache = cache_control(options, compat)
    forms = forms or MessageForms()
    messages = transform_messages(context.messages, model, normalize_tool_call_id, forms.target)
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(messages, cache, compat.allow_empty_signature, forms.wire),
        "max_tokens": thinking.max_tokens,
        "stream": True,
    }
    if context.system_prompt:
        system: dict[str, Any] = {"type": "text", "text": sanitize_surrogates(context.system_prompt)}
        if cache is not None:
            system["cache_control"] = cache
        params["system"] = [system]
    if options and options.temperature is not None and not thinking.enabled and compat.supports_temperature:
        params["temperature"] = options.temperature
    if context.tools:
        tool_cache = cache if compat.supports_cache_control_on_tools else None
        params["tools"] = convert_tools(context.tools, compat.supports_eager_tool_input_streaming, tool_cache)
    if model.reasoning:
        if thinking.enabled and compat.force_adaptive_thinking:
            params["thinking"] = {"type": "adaptive", "display": "summarized"}
            if thinking.effort:
                params["output_config"] = {"effort": thinking.effort}
        elif thinking.enabled:
            params["thinking"] = {
                "type": "enabled",
                "budget_tokens": thinking.budget_tokens or 1024,
                "display": "summarized",
            }
        elif not always_thinks(level_map):
            params["thinking"] = {"type": "disabled"}
    user_id = (options.metadata or {}).get("user_id") if options else None
    if isinstance(user_id, str):
        params["metadata"] = {"user_id": user_id}
    if options and options.tool_choice:
        params["tool_choice"] = {"type": options.tool_choice}
    return params


def beta_features(model: Model, context: Context, compat: AnthropicCompat, thinking: Thinking) -> list[str]:
    features = []
    if context.tools and not compat.supports_eager_tool_input_streaming:
        features.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if model.reasoning and thinking.enabled and not compat.force_adaptive_thinking:
        features.append(INTERLEAVED_THINKING_BETA)
    return features


# --- the response ---------------------------------------------------------------------------


class AnthropicStreamError(StreamError):
    """An ``error`` event in the stream: ``{"type": "error", "error": {"type", "message"}}``."""

    def __init__(self, data: str) -> None:
        error_type, message = "error", data
        with contextlib.suppress(ValueError, AttributeError):
            error = parse_json_with_repair(data).get("error") or {}
            error_type = str(error.get("type") or error_type)
            message = str(error.get("message") or message)
        super().__init__(
            f"Anthropic stream error ({error_type}): {message}",
            error_type,
            retryable=error_type in _RETRYABLE_ERROR_TYPES,
        )
        self.error_type = error_type


def map_stop_reason(reason: str, details: dict[str, Any] | None) -> tuple[str, str | None]:
    """Anthropic's stop reason as ``(stopReason, errorMessage)``."""
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = (details or {}).get("explanation")
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stopped with: sensitive"
    raise ValueError(f"Unhandled stop reason: {reason}")


class _EventReader:
    """Applies the events of one response to a :class:`ResponseBuilder` (an :class:`EventReader`)."""

    def __init__(self, builder: ResponseBuilder) -> None:
        self.builder = builder
        self.open_blocks: dict[int, int] = {}
        """Anthropic's block index -> content index, while the block streams."""
        self.usage = Usage()
        self.cache_write_1h = 0
        self.saw_start = False
        self.saw_stop = False

    def feed(self, sse: ServerSentEvent) -> bool:
        if sse.event == "error":
            raise AnthropicStreamError(sse.data)
        if sse.event in _MESSAGE_EVENTS:
            try:
                event = parse_json_with_repair(sse.data)
            except ValueError as error:
                raise ValueError(
                    f"Could not parse Anthropic SSE event {sse.event}: {error}; data={sse.data}"
                ) from None
            self.apply(event)
        return False

    def end(self) -> None:
        if self.saw_start and not self.saw_stop:
            raise StreamEnded("Anthropic stream ended before message_stop")
        if self.builder.output.stop_reason == "pending":
            raise StreamEnded("Anthropic stream ended without a stop reason")

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self._message_start(event.get("message") or {})
        elif kind == "content_block_start":
            self._block_start(event["index"], event.get("content_block") or {})
        elif kind == "content_block_delta":
            self._block_delta(event["index"], event.get("delta") or {})
        elif kind == "content_block_stop":
            content_index = self.open_blocks.pop(event["index"], None)
            if content_index is not None:
                self.builder.close(content_index)
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self.saw_stop = True

    def _message_start(self, message: dict[str, Any]) -> None:
        self.saw_start = True
        output = self.builder.output
        if message.get("id"):
            output.response_id = message["id"]
        if message.get("model"):
            output.model = message["model"]
        usage = message.get("usage") or {}
        self.usage = Usage(
            input=usage.get("input_tokens") or 0,
            output=usage.get("output_tokens") or 0,
            cache_read=usage.get("cache_read_input_tokens") or 0,
            cache_write=usage.get("cache_creation_input_tokens") or 0,
        )
        self.cache_write_1h = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
        self.builder.set_usage(self.usage, self.cache_write_1h)

    def _block_start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        builder = self.builder
        if kind == "text":
            self.open_blocks[index] = builder.open_text(block.get("text") or "")
        elif kind == "thinking":
            self.open_blocks[index] = builder.open_thinking(
                block.get("thinking") or "", block.get("signature") or ""
            )
        elif kind == "redacted_thinking":
            self.open_blocks[index] = builder.open_thinking(
                "[Reasoning redacted]", block.get("data"), redacted=True
            )
        elif kind == "tool_use":
            self.open_blocks[index] = builder.open_tool_call(block.get("id") or "", block.get("name") or "")

    def _block_delta(self, index: int, delta: dict[str, Any]) -> None:
        content_index = self.open_blocks.get(index)
        if content_index is None:
            return
        kind = delta.get("type")
        block = self.builder.output.content[content_index]
        if kind == "text_delta" and isinstance(block, TextContent):
            self.builder.add_text(content_index, delta.get("text") or "")
        elif kind == "thinking_delta" and isinstance(block, ThinkingContent):
            self.builder.add_thinking(content_index, delta.get("thinking") or "")
        elif kind == "input_json_delta" and isinstance(block, ToolCall):
            self.builder.add_arguments(content_index, delta.get("partial_json") or "")
        elif kind == "signature_delta" and isinstance(block, ThinkingContent):
            block.thinking_signature = (block.thinking_signature or "") + (delta.get("signature") or "")

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        output = self.builder.output
        if delta.get("stop_reason"):
            output.stop_reason, error_message = map_stop_reason(
                delta["stop_reason"], delta.get("stop_details")
            )  # type: ignore[assignment]
            if error_message:
                output.error_message = error_message
        usage = event.get("usage") or {}
        for field, key in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            if usage.get(key) is not None:  # proxies may leave out what message_start said
                setattr(self.usage, field, usage[key])
        self.builder.set_usage(self.usage, self.cache_write_1h)


# --- the provider ---------------------------------------------------------------------------


def _has_auth_header(headers: dict[str, str]) -> bool:
    return any(
        name.lower() in ("x-api-key", "authorization") and value.strip() for name, value in headers.items()
    )


class AnthropicProvider:
    """A provider speaking ``anthropic-messages`` (a :class:`~agentls.ai.models.Provider`)."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        self.provider = spec.id
        self.models = list(spec.models)
        self._forms = MessageForms()
        self._bodies = BodyEncoder()

    def compat(self, model: Model) -> AnthropicCompat:
        return self.spec.compat_for(model).apply_to(AnthropicCompat())

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Stream one response (a ``StreamFn``): failures end the stream, it never raises."""
        try:
            api_key, headers = self.spec.credentials(model, options)
        except CredentialError as error:
            return error_stream(model, str(error))
        if not api_key and not _has_auth_header(headers):
            return error_stream(model, f"No API key for provider '{model.provider}': {self.spec.key_hint}")
        compat = self.compat(model)
        level_map = self.spec.thinking_level_map(model)

        def prepare() -> SsePost:
            thinking = plan_thinking(model, context, options, compat, level_map)
            params = build_params(model, context, options, compat, thinking, level_map, self._forms)
            betas = beta_features(model, context, compat, thinking)
            base_url = model.base_url or self.spec.base_url
            return SsePost(
                url=f"{base_url.rstrip('/')}/v1/messages",
                body=params,
                headers={
                    "content-type": "application/json",
                    "accept": "application/json",
                    "anthropic-version": API_VERSION,
                    **({"x-api-key": api_key} if api_key else {}),
                    **({"anthropic-beta": ",".join(betas)} if betas else {}),
                    **headers,
                },
                status_error=AnthropicStatusError,
                reader=_EventReader,
                stream_after_hook=True,
                encode=self._bodies.encode,
            )

        return stream_sse(self.spec, model, options, prepare, logger)


class AnthropicStatusError(StatusError):
    """An error status: ``429 rate_limit_error: <the API's message>`` when the body says so."""

    def __init__(self, status: int, headers: httpx.Headers, body: str) -> None:
        detail = f"{status}: {body.strip()[:_ERROR_BODY_LIMIT]}" if body.strip() else f"{status} status code"
        with contextlib.suppress(ValueError, AttributeError):  # not JSON, or not an object: the raw body
            error = parse_json_with_repair(body).get("error")
            if isinstance(error, dict):
                kind = error.get("type") or "error"
                text = error.get("message")
                detail = f"{status} {kind}: {text}" if text else f"{status} {kind}"
        super().__init__(status, headers, detail)
