"""The kernel's types: agent tools and their results, agent events, hook contexts and the loop config.

These mirror ``pi-agent-core`` 0.85.0's ``types.d.ts``. Hooks may be plain or
``async`` functions; the loop awaits whatever they return.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypeVar

from pydantic import Field

from agentls.ai import (
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    AssistantMessageEvent,
    ImageContent,
    Message,
    Model,
    ModelThinkingLevel,
    StreamOptions,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from agentls.ai.types import UserContent, WireModel

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]
QueueMode: TypeAlias = Literal["all", "one-at-a-time"]

T = TypeVar("T")


async def maybe_await(value: T | Awaitable[T]) -> T:
    """Await ``value`` if it is awaitable (hooks and tools may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


# --- tools -----------------------------------------------------------------------------


class AgentToolResult(WireModel):
    """Final or partial result of a tool."""

    content: list[UserContent] | None = Field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    """Names of tools introduced by this result and available from this transcript point on."""
    terminate: bool | None = None
    """Ask the loop to stop after this batch; it stops only if every result of the batch says so."""


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], None]
ToolExecuteFn: TypeAlias = Callable[
    [str, Any, AbortSignal | None, ToolUpdateCallback | None],
    Awaitable[AgentToolResult] | AgentToolResult,
]


@dataclass(kw_only=True)
class AgentTool(Tool):
    """A tool the agent can run.

    ``execute(tool_call_id, args, signal, on_update)`` gets the validated
    arguments, may report partial results through ``on_update``, should honour
    ``signal``, and raises on failure (the message becomes an error result).
    """

    execute: ToolExecuteFn
    label: str = ""
    prepare_arguments: Callable[[Any], Any] | None = None
    """Rewrites raw arguments before validation (for compatibility with older argument shapes)."""
    execution_mode: ToolExecutionMode | None = None
    """``"sequential"`` forces any batch containing this tool to run one call at a time."""


# --- agent events ----------------------------------------------------------------------


class AgentStartEvent(WireModel):
    type: Literal["agent_start"] = "agent_start"


class AgentEndEvent(WireModel):
    type: Literal["agent_end"] = "agent_end"
    messages: list[AgentMessage]


class TurnStartEvent(WireModel):
    type: Literal["turn_start"] = "turn_start"


class TurnEndEvent(WireModel):
    type: Literal["turn_end"] = "turn_end"
    message: AgentMessage
    tool_results: list[ToolResultMessage]


class MessageStartEvent(WireModel):
    type: Literal["message_start"] = "message_start"
    message: AgentMessage


class MessageUpdateEvent(WireModel):
    type: Literal["message_update"] = "message_update"
    message: AgentMessage
    assistant_message_event: AssistantMessageEvent


class MessageEndEvent(WireModel):
    type: Literal["message_end"] = "message_end"
    message: AgentMessage


class ToolExecutionStartEvent(WireModel):
    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: Any


class ToolExecutionUpdateEvent(WireModel):
    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: AgentToolResult


class ToolExecutionEndEvent(WireModel):
    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)


# --- contexts handed to hooks ----------------------------------------------------------


@dataclass
class AgentContext:
    """What the low-level loop works on."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] | None = None


@dataclass
class BeforeToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    """The raw tool call block."""
    args: Any
    """The validated (converted) arguments."""
    context: AgentContext


@dataclass
class BeforeToolCallResult:
    block: bool = False
    reason: str | None = None
    terminate: bool | None = None


@dataclass
class AfterToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    """The executed result before any override."""
    is_error: bool
    context: AgentContext


@dataclass
class AfterToolCallResult:
    """Overrides for a tool result; ``None`` fields keep the executed value."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


@dataclass
class TurnContext:
    """Handed to ``should_stop_after_turn`` and ``prepare_next_turn`` (Pi's ShouldStopAfterTurnContext)."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    """The context after the turn's assistant message and tool results were appended."""
    new_messages: list[AgentMessage]
    """What the loop returns if it exits here (continuations leave out earlier messages)."""


@dataclass
class TurnUpdate:
    """Replacement state for the next model request (Pi's ``AgentLoopTurnUpdate``); ``None`` keeps."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: ModelThinkingLevel | None = None


ConvertToLlm: TypeAlias = Callable[[list[AgentMessage]], list[Message] | Awaitable[list[Message]]]
TransformContext: TypeAlias = Callable[
    [list[AgentMessage], AbortSignal | None], Awaitable[list[AgentMessage]]
]
GetApiKey: TypeAlias = Callable[[str], Awaitable[str | None] | str | None]
BeforeToolCall: TypeAlias = Callable[
    [BeforeToolCallContext, AbortSignal | None],
    Awaitable[BeforeToolCallResult | None] | BeforeToolCallResult | None,
]
AfterToolCall: TypeAlias = Callable[
    [AfterToolCallContext, AbortSignal | None],
    Awaitable[AfterToolCallResult | None] | AfterToolCallResult | None,
]
ShouldStopAfterTurn: TypeAlias = Callable[[TurnContext], bool | Awaitable[bool]]
PrepareNextTurn: TypeAlias = Callable[[TurnContext], Awaitable[TurnUpdate | None] | TurnUpdate | None]
MessageSource: TypeAlias = Callable[[], list[AgentMessage] | Awaitable[list[AgentMessage]]]


@dataclass(kw_only=True)
class AgentLoopConfig(StreamOptions):
    """Configuration of one low-level loop run; also the stream options of each model request."""

    model: Model
    convert_to_llm: ConvertToLlm
    transform_context: TransformContext | None = None
    get_api_key: GetApiKey | None = None
    should_stop_after_turn: ShouldStopAfterTurn | None = None
    prepare_next_turn: PrepareNextTurn | None = None
    get_steering_messages: MessageSource | None = None
    get_follow_up_messages: MessageSource | None = None
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Keep user, assistant and tool-result messages; drop custom roles."""
    return [m for m in messages if m.role in ("user", "assistant", "toolResult")]  # type: ignore[misc]
