"""How an HTTP provider turns one request into an :class:`AssistantMessageEventStream`.

:class:`ResponseBuilder` holds the assistant message being streamed and pushes the
events of pi-ai's providers as content arrives: ``start``, then per content block
``*_start`` / ``*_delta`` / ``*_end``, then ``done`` or ``error``. Every event carries
the message being built as its ``partial`` (one object, growing, as in pi-ai). A
tool call's arguments arrive as JSON text: each ``toolcall_delta`` carries a piece,
the partial arguments are re-parsed after each one, and the complete text is parsed
when the block ends.

With ``coalesce_deltas`` (a stream option; agentls's sessions set it), deltas of one
block that arrive together, in one read of the response, are pushed as one event whose
``delta`` is their text joined: a model streaming faster than a client renders costs an
event per read instead of one per token, and a partial tool call is parsed once per
read. Deltas are held only until the reading task waits for the network again.

``start`` is pushed with the first content block (or at the end, for a response
without any), not when the response headers arrive as in pi-ai: until then nothing
was streamed, so a failed attempt can be retried without the consumer seeing two
starts or duplicated text.

:func:`stream_response` runs a provider's request function under the retry loop and
the abort signal and always ends the stream: with ``done``, or with ``error`` and an
assistant message whose ``stopReason`` is ``"error"`` or ``"aborted"``. It never raises.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

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
from agentls.ai.models import REQUEST_ABORTED
from agentls.ai.providers.growing_text import grow
from agentls.ai.providers.json_parse import parse_streaming_json
from agentls.ai.providers.retry import Aborted, Failure, RetryPolicy, with_retries
from agentls.ai.secrets import redact
from agentls.ai.types import (
    AssistantMessage,
    Model,
    ModelCost,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UsageCost,
)

_DeltaEvent = TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent


def calculate_cost(cost: ModelCost, usage: Usage, cache_write_1h: int = 0) -> None:
    """Set ``usage.cost`` in dollars from per-million-token prices (1-hour cache writes cost 2x input)."""
    short_write = usage.cache_write - cache_write_1h
    usage.cost = UsageCost(
        input=cost.input / 1_000_000 * usage.input,
        output=cost.output / 1_000_000 * usage.output,
        cache_read=cost.cache_read / 1_000_000 * usage.cache_read,
        cache_write=(cost.cache_write * short_write + cost.input * 2 * cache_write_1h) / 1_000_000,
    )
    usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write


class ResponseBuilder:
    """The assistant message of one response, and the events that announce its growth."""

    def __init__(self, model: Model, stream: AssistantMessageEventStream, coalesce: bool = False) -> None:
        self.model = model
        self.stream = stream
        self.output = self._empty()
        self.started = False
        self._arguments_json: dict[int, str] = {}
        self._coalesce = coalesce
        self._pending: tuple[type[_DeltaEvent], int, list[str]] | None = None
        """A delta event not pushed yet: its kind, content index and pieces."""

    def _empty(self) -> AssistantMessage:
        return AssistantMessage(
            api=self.model.api, provider=self.model.provider, model=self.model.id, stop_reason="pending"
        )

    def restart(self) -> None:
        """Start from an empty message, forgetting what an attempt that streamed nothing had set."""
        assert not self.started, "an attempt that streamed content cannot be retried"
        self._pending = None
        self.output = self._empty()
        self._arguments_json.clear()

    def _start(self) -> None:
        self._flush()
        if not self.started:
            self.started = True
            self.stream.push(StartEvent(partial=self.output))

    # --- content blocks -------------------------------------------------------------------

    def open_text(self, text: str = "") -> int:
        self._start()
        self.output.content.append(TextContent(text=text))
        index = len(self.output.content) - 1
        self.stream.push(TextStartEvent(content_index=index, partial=self.output))
        return index

    def open_thinking(self, thinking: str = "", signature: str | None = "", redacted: bool = False) -> int:
        self._start()
        block = ThinkingContent(thinking=thinking, thinking_signature=signature)
        if redacted:  # set only when true: ``redacted`` is absent from ordinary thinking blocks
            block.redacted = True
        self.output.content.append(block)
        index = len(self.output.content) - 1
        self.stream.push(ThinkingStartEvent(content_index=index, partial=self.output))
        return index

    def open_tool_call(self, call_id: str, name: str) -> int:
        self._start()
        self.output.content.append(ToolCall(id=call_id, name=name, arguments={}))
        index = len(self.output.content) - 1
        self._arguments_json[index] = ""
        self.stream.push(ToolCallStartEvent(content_index=index, partial=self.output))
        return index

    def add_text(self, index: int, delta: str) -> None:
        block = self.output.content[index]
        assert isinstance(block, TextContent)
        grow(block.__dict__, "text", delta)
        self._delta(TextDeltaEvent, index, delta)

    def add_thinking(self, index: int, delta: str) -> None:
        block = self.output.content[index]
        assert isinstance(block, ThinkingContent)
        grow(block.__dict__, "thinking", delta)
        self._delta(ThinkingDeltaEvent, index, delta)

    def add_arguments(self, index: int, delta: str) -> None:
        """A piece of a tool call's arguments (JSON text); the partial arguments are parsed so far."""
        assert isinstance(self.output.content[index], ToolCall)
        grow(self._arguments_json, index, delta)
        self._delta(ToolCallDeltaEvent, index, delta)

    def _delta(self, kind: type[_DeltaEvent], index: int, delta: str) -> None:
        pending = self._pending
        if pending is not None and pending[0] is kind and pending[1] == index:
            pending[2].append(delta)
            return
        self._flush()
        if self._coalesce:
            self._pending = (kind, index, [delta])
            asyncio.get_running_loop().call_soon(self._flush)
        else:
            self._push_delta(kind, index, delta)

    def _flush(self) -> None:
        """Push the delta held back, if any (before any other event, and once the reader waits)."""
        pending = self._pending
        if pending is not None:
            self._pending = None
            kind, index, pieces = pending
            self._push_delta(kind, index, pieces[0] if len(pieces) == 1 else "".join(pieces))

    def _push_delta(self, kind: type[_DeltaEvent], index: int, delta: str) -> None:
        if kind is ToolCallDeltaEvent:
            block = self.output.content[index]
            assert isinstance(block, ToolCall)
            block.arguments = parse_streaming_json(self._arguments_json[index])
        self.stream.push(kind(content_index=index, delta=delta, partial=self.output))

    def close(self, index: int) -> None:
        """The block is complete: ``*_end`` (a tool call's arguments parsed from the whole JSON text)."""
        self._flush()
        block = self.output.content[index]
        if isinstance(block, TextContent):
            self.stream.push(TextEndEvent(content_index=index, content=block.text, partial=self.output))
        elif isinstance(block, ThinkingContent):
            self.stream.push(
                ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.output)
            )
        else:
            block.arguments = parse_streaming_json(self._arguments_json.pop(index, ""))
            self.stream.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.output))

    # --- the end --------------------------------------------------------------------------

    def set_usage(self, usage: Usage, cache_write_1h: int = 0) -> None:
        """Usage as reported so far; the total and the cost are computed from the parts."""
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model.cost, usage, cache_write_1h)
        self.output.usage = usage

    def finish(self) -> None:
        """End with the stop reason the response gave: ``done``, or ``error`` if that reason is one."""
        self._start()
        output = self.output
        if output.stop_reason in ("error", "aborted"):
            self.stream.push(ErrorEvent(reason=output.stop_reason, error=output))  # type: ignore[arg-type]
        else:
            self.stream.push(DoneEvent(reason=output.stop_reason, message=output))  # type: ignore[arg-type]
        self.stream.end(output)

    def fail(self, message: str, *, aborted: bool = False) -> None:
        """End with an error (or an abort), keeping the content streamed so far.

        Every failure of a request ends here, its text from the HTTP library or the server:
        credentials are redacted from it (:func:`~agentls.ai.secrets.redact`).
        """
        self._flush()
        self._arguments_json.clear()
        self.output.stop_reason = "aborted" if aborted else "error"
        self.output.error_message = redact(message)
        self.stream.push(ErrorEvent(reason=self.output.stop_reason, error=self.output))  # type: ignore[arg-type]
        self.stream.end(self.output)


async def payload_hook(options: StreamOptions | None, params: dict[str, Any], model: Model) -> dict[str, Any]:
    """The request body, or what ``options.on_payload`` replaces it with."""
    if options is None or options.on_payload is None:
        return params
    replaced = options.on_payload(params, model)
    if inspect.isawaitable(replaced):
        replaced = await replaced
    return params if replaced is None else replaced


async def response_hook(
    options: StreamOptions | None, status: int, headers: Mapping[str, str], model: Model
) -> None:
    """Tell ``options.on_response`` the status and headers of the response."""
    if options is not None and options.on_response is not None:
        maybe = options.on_response({"status": status, "headers": dict(headers)}, model)
        if maybe is not None:
            await maybe


Attempt = Callable[[ResponseBuilder], Awaitable[None]]
"""One HTTP request and the reading of its stream into the builder; raises on failure."""


def stream_response(
    model: Model,
    options: StreamOptions | None,
    attempt: Attempt,
    *,
    classify: Callable[[BaseException], Failure],
    policy: RetryPolicy,
    logger: logging.Logger,
) -> AssistantMessageEventStream:
    """Start ``attempt`` (retried as ``policy`` allows) in a task; the stream it feeds."""
    stream = AssistantMessageEventStream()
    builder = ResponseBuilder(model, stream, coalesce=bool(options and options.coalesce_deltas))
    signal = options.signal if options else None

    async def one_attempt() -> None:
        builder.restart()  # a retry starts again from an empty message
        await attempt(builder)

    async def run() -> None:
        try:
            failure = await with_retries(
                one_attempt,
                classify=classify,
                may_retry=lambda: not builder.started,
                policy=policy,
                signal=signal,
                logger=logger,
                label=model.provider,
            )
        except Aborted:
            builder.fail(REQUEST_ABORTED, aborted=True)
            return
        except BaseException as error:  # a bug or a cancelled task: the consumer must not hang
            builder.fail(f"{type(error).__name__}: {error}")
            raise
        if failure is not None:
            builder.fail(failure.message)
        elif signal is not None and signal.aborted:
            builder.fail(REQUEST_ABORTED, aborted=True)
        else:
            builder.finish()

    task = asyncio.get_running_loop().create_task(run())
    _running.add(task)
    task.add_done_callback(_running.discard)
    return stream


_running: set[asyncio.Task[None]] = set()
"""Requests in flight: the event loop keeps only weak references to tasks."""
