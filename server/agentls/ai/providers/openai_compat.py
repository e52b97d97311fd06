"""OpenAI-compatible chat completions over ``httpx`` (pi-ai's ``api/openai-completions.js``).

One provider for every server that speaks ``POST /chat/completions`` with server-sent
events: OpenAI, OpenRouter, Ollama, llama.cpp's server, vLLM, LM Studio. Streamed
text, reasoning (``reasoning_content``, ``reasoning`` or ``reasoning_text``, whichever
the server sends; the field's name is kept as the thinking block's signature so the
reasoning goes back in the same field), tool calls whose arguments stream by index,
and the usage of the final chunk (``stream_options.include_usage``).

Servers differ; :class:`~agentls.ai.providers.catalog.Compat` settings say how (the
``max_tokens`` field, the ``developer`` role, ``tool_choice``, how reasoning is asked
for, ...). Their defaults are guessed from the provider id and base URL as pi-ai does.

As in pi-ai, every content block stays open until the stream ends: text that follows
a tool call is added to the first text block, and the ``*_end`` events come last, in
content order.

Not ported from pi-ai: OpenRouter's ``reasoning_details`` replay, grammar (custom)
tools, Anthropic-style cache markers for OpenRouter, session-affinity headers and
provider routing preferences.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentls.ai.event_stream import AssistantMessageEventStream
from agentls.ai.models import clamp_thinking_level, error_stream
from agentls.ai.providers.body_bytes import BodyEncoder
from agentls.ai.providers.budgets import always_thinks, clamp_max_tokens_to_context
from agentls.ai.providers.catalog import ProviderSpec
from agentls.ai.providers.json_parse import parse_json_with_repair
from agentls.ai.providers.sse import ServerSentEvent
from agentls.ai.providers.sse_request import SsePost, StatusError, StreamEnded, StreamError, stream_sse
from agentls.ai.providers.streaming import ResponseBuilder
from agentls.ai.providers.transform import sanitize_surrogates, transform_messages
from agentls.ai.providers.wire_forms import MessageForms, WirePrefix
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
from agentls.ai.wire import dumps_compact

if TYPE_CHECKING:
    import httpx  # the stack is imported with the first request (clients.http_client)

logger = logging.getLogger(__name__)

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_ERROR_BODY_LIMIT = 4000


@dataclass(frozen=True, kw_only=True)
class OpenAICompat:
    supports_store: bool
    supports_developer_role: bool
    supports_reasoning_effort: bool
    supports_usage_in_streaming: bool = True
    supports_finish_reason: bool = True
    supports_tool_choice: bool = True
    supports_strict_mode: bool = True
    max_tokens_field: str = "max_completion_tokens"
    requires_tool_result_name: bool = False
    requires_assistant_after_tool_result: bool = False
    requires_thinking_as_text: bool = False
    requires_reasoning_content_on_assistant_messages: bool = False
    thinking_format: str = "openai"


def detect_compat(provider: str, base_url: str, model_id: str) -> OpenAICompat:
    """The defaults of a server, guessed from its provider id and URL (pi-ai's ``detectCompat``)."""
    openrouter = provider == "openrouter" or "openrouter.ai" in base_url
    deepseek = provider == "deepseek" or "deepseek.com" in base_url.lower()
    return OpenAICompat(
        supports_store=not deepseek,
        supports_developer_role=(openrouter and model_id.startswith(("anthropic/", "openai/")))
        or (not deepseek and not openrouter),
        supports_reasoning_effort=True,
        max_tokens_field="max_tokens" if deepseek else "max_completion_tokens",
        requires_reasoning_content_on_assistant_messages=deepseek,
        thinking_format="deepseek" if deepseek else "openrouter" if openrouter else "openai",
    )


# --- the request body -----------------------------------------------------------------------


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash`` (two 32-bit multiplicative hashes in base 36), bit for bit."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        unit = units[i] | units[i + 1] << 8
        h1 = ((h1 ^ unit) * 2654435761) & 0xFFFFFFFF
        h2 = ((h2 ^ unit) * 1597334677) & 0xFFFFFFFF
    h1 = (((h1 ^ (h1 >> 16)) * 2246822507) & 0xFFFFFFFF) ^ (((h2 ^ (h2 >> 13)) * 3266489909) & 0xFFFFFFFF)
    h2 = (((h2 ^ (h2 >> 16)) * 2246822507) & 0xFFFFFFFF) ^ (((h1 ^ (h1 >> 13)) * 3266489909) & 0xFFFFFFFF)
    return _base36(h2) + _base36(h1)


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, digit = divmod(value, 36)
        out = digits[digit] + out
        if value == 0:
            return out


def _normalize_call_id(call_id: str, shorten: bool) -> str:
    if "|" in call_id:
        call, _, item = call_id.partition("|")
        call = re.sub(r"[^a-zA-Z0-9_-]", "_", call)
        item = re.sub(r"[^a-zA-Z0-9_-]", "_", item)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= 40:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{call[: max(1, 40 - len(digest) - 1)]}_{digest}"
    return call_id[:40] if shorten and len(call_id) > 40 else call_id


def _normalize_for_openai(call_id: str) -> str:
    return _normalize_call_id(call_id, shorten=True)


def _normalize_for_others(call_id: str) -> str:
    return _normalize_call_id(call_id, shorten=False)


def tool_call_id_normalizer(model: Model) -> Callable[[str], str]:
    """Tool call ids for chat completions: OpenAI Responses ids (``call|item``) shortened to 40 characters
    (and any id, for OpenAI itself). One function per kind, so that requests can tell they convert alike."""
    return _normalize_for_openai if model.provider == "openai" else _normalize_for_others


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def _user(message: UserMessage) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    parts = [
        {"type": "text", "text": sanitize_surrogates(b.text)}
        if isinstance(b, TextContent)
        else _image_part(b)
        for b in message.content
    ]
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: AssistantMessage, model: Model, compat: OpenAICompat) -> dict[str, Any] | None:
    converted: dict[str, Any] = {
        "role": "assistant",
        "content": "" if compat.requires_assistant_after_tool_result else None,
    }
    texts = [
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent) and b.text.strip()
    ]
    text = "".join(texts)
    thinking = [b for b in message.content if isinstance(b, ThinkingContent) and b.thinking.strip()]
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if thinking and compat.requires_thinking_as_text:
        reasoning = "\n\n".join(sanitize_surrogates(b.thinking) for b in thinking)
        converted["content"] = [
            {"type": "text", "text": reasoning},
            *({"type": "text", "text": t} for t in texts),
        ]
    elif text:
        # A plain string, as the API documents: some models mirror a list of text parts in their output.
        converted["content"] = text
    if (
        thinking
        and not compat.requires_thinking_as_text
        and thinking[0].thinking_signature in REASONING_FIELDS
    ):
        converted[thinking[0].thinking_signature] = "\n".join(b.thinking for b in thinking)  # type: ignore[index]
    if calls:
        converted["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": dumps_compact(c.arguments)},
            }
            for c in calls
        ]
    if compat.requires_reasoning_content_on_assistant_messages and model.reasoning:
        converted.setdefault("reasoning_content", "")
    if not converted["content"] and not calls:
        return None  # e.g. an aborted response that got no content: servers refuse empty messages
    return converted


def _tool_result(
    result: ToolResultMessage, model: Model, compat: OpenAICompat
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A tool message (text only) and the images of the result, which travel in a user message."""
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
    has_images = any(isinstance(b, ImageContent) for b in result.content)
    converted = {
        "role": "tool",
        "content": sanitize_surrogates(
            text or ("(see attached image)" if has_images else "(no tool output)")
        ),
        "tool_call_id": result.tool_call_id,
    }
    if compat.requires_tool_result_name and result.tool_name:
        converted["name"] = result.tool_name
    images = (
        [_image_part(b) for b in result.content if isinstance(b, ImageContent)]
        if has_images and "image" in model.input
        else []
    )
    return converted, images


def convert_messages(
    model: Model, context: Context, compat: OpenAICompat, message_forms: MessageForms | None = None
) -> list[dict[str, Any]]:
    """The chat completion ``messages`` (pi-ai's ``convertMessages``); ``forms`` keeps messages' forms."""
    message_forms = message_forms or MessageForms()
    messages = transform_messages(
        context.messages, model, tool_call_id_normalizer(model), message_forms.target
    )
    forms = message_forms.wire
    settings = (compat, model.reasoning, "image" in model.input)
    forms.start(settings)

    def convert(message: Message) -> Any:
        if isinstance(message, ToolResultMessage):
            return _tool_result(message, model, compat)
        if isinstance(message, UserMessage):
            return _user(message)
        return _assistant(message, model, compat)  # type: ignore[arg-type]

    ids = list(map(id, messages))
    last = forms.resume
    params: list[dict[str, Any]]
    last_role: str | None
    if isinstance(last, WirePrefix) and last.matches(settings, ids):
        # the last request's wire messages before its last one, and what it knew there
        index, params, last_role = len(last.ids), list(last.forms), last.state
    else:
        index, params, last_role = 0, [], None
    bridge = {"role": "assistant", "content": "I have processed the tool results."}
    unit: tuple[int, int, str | None] | None = None
    """Where the last message (or run of tool results) began: its index, the output's length, the role."""
    while index < len(messages):
        message = messages[index]
        unit = (index, len(params), last_role)
        if (
            compat.requires_assistant_after_tool_result
            and last_role == "toolResult"
            and message.role == "user"
        ):
            params.append(dict(bridge))
        if isinstance(message, ToolResultMessage):
            images: list[dict[str, Any]] = []
            while index < len(messages) and isinstance(messages[index], ToolResultMessage):
                converted, result_images = forms.get(messages[index], convert)
                params.append(converted)
                images.extend(result_images)
                index += 1
            if images:  # tool messages carry text only: their images follow as a user message
                if compat.requires_assistant_after_tool_result:
                    params.append(dict(bridge))
                params.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        converted_message = forms.get(message, convert)
        if converted_message is not None:
            params.append(converted_message)
        last_role = message.role
        index += 1
    forms.done()
    if unit is not None:
        start, length, role = unit
        forms.resume = WirePrefix(settings, messages[:start], ids[:start], params[:length], role)
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        params.insert(0, {"role": role, "content": sanitize_surrogates(context.system_prompt)})
    return params


def convert_tools(tools: list[Tool], compat: OpenAICompat) -> list[dict[str, Any]]:
    converted = []
    for tool in tools:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
        if compat.supports_strict_mode:
            function["strict"] = False
        converted.append({"type": "function", "function": function})
    return converted


def _has_tool_history(messages: list[Message]) -> bool:
    return any(
        isinstance(m, ToolResultMessage)
        or (isinstance(m, AssistantMessage) and any(isinstance(b, ToolCall) for b in m.content))
        for m in messages
    )


def _apply_reasoning(
    params: dict[str, Any],
    model: Model,
    compat: OpenAICompat,
    effort: str | None,
    level_map: dict[str, str | None],
) -> None:
    """Ask for reasoning (or none) the way the server understands (``thinkingFormat``)."""
    if not model.reasoning:
        return
    mapped = level_map.get(effort) if effort else None
    wire_effort = mapped if mapped is not None else effort
    form = compat.thinking_format
    if form == "openrouter":
        if effort:
            params["reasoning"] = {"effort": wire_effort}
        elif not always_thinks(level_map):
            params["reasoning"] = {"effort": level_map.get("off") or "none"}
    elif form == "deepseek":
        if effort:
            params["thinking"] = {"type": "enabled"}
        elif not always_thinks(level_map):
            params["thinking"] = {"type": "disabled"}
        if effort and compat.supports_reasoning_effort:
            params["reasoning_effort"] = wire_effort
    elif form == "qwen":
        params["enable_thinking"] = bool(effort)
        if effort and compat.supports_reasoning_effort and isinstance(wire_effort, str):
            params["reasoning_effort"] = wire_effort
    elif form == "qwen-chat-template":
        params["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif compat.supports_reasoning_effort:
        if effort:
            params["reasoning_effort"] = wire_effort
        elif isinstance(level_map.get("off"), str):
            params["reasoning_effort"] = level_map["off"]


def build_params(
    model: Model,
    context: Context,
    options: StreamOptions | None,
    compat: OpenAICompat,
    level_map: dict[str, str | None],
    base_url: str,
    forms: MessageForms | None = None,
) -> dict[str, Any]:
    """The body of ``POST /chat/completions`` (pi-ai's ``streamSimple`` and ``buildParams``)."""
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(model, context, compat, forms),
        "stream": True,
    }
    retention = (options.cache_retention if options else None) or "short"
    session_id = options.session_id if options else None
    if "api.openai.com" in base_url and retention != "none" and session_id:
        params["prompt_cache_key"] = session_id[:64]
    if compat.supports_usage_in_streaming:
        params["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        params["store"] = False
    requested = options.max_tokens if options and options.max_tokens is not None else model.max_tokens
    max_tokens = clamp_max_tokens_to_context(model, context, requested)
    if max_tokens:
        params[compat.max_tokens_field] = max_tokens
    if options and options.temperature is not None:
        params["temperature"] = options.temperature
    if context.tools:
        params["tools"] = convert_tools(context.tools, compat)
    elif _has_tool_history(context.messages):
        params["tools"] = []  # proxies to Anthropic refuse tool calls in the history without tools
    if options and options.tool_choice and compat.supports_tool_choice:
        params["tool_choice"] = options.tool_choice
    level = options.reasoning if options else None
    effort = clamp_thinking_level(model, level) if level else None
    _apply_reasoning(params, model, compat, None if effort == "off" else effort, level_map)
    return params


# --- the response ---------------------------------------------------------------------------


class OpenAIStatusError(StatusError):
    """An error status; the message carries the server's own error message."""

    def __init__(self, status: int, headers: httpx.Headers, body: str) -> None:
        detail = body.strip()[:_ERROR_BODY_LIMIT]
        with contextlib.suppress(ValueError, AttributeError):  # not JSON, or not an object: the raw body
            error = parse_json_with_repair(body).get("error")
            if isinstance(error, dict) and error.get("message"):  # OpenAI's {"error": {"message": ...}}
                detail = str(error["message"])
            elif isinstance(error, str) and error:  # Ollama's {"error": "..."}
                detail = error
        super().__init__(
            status, headers, f"{status}: {detail}" if detail else f"{status} status code (no body)"
        )


class OpenAIStreamError(StreamError):
    """An error sent as a chunk of the stream (OpenRouter does that): ``{"error": {"message", "code"}}``."""

    def __init__(self, error: Any) -> None:
        message = error.get("message") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        metadata = error.get("metadata") if isinstance(error, dict) else None
        raw = metadata.get("raw") if isinstance(metadata, dict) else None
        text = str(message or error)
        if raw and str(raw) not in text:
            text += f"\n{raw}"
        super().__init__(
            text, "stream error", retryable=isinstance(code, int) and (code == 429 or code >= 500)
        )


def map_stop_reason(reason: str | None) -> tuple[str, str | None]:
    if reason in (None, "stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def parse_usage(raw: dict[str, Any]) -> Usage:
    """Usage of a chunk; ``prompt_tokens`` includes the cached tokens, which are counted apart."""
    details = raw.get("prompt_tokens_details") or {}
    cache_read = details.get("cached_tokens")
    if cache_read is None:
        cache_read = raw.get("prompt_cache_hit_tokens")
    if cache_read is None:
        cache_read = raw.get("cached_tokens")
    cache_read = cache_read or 0
    cache_write = details.get("cache_write_tokens") or 0
    return Usage(
        input=max(0, (raw.get("prompt_tokens") or 0) - cache_read - cache_write),
        output=raw.get("completion_tokens") or 0,
        cache_read=cache_read,
        cache_write=cache_write,
    )


class _ChunkReader:
    """Applies the chunks of one response to a :class:`ResponseBuilder` (an :class:`EventReader`)."""

    def __init__(self, builder: ResponseBuilder, compat: OpenAICompat) -> None:
        self.builder = builder
        self.compat = compat
        self.text: int | None = None
        self.thinking: int | None = None
        self.calls_by_index: dict[int, int] = {}
        self.calls_by_id: dict[str, int] = {}
        self.has_finish_reason = False

    def feed(self, sse: ServerSentEvent) -> bool:
        if sse.data.startswith("[DONE]"):
            return True
        if not sse.data:
            return False
        try:
            chunk = parse_json_with_repair(sse.data)
        except ValueError as error:
            raise ValueError(f"Could not parse SSE data: {error}; data={sse.data}") from None
        if sse.event == "error" or (isinstance(chunk, dict) and chunk.get("error")):
            raise OpenAIStreamError(chunk.get("error", chunk) if isinstance(chunk, dict) else chunk)
        if isinstance(chunk, dict):
            self.apply(chunk)
        return False

    def apply(self, chunk: dict[str, Any]) -> None:
        output = self.builder.output
        if not output.response_id and chunk.get("id"):
            output.response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.builder.set_usage(parse_usage(usage))
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            return
        if not usage and isinstance(choice.get("usage"), dict):  # Moonshot puts it here
            self.builder.set_usage(parse_usage(choice["usage"]))
        if choice.get("finish_reason"):
            output.stop_reason, error_message = map_stop_reason(choice["finish_reason"])  # type: ignore[assignment]
            if error_message:
                output.error_message = error_message
            self.has_finish_reason = True
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(delta)

    def _delta(self, delta: dict[str, Any]) -> None:
        builder = self.builder
        content = delta.get("content")
        if isinstance(content, str) and content:
            if self.text is None:
                self.text = builder.open_text()
            builder.add_text(self.text, content)
            if len(delta) == 1 or (len(delta) == 2 and "role" in delta):  # text alone: most chunks
                return
        for field in REASONING_FIELDS:  # the first one only: some servers send the same text in two fields
            reasoning = delta.get(field)
            if isinstance(reasoning, str) and reasoning:
                if self.thinking is None:
                    self.thinking = builder.open_thinking(signature=field)
                builder.add_thinking(self.thinking, reasoning)
                break
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                self._tool_call(call)

    def _tool_call(self, call: dict[str, Any]) -> None:
        function = call.get("function") or {}
        stream_index = call.get("index") if isinstance(call.get("index"), int) else None
        call_id = call.get("id") or ""
        index = self.calls_by_index.get(stream_index) if stream_index is not None else None
        if index is None and call_id:
            index = self.calls_by_id.get(call_id)
        if index is None:
            index = self.builder.open_tool_call(call_id, function.get("name") or "")
        if stream_index is not None:
            self.calls_by_index.setdefault(stream_index, index)
        block = self.builder.output.content[index]
        assert isinstance(block, ToolCall)
        if call_id:
            self.calls_by_id[call_id] = index
            if not block.id:
                block.id = call_id
        if not block.name and function.get("name"):
            block.name = function["name"]
        self.builder.add_arguments(index, function.get("arguments") or "")

    def end(self) -> None:
        """The stream ended: close every block, then settle the stop reason."""
        compat = self.compat
        output = self.builder.output
        for index in range(len(output.content)):
            self.builder.close(index)
        if not self.has_finish_reason and not compat.supports_finish_reason:
            output.stop_reason = "toolUse" if any(isinstance(b, ToolCall) for b in output.content) else "stop"
        if output.stop_reason != "error" and (
            (compat.supports_finish_reason and not self.has_finish_reason) or output.stop_reason == "pending"
        ):
            raise StreamEnded("Stream ended without finish_reason")


# --- the provider ---------------------------------------------------------------------------


class OpenAICompatProvider:
    """A provider speaking ``openai-completions`` (a :class:`~agentls.ai.models.Provider`)."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec
        self.provider = spec.id
        self.models = list(spec.models)
        self._forms = MessageForms()
        self._bodies = BodyEncoder()

    def compat(self, model: Model) -> OpenAICompat:
        base_url = model.base_url or self.spec.base_url
        return self.spec.compat_for(model).apply_to(detect_compat(model.provider, base_url, model.id))

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Stream one response (a ``StreamFn``): failures end the stream, it never raises."""
        base_url = model.base_url or self.spec.base_url
        compat = self.compat(model)
        try:
            api_key, extra_headers = self.spec.credentials(model, options)
        except CredentialError as error:
            return error_stream(model, str(error))
        headers = {"Content-Type": "application/json"}
        if api_key:  # local servers need none
            headers["Authorization"] = f"Bearer {api_key}"
        headers.update(extra_headers)
        level_map = self.spec.thinking_level_map(model)

        def prepare() -> SsePost:
            params = build_params(model, context, options, compat, level_map, base_url, self._forms)
            return SsePost(
                url=f"{base_url.rstrip('/')}/chat/completions",
                body=params,
                headers=headers,
                status_error=OpenAIStatusError,
                reader=lambda builder: _ChunkReader(builder, compat),
                encode=self._bodies.encode,
            )

        return stream_sse(self.spec, model, options, prepare, logger)
