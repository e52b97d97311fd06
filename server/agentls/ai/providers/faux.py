"""The scripted ``faux`` provider (a port of pi-ai 0.85.0's ``providers/faux.js``).

It answers each model request with the next scripted response and streams it the
way a real provider would: ``start`` with an empty partial message, each content
block as ``*_start`` / one ``*_delta`` per chunk / ``*_end``, then ``done`` or
``error``. It makes the kernel, the server, the command line and the editor clients
runnable offline and deterministic.

Scripts are Python objects (:class:`AssistantMessage`, :class:`ScriptedResponse`,
callables) or the JSON of the conformance scenarios' ``model`` section::

    {"responses": [{"content": "Hello", "stopReason": "stop"},
                   {"content": [{"type": "toolCall", "id": "c1", "name": "read",
                                 "arguments": {"path": "a.txt"}}], "stopReason": "toolUse"},
                   {"throw": "the stream function itself fails"}],
     "tokenSize": {"min": 3, "max": 5}, "tokensPerSecond": 100}
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from agentls.ai.abort import AbortSignal
from agentls.ai.event_stream import AssistantMessageEventStream
from agentls.ai.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agentls.ai.local_files import read_json_file
from agentls.ai.models import REQUEST_ABORTED, error_message
from agentls.ai.providers.growing_text import grow
from agentls.ai.types import (
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)
from agentls.ai.wire import dumps_compact

FAUX_API = "faux"
FAUX_PROVIDER = "faux"
DEFAULT_MODEL_ID = "faux-1"
OUT_OF_RESPONSES = "No more faux responses queued"


class FauxScriptError(ValueError):
    """A faux script (file or object) is malformed."""


@dataclass(frozen=True)
class ThrowMarker:
    """A scripted step that makes the stream function itself raise, before any stream exists.

    It exists to test how callers survive a stream function that breaks the
    "failures are encoded in the stream" contract.
    """

    message: str


ResponseFactory: TypeAlias = Callable[
    [Context, StreamOptions | None, "FauxState", Model], AssistantMessage | Awaitable[AssistantMessage]
]
FauxStep: TypeAlias = AssistantMessage | ThrowMarker | ResponseFactory


@dataclass
class FauxState:
    call_count: int = 0


@dataclass(frozen=True)
class TokenSize:
    """Chunk size range in tokens (one token is four characters)."""

    min: int = 3
    max: int = 5


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _split_by_token_size(text: str, size: TokenSize) -> list[str]:
    chunks: list[str] = []
    index = 0
    while index < len(text):
        token_size = size.min + math.floor(random.random() * (size.max - size.min + 1))
        char_size = max(1, token_size * 4)
        chunks.append(text[index : index + char_size])
        index += char_size
    return chunks or [""]


# --- scripts from JSON ---------------------------------------------------------------


def step_from_json(entry: Any) -> FauxStep:
    """One scripted response in the conformance scenario format."""
    if not isinstance(entry, dict):
        raise FauxScriptError(f"a faux response must be an object, got {entry!r}")
    if "throw" in entry:
        return ThrowMarker(str(entry["throw"]))
    content = entry.get("content", [])
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise FauxScriptError(f"'content' must be a string or a list of blocks, got {content!r}")
    data: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": FAUX_API,
        "provider": FAUX_PROVIDER,
        "stopReason": entry.get("stopReason", "stop"),
        "timestamp": 0,
    }
    if "errorMessage" in entry:
        data["errorMessage"] = entry["errorMessage"]
    try:
        return AssistantMessage.model_validate(data)
    except ValueError as error:
        raise FauxScriptError(f"invalid faux response {entry!r}: {error}") from error


@dataclass
class FauxScript:
    """The ``model`` section of a conformance scenario: responses and streaming pace."""

    responses: list[FauxStep] = field(default_factory=list)
    token_size: TokenSize | None = None
    tokens_per_second: float | None = None

    @classmethod
    def from_json(cls, data: Any) -> FauxScript:
        if isinstance(data, list):
            data = {"responses": data}
        if not isinstance(data, dict):
            raise FauxScriptError("a faux script must be an object with 'responses' or a list of responses")
        responses = data.get("responses", [])
        if not isinstance(responses, list):
            raise FauxScriptError("'responses' must be a list")
        token_size = None
        if isinstance(data.get("tokenSize"), dict):
            spec = data["tokenSize"]
            token_size = TokenSize(int(spec.get("min", 3)), int(spec.get("max", 5)))
        rate = data.get("tokensPerSecond")
        return cls(
            responses=[step_from_json(r) for r in responses],
            token_size=token_size,
            tokens_per_second=float(rate) if rate else None,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> FauxScript:
        try:
            # NaN allowed: scripts may test what the server makes of non-finite numbers
            data = read_json_file(Path(path), allow_nan=True)
        except OSError as error:
            raise FauxScriptError(f"cannot read faux script {path}: {error.strerror}") from error
        except ValueError as error:
            raise FauxScriptError(f"faux script {path} is not valid JSON: {error}") from error
        return cls.from_json(data)


# --- the provider ----------------------------------------------------------------------


def _aborted(partial: AssistantMessage) -> AssistantMessage:
    return partial.model_copy(
        update={"stop_reason": "aborted", "error_message": REQUEST_ABORTED, "timestamp": now_ms()}
    )


class FauxProvider:
    """A provider that streams scripted responses.

    ``models`` are model ids (all with reasoning support) or :class:`Model` objects.
    """

    def __init__(
        self,
        responses: list[FauxStep] | None = None,
        *,
        models: list[str | Model] | None = None,
        token_size: TokenSize | None = None,
        tokens_per_second: float | None = None,
        api: str = FAUX_API,
        provider: str = FAUX_PROVIDER,
    ) -> None:
        self.api = api
        self.provider = provider
        size = token_size or TokenSize()
        low = max(1, min(size.min, size.max))
        self.token_size = TokenSize(low, max(low, size.max))
        self.tokens_per_second = tokens_per_second
        self.state = FauxState()
        self._pending: list[FauxStep] = list(responses or [])
        self.models = [self._model(m) for m in (models or [DEFAULT_MODEL_ID])]
        self._prompt_cache: dict[str, str] = {}

    @classmethod
    def from_script(cls, script: FauxScript, *, models: list[str | Model] | None = None) -> FauxProvider:
        return cls(
            script.responses,
            models=models,
            token_size=script.token_size,
            tokens_per_second=script.tokens_per_second,
        )

    def _model(self, spec: str | Model) -> Model:
        if isinstance(spec, Model):
            return spec
        return Model(
            id=spec,
            name=spec,
            api=self.api,
            provider=self.provider,
            base_url="http://localhost:0",
            reasoning=True,
            input=["text", "image"],
            cost=ModelCost(),
            context_window=128000,
            max_tokens=16384,
        )

    def get_model(self, model_id: str | None = None) -> Model | None:
        if model_id is None:
            return self.models[0]
        return next((m for m in self.models if m.id == model_id), None)

    def set_responses(self, responses: list[FauxStep]) -> None:
        self._pending = list(responses)

    def append_responses(self, responses: list[FauxStep]) -> None:
        self._pending.extend(responses)

    @property
    def pending_response_count(self) -> int:
        return len(self._pending)

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Answer one request with the next scripted step (a :class:`StreamFn`)."""
        step = self._pending.pop(0) if self._pending else None
        self.state.call_count += 1
        if isinstance(step, ThrowMarker):
            raise RuntimeError(step.message)
        outer = AssistantMessageEventStream()
        asyncio.get_running_loop().create_task(self._produce(outer, step, model, context, options))
        return outer

    stream_simple = stream

    async def _produce(
        self,
        outer: AssistantMessageEventStream,
        step: FauxStep | None,
        model: Model,
        context: Context,
        options: StreamOptions | None,
    ) -> None:
        try:
            if options is not None and options.on_response is not None:
                maybe = options.on_response({"status": 200, "headers": {}}, model)
                if maybe is not None:
                    await maybe
            if step is None:
                message = self._with_usage(error_message(model, OUT_OF_RESPONSES), context, options)
                outer.push(ErrorEvent(reason="error", error=message))
                outer.end(message)
                return
            resolved = step(context, options, self.state, model) if callable(step) else step
            if asyncio.iscoroutine(resolved) or isinstance(resolved, asyncio.Future):
                resolved = await resolved
            assert isinstance(resolved, AssistantMessage)
            message = resolved.model_copy(
                deep=True, update={"api": self.api, "provider": self.provider, "model": model.id}
            )
            message = self._with_usage(message, context, options)
            await self._stream_with_deltas(outer, message, options.signal if options else None)
        except Exception as error:
            message = error_message(model, str(error))
            outer.push(ErrorEvent(reason="error", error=message))
            outer.end(message)

    async def _wait_chunk(self, chunk: str) -> None:
        if not self.tokens_per_second or self.tokens_per_second <= 0:
            await asyncio.sleep(0)
            return
        await asyncio.sleep(_estimate_tokens(chunk) / self.tokens_per_second)

    async def _stream_with_deltas(
        self, stream: AssistantMessageEventStream, message: AssistantMessage, signal: AbortSignal | None
    ) -> None:
        partial = message.model_copy(update={"content": [], "stop_reason": "pending"})

        def abort_stream() -> None:
            aborted = _aborted(partial)
            stream.push(ErrorEvent(reason="aborted", error=aborted))
            stream.end(aborted)

        if signal is not None and signal.aborted:
            abort_stream()
            return
        stream.push(StartEvent(partial=partial.model_copy()))
        for index, block in enumerate(message.content):
            if signal is not None and signal.aborted:
                abort_stream()
                return
            if isinstance(block, ThinkingContent | TextContent):
                is_text = isinstance(block, TextContent)
                whole = block.text if is_text else block.thinking  # type: ignore[union-attr]
                growing: TextContent | ThinkingContent = (
                    TextContent(text="") if is_text else ThinkingContent(thinking="")
                )
                partial.content = [*partial.content, growing]
                start_cls, delta_cls, end_cls = (
                    (TextStartEvent, TextDeltaEvent, TextEndEvent)
                    if is_text
                    else (ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent)
                )
                stream.push(start_cls(content_index=index, partial=partial.model_copy()))
                for chunk in _split_by_token_size(whole, self.token_size):
                    await self._wait_chunk(chunk)
                    if signal is not None and signal.aborted:
                        abort_stream()
                        return
                    grow(growing.__dict__, "text" if is_text else "thinking", chunk)
                    stream.push(delta_cls(content_index=index, delta=chunk, partial=partial.model_copy()))
                stream.push(end_cls(content_index=index, content=whole, partial=partial.model_copy()))
                continue
            assert isinstance(block, ToolCall)
            growing_call = ToolCall(id=block.id, name=block.name, arguments={})
            partial.content = [*partial.content, growing_call]
            stream.push(ToolCallStartEvent(content_index=index, partial=partial.model_copy()))
            for chunk in _split_by_token_size(dumps_compact(block.arguments), self.token_size):
                await self._wait_chunk(chunk)
                if signal is not None and signal.aborted:
                    abort_stream()
                    return
                stream.push(
                    ToolCallDeltaEvent(content_index=index, delta=chunk, partial=partial.model_copy())
                )
            growing_call.arguments = block.arguments
            stream.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=partial.model_copy()))
        if message.stop_reason == "pending":
            raise FauxScriptError("Faux response ended without a stop reason")
        if message.stop_reason in ("error", "aborted"):
            stream.push(ErrorEvent(reason=message.stop_reason, error=message))  # type: ignore[arg-type]
            stream.end(message)
            return
        stream.push(DoneEvent(reason=message.stop_reason, message=message))  # type: ignore[arg-type]
        stream.end(message)

    def _with_usage(
        self, message: AssistantMessage, context: Context, options: StreamOptions | None
    ) -> AssistantMessage:
        """Estimate usage from the text sizes, with prompt caching per session id, as pi's faux does."""
        prompt_text = _serialize_context(context)
        prompt_tokens = _estimate_tokens(prompt_text)
        output_tokens = _estimate_tokens(_assistant_text(message))
        input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
        session_id = options.session_id if options else None
        if session_id and (options is None or options.cache_retention != "none"):
            previous = self._prompt_cache.get(session_id)
            if previous is not None:
                shared = _common_prefix_length(previous, prompt_text)
                cache_read = _estimate_tokens(previous[:shared])
                cache_write = _estimate_tokens(prompt_text[shared:])
                input_tokens = max(0, prompt_tokens - cache_read)
            else:
                cache_write = prompt_tokens
            self._prompt_cache[session_id] = prompt_text
        message.usage = Usage(
            input=input_tokens,
            output=output_tokens,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input_tokens + output_tokens + cache_read + cache_write,
        )
        return message


def _common_prefix_length(a: str, b: str) -> int:
    length = min(len(a), len(b))
    index = 0
    while index < length and a[index] == b[index]:
        index += 1
    return index


def _assistant_text(message: AssistantMessage) -> str:
    parts = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            parts.append(block.thinking)
        else:
            parts.append(f"{block.name}:{dumps_compact(block.arguments)}")
    return "\n".join(parts)


def _serialize_context(context: Context) -> str:
    parts = []
    if context.system_prompt:
        parts.append(f"system:{context.system_prompt}")
    for message in context.messages:
        if isinstance(message, AssistantMessage):
            text = _assistant_text(message)
        else:
            content = message.content
            blocks = [content] if isinstance(content, str) else content
            texts = [
                b if isinstance(b, str) else getattr(b, "text", f"[image:{getattr(b, 'mime_type', '')}]")
                for b in blocks
            ]
            if message.role == "toolResult":
                texts = [message.tool_name, *texts]  # type: ignore[union-attr]
            text = "\n".join(texts)
        parts.append(f"{message.role}:{text}")
    if context.tools:
        parts.append(f"tools:{dumps_compact([t.to_wire() for t in context.tools])}")
    return "\n\n".join(parts)
