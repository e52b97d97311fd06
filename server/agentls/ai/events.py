"""The assistant message event stream's events (pi-ai's ``AssistantMessageEvent``).

A provider announces a response with ``start`` (carrying the partial message),
then each content block as ``*_start`` / ``*_delta`` / ``*_end`` by
``content_index``, and ends with exactly one ``done`` or ``error`` carrying the
final message. Every event but the last carries the partial message so far.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from agentls.ai.types import AssistantMessage, ToolCall, WireModel


class StartEvent(WireModel):
    type: Literal["start"] = "start"
    partial: AssistantMessage


class TextStartEvent(WireModel):
    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage


class TextDeltaEvent(WireModel):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(WireModel):
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ThinkingStartEvent(WireModel):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage


class ThinkingDeltaEvent(WireModel):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(WireModel):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ToolCallStartEvent(WireModel):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


class ToolCallDeltaEvent(WireModel):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    """A piece of the tool call's arguments as JSON text."""
    partial: AssistantMessage


class ToolCallEndEvent(WireModel):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


class DoneEvent(WireModel):
    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse", "deferred"]
    message: AssistantMessage


class ErrorEvent(WireModel):
    type: Literal["error"] = "error"
    reason: Literal["aborted", "error"]
    error: AssistantMessage


ContentEvent: TypeAlias = (
    TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
)
AssistantMessageEvent: TypeAlias = StartEvent | ContentEvent | DoneEvent | ErrorEvent
