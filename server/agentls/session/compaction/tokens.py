"""Token counts for compaction: a port of the token half of Pi 0.85.0's ``compaction.js``.

Pi never tokenises. It takes the provider's own count where one exists (the usage of
the last valid assistant response) and estimates the rest at four characters a
token, which overestimates and so compacts a little early rather than too late.
Characters are counted as JavaScript counts them (UTF-16 code units), so the
estimates, and therefore the cut points, are Pi's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from agentls.ai.types import AgentMessage, AssistantMessage, Usage
from agentls.ai.wire import dumps_compact

ESTIMATED_IMAGE_CHARS = 4800
"""What an image counts for, in characters (1200 tokens)."""


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (a character beyond U+FFFF counts twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _block_field(block: Any, name: str) -> Any:
    """A field of a content block, which is a model or (in a custom message) a plain dict."""
    return block.get(name) if isinstance(block, dict) else getattr(block, name, None)


def _content_chars(content: Any) -> int:
    """Pi's ``estimateTextAndImageContentChars``: text as its length, each image as 4800."""
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content or []:
        kind = _block_field(block, "type")
        if kind == "text":
            chars += js_length(_block_field(block, "text") or "")
        elif kind == "image":
            chars += ESTIMATED_IMAGE_CHARS
    return chars


def _text_field(message: AgentMessage, name: str) -> str:
    """A text field of a coding-role message (a typed one, or one read back as a plain custom message)."""
    value = getattr(message, name, None)
    return value if isinstance(value, str) else ""


def estimate_tokens(message: AgentMessage) -> int:
    """Pi's ``estimateTokens``: a message's size at four characters a token, rounded up."""
    role = message.role
    if role == "assistant":
        chars = 0
        for block in message.content:  # type: ignore[union-attr]
            if block.type == "text":
                chars += js_length(block.text)
            elif block.type == "thinking":
                chars += js_length(block.thinking)
            else:
                chars += js_length(block.name) + js_length(dumps_compact(block.arguments))
    elif role in ("user", "toolResult", "custom"):
        chars = _content_chars(message.content)
    elif role == "bashExecution":
        chars = js_length(_text_field(message, "command")) + js_length(_text_field(message, "output"))
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_length(_text_field(message, "summary"))
    else:
        return 0
    return math.ceil(chars / 4)


def estimate_messages_tokens(messages: list[AgentMessage]) -> int:
    """The estimates of ``messages`` added up (Pi's ``estimateMessagesTokens``)."""
    return sum(estimate_tokens(message) for message in messages)


def context_tokens(usage: Usage) -> int:
    """Pi's ``calculateContextTokens``: the provider's total, or the sum of its parts."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def assistant_usage(message: AgentMessage) -> Usage | None:
    """The usage of a response that can be trusted for the context size (Pi's ``getAssistantUsage``).

    Aborted and failed responses, and responses that report no tokens, have none.
    """
    if (
        isinstance(message, AssistantMessage)
        and message.stop_reason not in ("aborted", "error")
        and context_tokens(message.usage) > 0
    ):
        return message.usage
    return None


@dataclass(frozen=True)
class ContextEstimate:
    """What :func:`estimate_context_tokens` found."""

    tokens: int
    usage_tokens: int
    """The provider's count from the last valid response (0 without one)."""
    trailing_tokens: int
    """The estimate of the messages after that response."""
    last_usage_index: int | None
    """The index of that response in the messages."""


def estimate_context_tokens(messages: list[AgentMessage]) -> ContextEstimate:
    """Pi's ``estimateContextTokens``: the last valid usage plus the estimate of what came after it."""
    for index in range(len(messages) - 1, -1, -1):
        usage = assistant_usage(messages[index])
        if usage is not None:
            counted = context_tokens(usage)
            trailing = estimate_messages_tokens(messages[index + 1 :])
            return ContextEstimate(counted + trailing, counted, trailing, index)
    estimated = estimate_messages_tokens(messages)
    return ContextEstimate(estimated, 0, estimated, None)


def should_compact(tokens: int, context_window: int, reserve_tokens: int) -> bool:
    """Pi's ``shouldCompact`` (for enabled settings): less than ``reserve_tokens`` of the window is free."""
    return tokens > context_window - reserve_tokens
