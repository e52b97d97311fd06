"""The stateful ``Agent``: a port of ``pi-agent-core`` 0.85.0's ``agent.js``.

It owns the transcript, the steering and follow-up queues, the listeners and the
abort controller of the active run, and reduces loop events into its state in
one place (:meth:`Agent._process_event`) before awaiting the listeners.

Starting work is synchronous, as in JavaScript where an ``async`` call runs up to
its first ``await`` at once: :meth:`Agent.prompt` and :meth:`Agent.continue_`
check the state, claim the run, snapshot the context and return an
:class:`asyncio.Task` that completes when the run has settled (after the
``agent_end`` listeners). A busy agent raises :class:`AgentBusyError` right away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from agentls.agent.loop import get_default_stream_fn, run_agent_loop, run_agent_loop_continue
from agentls.agent.queue import PendingMessageQueue
from agentls.agent.types import (
    AfterToolCall,
    AgentContext,
    AgentEndEvent,
    AgentEvent,
    AgentLoopConfig,
    AgentTool,
    BeforeToolCall,
    ConvertToLlm,
    GetApiKey,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    QueueMode,
    ToolExecutionEndEvent,
    ToolExecutionMode,
    ToolExecutionStartEvent,
    TransformContext,
    TurnContext,
    TurnEndEvent,
    TurnUpdate,
    default_convert_to_llm,
    maybe_await,
)
from agentls.ai import (
    AbortController,
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Model,
    ModelThinkingLevel,
    StreamFn,
    TextContent,
    ThinkingBudgets,
    Usage,
    UserMessage,
)

Listener: TypeAlias = Callable[[AgentEvent, AbortSignal], Awaitable[None] | None]
PrepareNextTurnFn: TypeAlias = Callable[
    [AbortSignal | None], Awaitable[TurnUpdate | None] | TurnUpdate | None
]
PrepareNextTurnWithContextFn: TypeAlias = Callable[
    [TurnContext, AbortSignal | None], Awaitable[TurnUpdate | None] | TurnUpdate | None
]
ShouldStopFn: TypeAlias = Callable[[TurnContext, AbortSignal | None], Awaitable[bool] | bool]

PROMPT_BUSY = (
    "Agent is already processing a prompt. "
    "Use steer() or followUp() to queue messages, or wait for completion."
)
CONTINUE_BUSY = "Agent is already processing. Wait for completion before continuing."
RESET_BUSY = "Agent is already processing. Wait for completion before resetting."

DEFAULT_MODEL = Model(id="unknown", name="unknown", api="unknown", provider="unknown", input=[])


class AgentBusyError(RuntimeError):
    """The agent is running; queue the message with ``steer``/``follow_up`` or wait for idle."""


class ContinueError(ValueError):
    """``continue_()`` has nothing to continue from."""


class AgentState:
    """The agent's state. Assigning ``tools`` or ``messages`` copies the given list."""

    def __init__(
        self,
        *,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: ModelThinkingLevel = "off",
        tools: list[AgentTool] | None = None,
        messages: list[AgentMessage] | None = None,
    ) -> None:
        self.system_prompt = system_prompt
        self.model = model or DEFAULT_MODEL
        self.thinking_level: ModelThinkingLevel = thinking_level
        self._tools = list(tools or [])
        self._messages = list(messages or [])
        self.is_streaming = False
        self.streaming_message: AgentMessage | None = None
        self.pending_tool_calls: frozenset[str] = frozenset()
        self.error_message: str | None = None

    @property
    def tools(self) -> list[AgentTool]:
        return self._tools

    @tools.setter
    def tools(self, tools: list[AgentTool]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[AgentMessage]:
        return self._messages

    @messages.setter
    def messages(self, messages: list[AgentMessage]) -> None:
        self._messages = list(messages)


@dataclass
class _ActiveRun:
    abort_controller: AbortController
    idle: asyncio.Future[None]
    task: asyncio.Task[None] | None = field(default=None)
    """Holds the run's task: asyncio keeps only weak references, and callers may not await it."""


class Agent:
    """A stateful agent around the low-level loop: transcript, queues, listeners and abort."""

    def __init__(
        self,
        *,
        initial_state: AgentState | None = None,
        stream_fn: StreamFn | None = None,
        convert_to_llm: ConvertToLlm | None = None,
        transform_context: TransformContext | None = None,
        get_api_key: GetApiKey | None = None,
        on_payload: Callable[[Any, Model], Any] | None = None,
        on_response: Callable[[dict[str, Any], Model], Awaitable[None] | None] | None = None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        should_stop_after_turn: ShouldStopFn | None = None,
        prepare_next_turn: PrepareNextTurnFn | None = None,
        prepare_next_turn_with_context: PrepareNextTurnWithContextFn | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
        thinking_budgets: ThinkingBudgets | None = None,
        transport: str = "auto",
        max_retry_delay_ms: int | None = None,
        tool_execution: ToolExecutionMode = "parallel",
    ) -> None:
        self._state = initial_state or AgentState()
        self._listeners: list[Listener] = []
        self._steering_queue = PendingMessageQueue(steering_mode)
        self._follow_up_queue = PendingMessageQueue(follow_up_mode)
        self.stream_fn: StreamFn = stream_fn or get_default_stream_fn()
        self.convert_to_llm: ConvertToLlm = convert_to_llm or default_convert_to_llm
        self.transform_context = transform_context
        self.get_api_key = get_api_key
        self.on_payload = on_payload
        self.on_response = on_response
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.should_stop_after_turn = should_stop_after_turn
        self.prepare_next_turn = prepare_next_turn
        self.prepare_next_turn_with_context = prepare_next_turn_with_context
        self.session_id = session_id
        self.thinking_budgets = thinking_budgets
        self.transport = transport
        self.max_retry_delay_ms = max_retry_delay_ms
        self.tool_execution: ToolExecutionMode = tool_execution
        self._active_run: _ActiveRun | None = None

    # --- state and listeners -----------------------------------------------------------

    @property
    def state(self) -> AgentState:
        return self._state

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; it is awaited in subscription order and is part of the run's settlement."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    @property
    def signal(self) -> AbortSignal | None:
        """The abort signal of the active run, if any."""
        return self._active_run.abort_controller.signal if self._active_run else None

    @property
    def is_running(self) -> bool:
        return self._active_run is not None

    # --- queues ------------------------------------------------------------------------

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering_queue.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering_queue.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up_queue.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up_queue.mode = mode

    @property
    def steering_queue(self) -> PendingMessageQueue:
        """The steering queue itself (for hosts that let users edit what is queued, by item id)."""
        return self._steering_queue

    @property
    def follow_up_queue(self) -> PendingMessageQueue:
        return self._follow_up_queue

    @property
    def queued_steering(self) -> tuple[AgentMessage, ...]:
        return self._steering_queue.messages

    @property
    def queued_follow_ups(self) -> tuple[AgentMessage, ...]:
        return self._follow_up_queue.messages

    def steer(self, message: AgentMessage) -> None:
        """Queue a message to be injected after the current assistant turn."""
        self._steering_queue.enqueue(message)

    def follow_up(self, message: AgentMessage) -> None:
        """Queue a message to run only when the agent would otherwise stop."""
        self._follow_up_queue.enqueue(message)

    def clear_steering_queue(self) -> None:
        self._steering_queue.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up_queue.clear()

    def clear_all_queues(self) -> None:
        self.clear_steering_queue()
        self.clear_follow_up_queue()

    def has_queued_messages(self) -> bool:
        return self._steering_queue.has_items() or self._follow_up_queue.has_items()

    # --- control -----------------------------------------------------------------------

    def abort(self) -> None:
        """Abort the active run, if any."""
        if self._active_run is not None:
            self._active_run.abort_controller.abort()

    async def wait_for_idle(self) -> None:
        """Wait until the active run and its ``agent_end`` listeners have finished."""
        if self._active_run is not None:
            await asyncio.shield(self._active_run.idle)

    def reset(self) -> None:
        """Clear the transcript, the runtime state and both queues."""
        if self._active_run is not None:
            raise AgentBusyError(RESET_BUSY)
        self._state.messages = []
        self._state.is_streaming = False
        self._state.streaming_message = None
        self._state.pending_tool_calls = frozenset()
        self._state.error_message = None
        self.clear_follow_up_queue()
        self.clear_steering_queue()

    def prompt(
        self, input: str | AgentMessage | list[AgentMessage], images: list[ImageContent] | None = None
    ) -> asyncio.Task[None]:
        """Start a run with a prompt (text, one message or several); returns the run's task."""
        if self._active_run is not None:
            raise AgentBusyError(PROMPT_BUSY)
        return self._run_prompt_messages(self._normalize_prompt_input(input, images))

    def continue_(self) -> asyncio.Task[None]:
        """Continue from the transcript; returns the run's task.

        The last message must be a user or tool-result message, or an assistant
        message with queued steering (or else follow-up) messages to run next.
        """
        if self._active_run is not None:
            raise AgentBusyError(CONTINUE_BUSY)
        if not self._state.messages:
            raise ContinueError("No messages to continue from")
        if self._state.messages[-1].role == "assistant":
            steering = self._steering_queue.drain()
            if steering:
                return self._run_prompt_messages(steering, skip_initial_steering_poll=True)
            follow_ups = self._follow_up_queue.drain()
            if follow_ups:
                return self._run_prompt_messages(follow_ups)
            raise ContinueError("Cannot continue from message role: assistant")
        context, config = self._create_context_snapshot(), self._create_loop_config()
        return self._start_run(
            lambda signal: run_agent_loop_continue(
                context, config, self._process_event, signal, self.stream_fn
            )
        )

    def _normalize_prompt_input(
        self, input: str | AgentMessage | list[AgentMessage], images: list[ImageContent] | None
    ) -> list[AgentMessage]:
        if isinstance(input, list):
            return list(input)
        if not isinstance(input, str):
            return [input]
        content: list[TextContent | ImageContent] = [TextContent(text=input)]
        content.extend(images or [])
        return [UserMessage(content=content)]

    def _run_prompt_messages(
        self, messages: list[AgentMessage], *, skip_initial_steering_poll: bool = False
    ) -> asyncio.Task[None]:
        context = self._create_context_snapshot()
        config = self._create_loop_config(skip_initial_steering_poll=skip_initial_steering_poll)
        return self._start_run(
            lambda signal: run_agent_loop(
                messages, context, config, self._process_event, signal, self.stream_fn
            )
        )

    def _create_context_snapshot(self) -> AgentContext:
        return AgentContext(
            system_prompt=self._state.system_prompt,
            messages=list(self._state.messages),
            tools=list(self._state.tools),
        )

    def _create_loop_config(self, *, skip_initial_steering_poll: bool = False) -> AgentLoopConfig:
        skip_poll = skip_initial_steering_poll
        should_stop = self.should_stop_after_turn

        async def get_steering_messages() -> list[AgentMessage]:
            nonlocal skip_poll
            if skip_poll:
                skip_poll = False
                return []
            return self._steering_queue.drain()

        async def get_follow_up_messages() -> list[AgentMessage]:
            return self._follow_up_queue.drain()

        async def should_stop_after_turn(context: TurnContext) -> bool:
            assert should_stop is not None
            return bool(await maybe_await(should_stop(context, self.signal)))

        async def prepare_next_turn(context: TurnContext) -> TurnUpdate | None:
            if self.prepare_next_turn_with_context is not None:
                return await maybe_await(self.prepare_next_turn_with_context(context, self.signal))
            if self.prepare_next_turn is not None:
                return await maybe_await(self.prepare_next_turn(self.signal))
            return None

        has_prepare = self.prepare_next_turn is not None or self.prepare_next_turn_with_context is not None
        level = self._state.thinking_level
        return AgentLoopConfig(
            model=self._state.model,
            reasoning=None if level == "off" else level,
            session_id=self.session_id,
            on_payload=self.on_payload,
            on_response=self.on_response,
            transport=self.transport,
            thinking_budgets=self.thinking_budgets,
            max_retry_delay_ms=self.max_retry_delay_ms,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            should_stop_after_turn=should_stop_after_turn if should_stop is not None else None,
            prepare_next_turn=prepare_next_turn if has_prepare else None,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            get_steering_messages=get_steering_messages,
            get_follow_up_messages=get_follow_up_messages,
        )

    # --- run lifecycle -----------------------------------------------------------------

    def _start_run(self, executor: Callable[[AbortSignal], Awaitable[Any]]) -> asyncio.Task[None]:
        if self._active_run is not None:
            raise AgentBusyError("Agent is already processing.")
        loop = asyncio.get_running_loop()
        run = _ActiveRun(AbortController(), loop.create_future())
        self._active_run = run
        self._state.is_streaming = True
        self._state.streaming_message = None
        self._state.error_message = None
        run.task = loop.create_task(self._run_with_lifecycle(run, executor))
        return run.task

    async def _run_with_lifecycle(
        self, run: _ActiveRun, executor: Callable[[AbortSignal], Awaitable[Any]]
    ) -> None:
        signal = run.abort_controller.signal
        try:
            await executor(signal)
        except Exception as error:
            await self._handle_run_failure(error, signal.aborted)
        finally:
            self._finish_run()

    async def _handle_run_failure(self, error: Exception, aborted: bool) -> None:
        """A run that raised (a broken stream function, say) still ends with Pi's event sequence."""
        model = self._state.model
        failure = AssistantMessage(
            content=[TextContent(text="")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(),
            stop_reason="aborted" if aborted else "error",
            error_message=str(error),
        )
        await self._process_event(MessageStartEvent(message=failure))
        await self._process_event(MessageEndEvent(message=failure))
        await self._process_event(TurnEndEvent(message=failure, tool_results=[]))
        await self._process_event(AgentEndEvent(messages=[failure]))

    def _finish_run(self) -> None:
        self._state.is_streaming = False
        self._state.streaming_message = None
        self._state.pending_tool_calls = frozenset()
        run, self._active_run = self._active_run, None
        if run is not None and not run.idle.done():
            run.idle.set_result(None)

    async def _process_event(self, event: AgentEvent) -> None:
        """Reduce ``event`` into the state, then await every listener in order."""
        state = self._state
        if isinstance(event, MessageStartEvent | MessageUpdateEvent):
            state.streaming_message = event.message
        elif isinstance(event, MessageEndEvent):
            state.streaming_message = None
            state.messages.append(event.message)
        elif isinstance(event, ToolExecutionStartEvent):
            state.pending_tool_calls = state.pending_tool_calls | {event.tool_call_id}
        elif isinstance(event, ToolExecutionEndEvent):
            state.pending_tool_calls = state.pending_tool_calls - {event.tool_call_id}
        elif isinstance(event, TurnEndEvent):
            if isinstance(event.message, AssistantMessage) and event.message.error_message:
                state.error_message = event.message.error_message
        elif isinstance(event, AgentEndEvent):
            state.streaming_message = None

        if self._active_run is None:
            raise RuntimeError("Agent listener invoked outside active run")
        signal = self._active_run.abort_controller.signal
        for listener in list(self._listeners):
            await maybe_await(listener(event, signal))


# ``continue`` is a keyword in Python; ``getattr(agent, "continue")()`` works like Pi's ``agent.continue()``.
setattr(Agent, "continue", Agent.continue_)
