"""Context-overflow errors as pi-ai recognises them (Anthropic and OpenAI-compatible servers)."""

from __future__ import annotations

import pytest
from agentls.ai import AssistantMessage, Usage
from agentls.session.compaction.overflow import is_context_overflow, is_recoverable_length


def failed(error: str) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=error)


@pytest.mark.parametrize(
    "error",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",  # Anthropic
        '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
        "Your input exceeds the context window of this model",  # OpenAI
        "Requested token count exceeds the model's maximum context length of 131072 tokens",  # LiteLLM
        "Input length (265330) exceeds model's maximum context length (262144).",  # vLLM-style
        "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens",
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "tokens to keep from the initial prompt is greater than the context length",  # LM Studio
        "prompt too long; exceeded max context length by 100 tokens",  # Ollama
        "400 status code (no body)",  # Cerebras
    ],
)
def test_overflow_errors_are_recognised(error: str) -> None:
    assert is_context_overflow(failed(error))


@pytest.mark.parametrize(
    "error",
    [
        "ThrottlingException: Too many tokens, please wait before trying again. (rate limit)",
        "Throttling error: Too many tokens, please wait",
        "429 Too Many Requests: too many tokens per minute",
        "Overloaded",
        "invalid x-api-key",
    ],
)
def test_other_errors_are_not_overflows(error: str) -> None:
    assert not is_context_overflow(failed(error))


def test_a_completed_response_can_overflow_silently() -> None:
    accepted = AssistantMessage(stop_reason="stop", usage=Usage(input=150_000, cache_read=60_000))
    assert is_context_overflow(accepted, 200_000) and not is_context_overflow(accepted)
    assert not is_context_overflow(accepted, 300_000)


def test_a_length_stop_with_no_room_to_answer_is_an_overflow() -> None:
    cut = AssistantMessage(stop_reason="length", usage=Usage(input=199_000, output=0))
    assert is_context_overflow(cut, 200_000)
    assert not is_context_overflow(cut.model_copy(update={"usage": Usage(input=100_000)}), 200_000)


def test_a_length_stop_below_the_output_limit_is_recoverable() -> None:
    assert is_recoverable_length(AssistantMessage(stop_reason="length", usage=Usage(output=100)), 16384)
    assert not is_recoverable_length(AssistantMessage(stop_reason="length", usage=Usage(output=16384)), 16384)
    assert not is_recoverable_length(AssistantMessage(stop_reason="stop", usage=Usage(output=1)), 16384)
    assert not is_recoverable_length(AssistantMessage(stop_reason="length"), 0)
