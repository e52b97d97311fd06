"""Output and thinking budgets of a request (pi-ai's ``simple-options.js`` and ``utils/estimate.js``).

A request asks for at most the model's output limit, less when the context would
leave no room for it. A thinking level becomes a token budget for the models that
think by budget, kept below the output limit so that an answer still fits, or is
mapped to the model's own name for it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import accumulate, islice
from operator import attrgetter

from agentls.ai.types import (
    AssistantMessage,
    Context,
    Message,
    Model,
    TextContent,
    ThinkingBudgets,
    ThinkingContent,
    Tool,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agentls.ai.wire import dumps_compact

CONTEXT_SAFETY_TOKENS = 4096
MIN_ANSWER_TOKENS = 1024
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_CHARS_PER_TOKEN = 4
_IMAGE_CHARS = 4800


# --- context size ---------------------------------------------------------------------------


def _usage_tokens(usage: Usage) -> int:
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _content_chars(content: str | list) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(len(block.text) if isinstance(block, TextContent) else _IMAGE_CHARS for block in content)


def estimate_message_tokens(message: Message) -> int:
    if isinstance(message, UserMessage | ToolResultMessage):
        return math.ceil(_content_chars(message.content) / _CHARS_PER_TOKEN)
    chars = 0
    for block in message.content:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ThinkingContent):
            chars += len(block.thinking)
        else:
            chars += len(block.name) + len(dumps_compact(block.arguments))
    return math.ceil(chars / _CHARS_PER_TOKEN)


def _tools_tokens(tools: list[Tool] | None) -> int:
    if not tools:
        return 0
    return math.ceil(len(dumps_compact([tool.to_wire() for tool in tools])) / _CHARS_PER_TOKEN)


def _last_usage(messages: list[Message]) -> tuple[int, int] | None:
    """``(index, tokens)`` of the last assistant message with a usable usage that is not older than
    any message before it (pi-ai's forward scan), found from the end.

    This runs for every request, over the whole transcript: the newest candidate is checked against
    the messages before it in one C-level ``max``; the prefix maxima are computed only when it is
    older than one of them (a clock that went back).
    """
    before: list[float] | None = None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not (
            isinstance(message, AssistantMessage)
            and message.stop_reason not in ("aborted", "error")
            and (tokens := _usage_tokens(message.usage)) > 0
        ):
            continue
        if before is None:
            if message.timestamp >= max(map(_timestamp, islice(messages, index)), default=-math.inf):
                return index, tokens
            before = [-math.inf, *accumulate(map(_timestamp, messages), max)]
        elif message.timestamp >= before[index]:
            return index, tokens
    return None


_timestamp = attrgetter("timestamp")


def estimate_context_tokens(context: Context) -> int:
    """The prompt's size: the last usable response's reported usage plus estimates of what came after.

    Without such a response, every message, the system prompt and the tools are estimated.
    """
    messages = context.messages
    last_usage = _last_usage(messages)
    if last_usage is not None:
        index, tokens = last_usage
        later = messages[index + 1 :]
        added = {
            name for m in later if isinstance(m, ToolResultMessage) for name in (m.added_tool_names or [])
        }
        tools = [t for t in context.tools or [] if t.name in added]
        return tokens + sum(estimate_message_tokens(m) for m in later) + _tools_tokens(tools)
    prefix = math.ceil(len(context.system_prompt) / _CHARS_PER_TOKEN) if context.system_prompt else 0
    return sum(estimate_message_tokens(m) for m in messages) + prefix + _tools_tokens(context.tools)


def clamp_max_tokens_to_context(model: Model, context: Context, max_tokens: int) -> int:
    """``max_tokens``, lowered so that prompt and answer fit in the context window (at least 1)."""
    if model.context_window <= 0:
        return max(1, max_tokens)
    available = model.context_window - estimate_context_tokens(context) - CONTEXT_SAFETY_TOKENS
    return min(max_tokens, max(1, available))


# --- thinking -------------------------------------------------------------------------------


def thinking_budget_for_level(level: str, budgets: ThinkingBudgets | None) -> int:
    clamped = "high" if level in ("xhigh", "max") else level
    custom = getattr(budgets, clamped, None) if budgets is not None else None
    return custom if custom is not None else DEFAULT_THINKING_BUDGETS[clamped]


def clamp_thinking_budget_to_answer_room(budget: int, ceiling: int) -> int:
    return min(budget, max(0, ceiling - MIN_ANSWER_TOKENS))


def adjust_max_tokens_for_thinking(
    base_max_tokens: int | None, model_max_tokens: int, level: str, budgets: ThinkingBudgets | None
) -> tuple[int, int]:
    """``(max_tokens, thinking_budget)`` when thinking and answer share the output limit."""
    budget = thinking_budget_for_level(level, budgets)
    if base_max_tokens is None:
        max_tokens = model_max_tokens
    else:
        max_tokens = min(base_max_tokens + budget, model_max_tokens)
    if max_tokens <= budget:
        budget = clamp_thinking_budget_to_answer_room(budget, max_tokens)
    return max_tokens, budget


def always_thinks(level_map: Mapping[str, str | None]) -> bool:
    """A model whose ``off`` level maps to ``null`` cannot be told not to think."""
    return "off" in level_map and level_map["off"] is None
