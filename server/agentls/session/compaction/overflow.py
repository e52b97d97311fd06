"""Whether a response failed because its context was too large: pi-ai 0.85.0's ``utils/overflow.js``.

Providers say so in their error text, each in its own words; the patterns are pi-ai's,
with its notes on who says what. An OpenAI-compatible server passes on the words of
whatever runs behind it (a proxy in front of Gemini or Bedrock included), so the
whole list applies to it. Some servers do not fail at all: they accept the oversized
input and report it in the usage, or cut it and stop at once for lack of room.
"""

from __future__ import annotations

import re

from agentls.ai.types import AssistantMessage

OVERFLOW_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",  # Anthropic token overflow
        r"request_too_large",  # Anthropic request byte-size overflow (HTTP 413)
        r"input is too long for requested model",  # Amazon Bedrock
        r"exceeds the context window",  # OpenAI (Completions & Responses API)
        # OpenAI-compatible proxies (LiteLLM)
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"input token count.*exceeds the maximum",  # Google (Gemini)
        r"maximum prompt length is \d+",  # xAI (Grok)
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter (most backends)
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",  # OpenRouter/Poolside
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",  # Together AI
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp server
        r"greater than the context length",  # LM Studio
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi For Coding
        r"too large for model with \d+ maximum context length",  # Mistral
        r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",  # DS4 server
        r"model_context_window_exceeded",  # z.ai finish_reason surfaced as error text
        r"prompt too long; exceeded (?:max )?context length",  # Ollama
        r"range of input length should be",  # DashScope / Qwen
        r"context[_ ]length[_ ]exceeded",  # generic
        r"too many tokens",  # generic
        r"token limit exceeded",  # generic
        r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras: 400/413 with no body
    )
)

NON_OVERFLOW_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^(Throttling error|Service unavailable):",  # AWS Bedrock's throttling ("Too many tokens, ...")
        r"rate limit",
        r"too many requests",
    )
)
"""Errors that match an overflow pattern but are not one (a throttled request is not too large)."""


def is_context_overflow(message: AssistantMessage, context_window: int = 0) -> bool:
    """pi-ai's ``isContextOverflow``: an overflow error, or a silent overflow the usage shows."""
    error = message.error_message
    if (
        message.stop_reason == "error"
        and error
        and not any(p.search(error) for p in NON_OVERFLOW_PATTERNS)
        and any(p.search(error) for p in OVERFLOW_PATTERNS)
    ):
        return True
    if context_window:
        inputs = message.usage.input + message.usage.cache_read
        if message.stop_reason == "stop" and inputs > context_window:  # accepted, as z.ai does
            return True
        if message.stop_reason == "length" and message.usage.output == 0 and inputs >= context_window * 0.99:
            return True  # cut to fit, with no room left to answer (Xiaomi MiMo)
    return False


def is_recoverable_length(message: AssistantMessage, desired_max_output: int) -> bool:
    """pi-ai's ``isRecoverableLength``: a length stop below the output limit (the context ran out)."""
    if message.stop_reason != "length":
        return False
    return desired_max_output > 0 and message.usage.output < desired_max_output
