"""Messages, content blocks, usage, models, tools and stream options.

The classes keep Pi's JSON shapes: attribute names are snake_case in Python and
camelCase on the wire (``tool_call_id`` <-> ``toolCallId``); :func:`agentls.ai.wire.to_wire`
does the conversion. Optional fields that are ``None`` are left out of the wire
form, as JavaScript leaves out ``undefined``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.alias_generators import to_camel

# Re-exported: the model layer's types name them, their definition is the leaf module's.
from agentls.thinking_levels import THINKING_LEVELS as THINKING_LEVELS
from agentls.thinking_levels import ModelThinkingLevel as ModelThinkingLevel
from agentls.thinking_levels import ThinkingLevel

if TYPE_CHECKING:
    from agentls.ai.abort import AbortSignal

StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]


def now_ms() -> int:
    """``Date.now()``: milliseconds since the epoch."""
    return int(time.time() * 1000)


class WireModel(BaseModel):
    """Base of every wire model: camelCase aliases, construction by either name.

    A field that is ``None`` is left out of the wire form unless it was set
    explicitly: unset is JavaScript's ``undefined`` (absent), set to ``None`` is
    ``null``. Code that copies a field from one model to another keeps that
    distinction with :meth:`defined`.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    @model_serializer(mode="wrap")
    def _leave_out_undefined(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            fields_set = self.model_fields_set
            values = self.__dict__
            by_alias = bool(info.by_alias)
            for name, alias in _none_default_fields(type(self)):
                if name not in fields_set and values.get(name) is None:
                    data.pop(alias if by_alias else name, None)
        return data

    def defined(self, name: str) -> bool:
        """Whether field ``name`` has a value on the wire (``null`` included)."""
        return name in self.model_fields_set or getattr(self, name) is not None


@functools.cache
def _none_default_fields(cls: type[WireModel]) -> tuple[tuple[str, str], ...]:
    """``(name, wire name)`` of the fields whose default is ``None``: the only ones that can be
    ``None`` without having been set (serialising every event walked every field)."""
    return tuple(
        (name, info.alias or name)
        for name, info in cls.model_fields.items()
        if not info.is_required() and info.default is None and info.default_factory is None
    )


# --- content blocks --------------------------------------------------------------------


class TextContent(WireModel):
    type: Literal["text"] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(WireModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(WireModel):
    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str


class ToolCall(WireModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: Any = Field(default_factory=dict)
    """Normally an object; kept as the model sent it (validation reports anything else)."""
    thought_signature: str | None = None


UserContent: TypeAlias = Annotated[TextContent | ImageContent, Field(discriminator="type")]
AssistantContent: TypeAlias = Annotated[TextContent | ThinkingContent | ToolCall, Field(discriminator="type")]


# --- usage -----------------------------------------------------------------------------


class UsageCost(WireModel):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(WireModel):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: UsageCost = Field(default_factory=UsageCost)


def empty_usage() -> Usage:
    return Usage()


# --- messages --------------------------------------------------------------------------


class UserMessage(WireModel):
    role: Literal["user"] = "user"
    content: str | list[UserContent]
    timestamp: int = Field(default_factory=now_ms)


class AssistantMessage(WireModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContent] = Field(default_factory=list)
    api: str = "unknown"
    provider: str = "unknown"
    model: str = "unknown"
    usage: Usage = Field(default_factory=empty_usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    response_id: str | None = None
    timestamp: int = Field(default_factory=now_ms)


class ToolResultMessage(WireModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[UserContent] = Field(default_factory=list)
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    is_error: bool = False
    timestamp: int = Field(default_factory=now_ms)


class CustomMessage(WireModel):
    """A message with an application-defined role (Pi's ``CustomAgentMessages``).

    The kernel carries it in the transcript; ``convert_to_llm`` decides what the
    model sees of it (the default drops it). Any extra fields are kept.
    """

    role: str
    content: Any = None
    timestamp: int | None = None


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage

_MESSAGE_CLASSES: dict[str, type[WireModel]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
}


def parse_message(data: dict[str, Any] | AgentMessage) -> AgentMessage:
    """Build a message from its wire shape (camelCase keys), choosing the class by ``role``."""
    if isinstance(data, BaseModel):
        return data  # type: ignore[return-value]
    if not isinstance(data, dict) or not isinstance(data.get("role"), str):
        raise ValueError(f"a message must be an object with a string 'role', got {data!r}")
    cls = _MESSAGE_CLASSES.get(data["role"], CustomMessage)
    return cls.model_validate(data)  # type: ignore[return-value]


def user_message(text: str, images: list[ImageContent] | None = None) -> UserMessage:
    """``{"role": "user", "content": [{"type": "text", "text": text}, ...images]}``."""
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    content.extend(images or [])
    return UserMessage(content=content)


# --- models ----------------------------------------------------------------------------


class ModelCost(WireModel):
    """Prices in dollars per million tokens."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0


class Model(WireModel):
    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: ["text"])
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 0
    max_tokens: int = 0
    headers: dict[str, str] | None = None
    thinking_level_map: dict[str, str | None] | None = None
    """What each thinking level is called on the provider's wire; ``null`` for a level the model
    lacks (pi-ai's ``thinkingLevelMap``). Without an entry, ``xhigh`` and ``max`` are lacking and
    the others keep their names."""


# --- tools and context -----------------------------------------------------------------


@dataclass(kw_only=True)
class Tool:
    """A tool as the model sees it: name, description and a JSON schema for the arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass
class Context:
    """What one model request sees."""

    system_prompt: str | None = None
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] | None = None


# --- stream options --------------------------------------------------------------------


@dataclass(kw_only=True)
class ThinkingBudgets:
    minimal: int | None = None
    low: int | None = None
    medium: int | None = None
    high: int | None = None


@dataclass(kw_only=True)
class StreamOptions:
    """Options of one model request (pi-ai's ``SimpleStreamOptions``)."""

    signal: AbortSignal | None = None
    api_key: str | None = None
    reasoning: ThinkingLevel | None = None
    thinking_budgets: ThinkingBudgets | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: Literal["auto", "none"] | None = None
    session_id: str | None = None
    cache_retention: Literal["none", "short", "long"] | None = None
    transport: str | None = None
    headers: dict[str, str] | None = None
    timeout_ms: int | None = None
    max_retries: int | None = None
    max_retry_delay_ms: int | None = None
    on_payload: Callable[[Any, Model], Any] | None = None
    on_response: Callable[[dict[str, Any], Model], Awaitable[None] | None] | None = None
    metadata: dict[str, Any] | None = None
    coalesce_deltas: bool = False
    """agentls's: deltas of one block that arrive together are pushed as one event (HTTP providers)."""
