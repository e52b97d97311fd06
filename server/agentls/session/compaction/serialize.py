"""The conversation as plain text for the summary request (Pi 0.85.0's ``serializeConversation``).

Sent as messages, the conversation would be continued rather than summarised; as one
block of ``[User]: ...`` / ``[Assistant]: ...`` lines it is material to read. Tool
results, the bulk of a coding session, are cut to 2000 characters: the summary needs
what happened, not every line of every file.
"""

from __future__ import annotations

from agentls.ai.types import AssistantMessage, Message, TextContent, ThinkingContent, ToolCall, UserMessage
from agentls.ai.wire import dumps_compact, js_key_order

TOOL_RESULT_MAX_CHARS = 2000


def content_text(content: str | list, separator: str = "\n") -> str:
    """pi-ai's ``contentText``: the text blocks of a content, joined."""
    if isinstance(content, str):
        return content
    return separator.join(block.text for block in content if isinstance(block, TextContent))


def _truncate(text: str, max_chars: int) -> str:
    # Python counts code points where JavaScript counts UTF-16 units: in text with characters
    # beyond U+FFFF the cut comes a little later than Pi's.
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n\n[... {len(text) - max_chars} more characters truncated]"


def _js_items(arguments: dict) -> list[tuple[str, object]]:
    """``Object.entries(arguments)``: integer-like keys first, as JavaScript orders them."""
    return [(key, arguments[key]) for key in js_key_order(list(arguments))]


def _assistant_parts(message: AssistantMessage) -> list[str]:
    thinking = [block.thinking for block in message.content if isinstance(block, ThinkingContent)]
    calls = []
    for block in message.content:
        if isinstance(block, ToolCall):
            arguments = block.arguments if isinstance(block.arguments, dict) else {}
            rendered = ", ".join(f"{key}={dumps_compact(value)}" for key, value in _js_items(arguments))
            calls.append(f"{block.name}({rendered})")
    parts = []
    if thinking:
        parts.append("[Assistant thinking]: " + "\n".join(thinking))
    if any(isinstance(block, TextContent) for block in message.content):
        parts.append("[Assistant]: " + content_text(message.content))  # type: ignore[arg-type]
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))
    return parts


def serialize_conversation(messages: list[Message]) -> str:
    """``messages`` (already converted for the model) as the text the summariser reads."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = content_text(message.content, "")
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            parts.extend(_assistant_parts(message))
        else:
            text = content_text(message.content, "")
            if text:
                parts.append(f"[Tool result]: {_truncate(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)
