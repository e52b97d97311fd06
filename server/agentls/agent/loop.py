"""The agent loop: a port of ``pi-agent-core`` 0.85.0's ``agent-loop.js``.

It reads top-down like Pi's: :func:`_run_loop` (an outer follow-up loop around an
inner tool/steering loop) -> :func:`_stream_assistant_response` ->
:func:`_execute_tool_calls` -> sequential or parallel -> :func:`_prepare_tool_call`
-> :func:`_execute_prepared_tool_call` -> :func:`_finalize_executed_tool_call`.
Policy lives in the hooks of :class:`AgentLoopConfig`, never here.

The loop works on :data:`AgentMessage` throughout and converts to model
messages only at the model-call boundary (``transform_context`` then
``convert_to_llm``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from agentls.agent.types import (
    AfterToolCallContext,
    AgentContext,
    AgentEndEvent,
    AgentEvent,
    AgentLoopConfig,
    AgentStartEvent,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnContext,
    TurnEndEvent,
    TurnStartEvent,
    maybe_await,
)
from agentls.ai import (
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    ErrorEvent,
    EventStream,
    StartEvent,
    StreamFn,
    TextContent,
    ToolCall,
    ToolResultMessage,
    validate_tool_arguments,
)

Emit: TypeAlias = Callable[[AgentEvent], Awaitable[None]]
AgentEventStream: TypeAlias = EventStream[AgentEvent, list[AgentMessage]]

_default_stream_fn: StreamFn | None = None


def set_default_stream_fn(stream_fn: StreamFn | None) -> None:
    """Install the stream function used when an Agent or loop is given none."""
    global _default_stream_fn
    _default_stream_fn = stream_fn


def get_default_stream_fn() -> StreamFn:
    if _default_stream_fn is None:
        raise RuntimeError(
            "No default stream function configured. "
            "Pass stream_fn explicitly or call set_default_stream_fn()."
        )
    return _default_stream_fn


# --- entry points ------------------------------------------------------------------------


def _create_agent_stream() -> AgentEventStream:
    return EventStream(
        lambda event: isinstance(event, AgentEndEvent),
        lambda event: event.messages if isinstance(event, AgentEndEvent) else [],
    )


def _check_continuable(context: AgentContext) -> None:
    if not context.messages:
        raise ValueError("Cannot continue: no messages in context")
    if context.messages[-1].role == "assistant":
        raise ValueError("Cannot continue from message role: assistant")


def _start_background(
    stream: AgentEventStream, run: Callable[[Emit], Awaitable[list[AgentMessage]]]
) -> AgentEventStream:
    async def emit(event: AgentEvent) -> None:
        stream.push(event)

    async def drive() -> None:
        stream.end(await run(emit))

    task = asyncio.get_running_loop().create_task(drive())
    _background_runs.add(task)
    task.add_done_callback(_background_runs.discard)
    return stream


_background_runs: set[asyncio.Task[None]] = set()


def agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start a loop with new prompt messages; the stream's result is the messages it added.

    The caller's ``context.messages`` is copied, not changed.
    """
    return _start_background(
        _create_agent_stream(),
        lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn),
    )


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Continue from ``context`` without a new message (the last one must not be the assistant's).

    Raises at once when the context is empty or ends with an assistant message.
    The loop appends to the caller's ``context.messages`` list itself, as Pi's does.
    """
    _check_continuable(context)
    return _start_background(
        _create_agent_stream(),
        lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn),
    )


def _yielding(emit: Emit) -> Emit:
    """Emit, then let other ready work run, as JavaScript's ``await emit(...)`` does.

    In Pi every ``await`` yields to the microtask queue, so whoever started a run
    without awaiting it acts again right after ``agent_start`` (a steering message
    sent then is taken by the run's first poll). asyncio runs a task until it
    really waits; this yield restores Pi's interleaving between events.
    """

    async def emit_then_yield(event: AgentEvent) -> None:
        await emit(event)
        await asyncio.sleep(0)

    return emit_then_yield


async def run_agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    emit = _yielding(emit)
    new_messages: list[AgentMessage] = list(prompts)
    current = dataclasses.replace(context, messages=[*context.messages, *prompts])
    await emit(AgentStartEvent())
    await emit(TurnStartEvent())
    for prompt in prompts:
        await emit(MessageStartEvent(message=prompt))
        await emit(MessageEndEvent(message=prompt))
    await _run_loop(current, new_messages, config, signal, emit, stream_fn or get_default_stream_fn())
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    _check_continuable(context)
    emit = _yielding(emit)
    new_messages: list[AgentMessage] = []
    current = dataclasses.replace(context)
    await emit(AgentStartEvent())
    await emit(TurnStartEvent())
    await _run_loop(current, new_messages, config, signal, emit, stream_fn or get_default_stream_fn())
    return new_messages


# --- the loop --------------------------------------------------------------------------


async def _poll(source: Callable[[], Any] | None) -> list[AgentMessage]:
    if source is None:
        return []
    return list(await maybe_await(source()) or [])


async def _run_loop(
    initial_context: AgentContext,
    new_messages: list[AgentMessage],
    initial_config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn,
) -> None:
    context = initial_context
    config = initial_config
    last_turn: TurnContext | None = None

    # Steering queued while the user waited is picked up before the first model call.
    pending = await _poll(config.get_steering_messages)

    # Outer loop: queued follow-ups continue the run when it would otherwise stop.
    while True:
        has_more_tool_calls = True
        # Inner loop: tool calls and steering messages.
        while has_more_tool_calls or pending:
            if last_turn is not None:
                if config.prepare_next_turn is not None:
                    update = await maybe_await(config.prepare_next_turn(last_turn))
                    if update is not None:
                        context = update.context or context
                        reasoning = config.reasoning
                        if update.thinking_level is not None:
                            reasoning = None if update.thinking_level == "off" else update.thinking_level
                        config = dataclasses.replace(
                            config, model=update.model or config.model, reasoning=reasoning
                        )
                # Preparation can take long (compaction, say): pick up steering queued meanwhile,
                # but only if the earlier poll was empty, or one-at-a-time would deliver two now.
                if not pending:
                    pending = await _poll(config.get_steering_messages)
                await emit(TurnStartEvent())

            for message in pending:
                await emit(MessageStartEvent(message=message))
                await emit(MessageEndEvent(message=message))
                context.messages.append(message)
                new_messages.append(message)
            pending = []

            message = await _stream_assistant_response(context, config, signal, emit, stream_fn)
            new_messages.append(message)
            if message.stop_reason in ("error", "aborted"):
                await emit(TurnEndEvent(message=message, tool_results=[]))
                await emit(AgentEndEvent(messages=new_messages))
                return

            tool_calls = [block for block in message.content if isinstance(block, ToolCall)]
            tool_results: list[ToolResultMessage] = []
            has_more_tool_calls = False
            if tool_calls:
                # A "length" stop may have cut the arguments of any call: execute none of them.
                if message.stop_reason == "length":
                    batch = await _fail_truncated_tool_calls(tool_calls, emit)
                else:
                    batch = await _execute_tool_calls(context, message, config, signal, emit)
                tool_results.extend(batch.messages)
                has_more_tool_calls = not batch.terminate
                for result in tool_results:
                    context.messages.append(result)
                    new_messages.append(result)

            await emit(TurnEndEvent(message=message, tool_results=tool_results))
            last_turn = TurnContext(
                message=message, tool_results=tool_results, context=context, new_messages=new_messages
            )
            if config.should_stop_after_turn is not None and await maybe_await(
                config.should_stop_after_turn(last_turn)
            ):
                await emit(AgentEndEvent(messages=new_messages))
                return
            pending = await _poll(config.get_steering_messages)

        # The agent would stop here: queued follow-ups continue the same run.
        follow_ups = await _poll(config.get_follow_up_messages)
        if follow_ups:
            pending = follow_ups
            continue
        break

    await emit(AgentEndEvent(messages=new_messages))


async def _stream_assistant_response(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
    stream_fn: StreamFn,
) -> AssistantMessage:
    """Call the model once; the partial message lives at the end of ``context.messages`` meanwhile."""
    messages = context.messages
    if config.transform_context is not None:
        messages = await maybe_await(config.transform_context(messages, signal))
    llm_messages = await maybe_await(config.convert_to_llm(messages))
    llm_context = Context(system_prompt=context.system_prompt, messages=llm_messages, tools=context.tools)  # type: ignore[arg-type]

    # Resolved per request: keys may expire during a long run.
    api_key = (
        await maybe_await(config.get_api_key(config.model.provider)) if config.get_api_key else None
    ) or (config.api_key)
    options = dataclasses.replace(config, api_key=api_key, signal=signal)
    response: AssistantMessageEventStream = await maybe_await(stream_fn(config.model, llm_context, options))

    partial: AssistantMessage | None = None
    added_partial = False
    async for event in response:
        if isinstance(event, StartEvent):
            partial = event.partial
            context.messages.append(partial)
            added_partial = True
            await emit(MessageStartEvent(message=partial.model_copy()))
        elif isinstance(event, DoneEvent | ErrorEvent):
            return await _finish_response(context, response, added_partial, emit)
        elif partial is not None:
            partial = event.partial
            context.messages[-1] = partial
            await emit(MessageUpdateEvent(assistant_message_event=event, message=partial.model_copy()))
    return await _finish_response(context, response, added_partial, emit)


async def _finish_response(
    context: AgentContext, response: AssistantMessageEventStream, added_partial: bool, emit: Emit
) -> AssistantMessage:
    final = await response.result()
    if added_partial:
        context.messages[-1] = final
    else:
        context.messages.append(final)
        await emit(MessageStartEvent(message=final.model_copy()))
    await emit(MessageEndEvent(message=final))
    return final


# --- tool calls --------------------------------------------------------------------------


@dataclass
class _ToolBatch:
    messages: list[ToolResultMessage]
    terminate: bool


@dataclass
class _Finalized:
    tool_call: ToolCall
    result: AgentToolResult
    is_error: bool


@dataclass
class _Prepared:
    tool_call: ToolCall
    tool: AgentTool
    args: Any


def _error_result(message: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=message)], details={})


def _aborted(tool_call: ToolCall) -> _Finalized:
    return _Finalized(tool_call, _error_result("Operation aborted"), True)


async def _fail_truncated_tool_calls(tool_calls: list[ToolCall], emit: Emit) -> _ToolBatch:
    messages = []
    for tool_call in tool_calls:
        await _emit_tool_start(tool_call, emit)
        finalized = _Finalized(
            tool_call,
            _error_result(
                f'Tool call "{tool_call.name}" was not executed: the response hit the output token limit, '
                "so its arguments may be truncated. Re-issue the tool call with complete arguments."
            ),
            True,
        )
        await _emit_tool_end(finalized, emit)
        message = _tool_result_message(finalized)
        await _emit_tool_result_message(message, emit)
        messages.append(message)
    return _ToolBatch(messages, terminate=False)


async def _execute_tool_calls(
    context: AgentContext,
    assistant_message: AssistantMessage,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> _ToolBatch:
    tool_calls = [block for block in assistant_message.content if isinstance(block, ToolCall)]
    tools = {tool.name: tool for tool in reversed(context.tools or [])}
    has_sequential = any(
        (tool := tools.get(call.name)) is not None and tool.execution_mode == "sequential"
        for call in tool_calls
    )
    if config.tool_execution == "sequential" or has_sequential:
        return await _execute_sequential(context, assistant_message, tool_calls, config, signal, emit)
    return await _execute_parallel(context, assistant_message, tool_calls, config, signal, emit)


async def _execute_sequential(
    context: AgentContext,
    assistant_message: AssistantMessage,
    tool_calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> _ToolBatch:
    finalized_calls: list[_Finalized] = []
    messages: list[ToolResultMessage] = []
    for tool_call in tool_calls:
        await _emit_tool_start(tool_call, emit)
        preparation = await _prepare_tool_call(context, assistant_message, tool_call, config, signal)
        if isinstance(preparation, _Finalized):
            finalized = preparation
        else:
            executed = await _execute_prepared_tool_call(preparation, signal, emit)
            finalized = await _finalize_executed_tool_call(
                context, assistant_message, preparation, executed, config, signal
            )
        await _emit_tool_end(finalized, emit)
        message = _tool_result_message(finalized)
        await _emit_tool_result_message(message, emit)
        finalized_calls.append(finalized)
        messages.append(message)
        if signal is not None and signal.aborted:
            break
    return _ToolBatch(messages, _should_terminate(finalized_calls))


async def _execute_parallel(
    context: AgentContext,
    assistant_message: AssistantMessage,
    tool_calls: list[ToolCall],
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> _ToolBatch:
    # Preparation pass in source order; calls that end here get their end event at once.
    entries: list[_Finalized | Callable[[], Awaitable[_Finalized]]] = []
    for tool_call in tool_calls:
        await _emit_tool_start(tool_call, emit)
        preparation = await _prepare_tool_call(context, assistant_message, tool_call, config, signal)
        if isinstance(preparation, _Finalized):
            await _emit_tool_end(preparation, emit)
            entries.append(preparation)
        else:
            entries.append(_deferred_execution(context, assistant_message, preparation, config, signal, emit))
        if signal is not None and signal.aborted:
            break

    # Then every prepared tool runs at once; end events come in completion order.
    async def resolved(value: _Finalized) -> _Finalized:
        return value

    ordered = await asyncio.gather(*(resolved(e) if isinstance(e, _Finalized) else e() for e in entries))
    # Result messages follow in source order.
    messages = []
    for finalized in ordered:
        message = _tool_result_message(finalized)
        await _emit_tool_result_message(message, emit)
        messages.append(message)
    return _ToolBatch(messages, _should_terminate(ordered))


def _deferred_execution(
    context: AgentContext,
    assistant_message: AssistantMessage,
    prepared: _Prepared,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    emit: Emit,
) -> Callable[[], Awaitable[_Finalized]]:
    async def run() -> _Finalized:
        if signal is not None and signal.aborted:
            finalized = _aborted(prepared.tool_call)
        else:
            executed = await _execute_prepared_tool_call(prepared, signal, emit)
            # Pi starts every prepared tool in one synchronous pass and each ``await`` yields to
            # the others, so tools that finish at once run their afterToolCall hooks before any
            # end event. Yielding here and after the hook gives asyncio the same interleaving.
            await asyncio.sleep(0)
            finalized = await _finalize_executed_tool_call(
                context, assistant_message, prepared, executed, config, signal
            )
            await asyncio.sleep(0)
        await _emit_tool_end(finalized, emit)
        return finalized

    return run


def _should_terminate(finalized_calls: list[_Finalized]) -> bool:
    return bool(finalized_calls) and all(f.result.terminate is True for f in finalized_calls)


def _prepare_arguments(tool: AgentTool, tool_call: ToolCall) -> ToolCall:
    if tool.prepare_arguments is None:
        return tool_call
    prepared = tool.prepare_arguments(tool_call.arguments)
    if prepared is tool_call.arguments:
        return tool_call
    return tool_call.model_copy(update={"arguments": prepared})


async def _prepare_tool_call(
    context: AgentContext,
    assistant_message: AssistantMessage,
    tool_call: ToolCall,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
) -> _Finalized | _Prepared:
    tool = next((t for t in context.tools or [] if t.name == tool_call.name), None)
    if tool is None:
        return _Finalized(tool_call, _error_result(f"Tool {tool_call.name} not found"), True)
    try:
        args = validate_tool_arguments(tool, _prepare_arguments(tool, tool_call))
        if config.before_tool_call is not None:
            before = await maybe_await(
                config.before_tool_call(
                    BeforeToolCallContext(
                        assistant_message=assistant_message, tool_call=tool_call, args=args, context=context
                    ),
                    signal,
                )
            )
            if signal is not None and signal.aborted:
                return _aborted(tool_call)
            if before is not None and before.block:
                result = _error_result(before.reason or "Tool execution was blocked")
                if before.terminate is True:
                    result.terminate = True
                return _Finalized(tool_call, result, True)
        if signal is not None and signal.aborted:
            return _aborted(tool_call)
        return _Prepared(tool_call, tool, args)
    except Exception as error:
        return _Finalized(tool_call, _error_result(str(error)), True)


def _as_tool_result(value: Any) -> AgentToolResult:
    if isinstance(value, AgentToolResult):
        return value
    return AgentToolResult.model_validate(value)


async def _execute_prepared_tool_call(
    prepared: _Prepared, signal: AbortSignal | None, emit: Emit
) -> _Finalized:
    update_events: list[asyncio.Future[None]] = []
    accepting_updates = True

    def on_update(partial_result: AgentToolResult) -> None:
        if not accepting_updates:
            return
        event = ToolExecutionUpdateEvent(
            tool_call_id=prepared.tool_call.id,
            tool_name=prepared.tool_call.name,
            args=prepared.tool_call.arguments,
            partial_result=_as_tool_result(partial_result),
        )
        update_events.append(asyncio.ensure_future(emit(event)))

    try:
        result = _as_tool_result(
            await maybe_await(prepared.tool.execute(prepared.tool_call.id, prepared.args, signal, on_update))
        )
        accepting_updates = False
        await asyncio.gather(*update_events)
        return _Finalized(prepared.tool_call, result, False)
    except Exception as error:
        accepting_updates = False
        await asyncio.gather(*update_events)
        return _Finalized(prepared.tool_call, _error_result(str(error)), True)
    finally:
        accepting_updates = False


async def _finalize_executed_tool_call(
    context: AgentContext,
    assistant_message: AssistantMessage,
    prepared: _Prepared,
    executed: _Finalized,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
) -> _Finalized:
    result = executed.result
    is_error = executed.is_error
    if config.after_tool_call is not None:
        try:
            after = await maybe_await(
                config.after_tool_call(
                    AfterToolCallContext(
                        assistant_message=assistant_message,
                        tool_call=prepared.tool_call,
                        args=prepared.args,
                        result=result,
                        is_error=is_error,
                        context=context,
                    ),
                    signal,
                )
            )
            if after is not None:
                overrides = {
                    name: getattr(after, name)
                    for name in ("content", "details", "usage", "terminate")
                    if getattr(after, name) is not None
                }
                result = result.model_copy(update=overrides)
                if after.is_error is not None:
                    is_error = after.is_error
        except Exception as error:
            result = _error_result(str(error))
            is_error = True
    return _Finalized(prepared.tool_call, result, is_error)


async def _emit_tool_start(tool_call: ToolCall, emit: Emit) -> None:
    await emit(
        ToolExecutionStartEvent(tool_call_id=tool_call.id, tool_name=tool_call.name, args=tool_call.arguments)
    )


async def _emit_tool_end(finalized: _Finalized, emit: Emit) -> None:
    await emit(
        ToolExecutionEndEvent(
            tool_call_id=finalized.tool_call.id,
            tool_name=finalized.tool_call.name,
            result=finalized.result,
            is_error=finalized.is_error,
        )
    )


def _tool_result_message(finalized: _Finalized) -> ToolResultMessage:
    result = finalized.result
    # Copy details and usage only where the result defines them (undefined stays absent, null stays null).
    optional = {name: getattr(result, name) for name in ("details", "usage") if result.defined(name)}
    if result.added_tool_names:
        optional["added_tool_names"] = result.added_tool_names
    return ToolResultMessage(
        tool_call_id=finalized.tool_call.id,
        tool_name=finalized.tool_call.name,
        # Tools written without types may return no content; never let that into the transcript.
        content=list(result.content or []),
        is_error=finalized.is_error,
        **optional,
    )


async def _emit_tool_result_message(message: ToolResultMessage, emit: Emit) -> None:
    await emit(MessageStartEvent(message=message))
    await emit(MessageEndEvent(message=message))
