"""Token estimates as Pi makes them: four characters a token (JavaScript's), the provider's usage first."""

from __future__ import annotations

from agentls.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UserMessage,
)
from agentls.ai.types import CustomMessage
from agentls.session.compaction.tokens import (
    estimate_context_tokens,
    estimate_tokens,
    js_length,
    should_compact,
)
from agentls.session.messages import bash_execution_message, compaction_summary_message

from tests.session.compaction.helpers import answer, result, user


def test_text_is_four_characters_a_token_rounded_up() -> None:
    assert estimate_tokens(UserMessage(content="abcd" * 10)) == 10
    assert estimate_tokens(UserMessage(content="abcde")) == 2
    assert estimate_tokens(result(7)) == 7


def test_characters_are_counted_as_javascript_counts_them() -> None:
    assert js_length("é") == 1 and js_length("😀") == 2  # beyond U+FFFF: two UTF-16 units
    assert estimate_tokens(UserMessage(content="😀😀")) == 1


def test_an_image_counts_for_1200_tokens() -> None:
    image = ImageContent(data="AAAA", mime_type="image/png")
    assert estimate_tokens(UserMessage(content=[TextContent(text="abcd"), image])) == 1 + 1200


def test_an_assistant_message_counts_text_thinking_and_tool_calls() -> None:
    message = AssistantMessage(
        content=[
            TextContent(text="a" * 8),
            ThinkingContent(thinking="t" * 8),
            ToolCall(id="c1", name="read", arguments={"path": "a.txt"}),
        ]
    )
    # the call counts its name and JSON.stringify(arguments): read + {"path":"a.txt"}
    assert estimate_tokens(message) == -(-(8 + 8 + 4 + len('{"path":"a.txt"}')) // 4)


def test_the_coding_roles_count_what_the_model_reads() -> None:
    bash = bash_execution_message("ls", output="a" * 10, exit_code=0, cancelled=False, truncated=False)
    assert estimate_tokens(bash) == 3  # command and output: 12 characters
    assert estimate_tokens(compaction_summary_message("s" * 40, 100)) == 10
    wire = {"role": "compactionSummary", "summary": "s" * 40, "tokensBefore": 1}
    read_back = CustomMessage.model_validate(wire)
    assert estimate_tokens(read_back) == 10
    assert estimate_tokens(CustomMessage(role="bookmark", content="ignored")) == 0


def test_the_context_is_the_last_valid_usage_plus_an_estimate_of_what_follows() -> None:
    messages = [user(5), answer(5, usage=1000), result(10), answer(3, usage=0), user(2)]
    estimate = estimate_context_tokens(messages)
    # the answer that reports no tokens does not count as usage: the estimate starts after the first one
    assert (estimate.usage_tokens, estimate.last_usage_index) == (1000, 1)
    assert estimate.trailing_tokens == 10 + 3 + 2 and estimate.tokens == 1015


def test_failed_and_aborted_responses_do_not_give_the_context_size() -> None:
    messages = [user(5), answer(1, usage=500), answer(1, usage=9000, stop_reason="error")]
    assert estimate_context_tokens(messages).tokens == 500 + 1
    messages[-1] = answer(1, usage=9000, stop_reason="aborted")
    assert estimate_context_tokens(messages).tokens == 500 + 1


def test_without_any_usage_everything_is_estimated() -> None:
    estimate = estimate_context_tokens([user(5), answer(5), result(10)])
    assert (estimate.tokens, estimate.usage_tokens, estimate.last_usage_index) == (20, 0, None)


def test_usage_without_a_total_is_the_sum_of_its_parts() -> None:
    message = AssistantMessage(usage=Usage(input=10, output=5, cache_read=100, cache_write=1))
    assert estimate_context_tokens([message]).tokens == 116


def test_compaction_starts_when_less_than_the_reserve_is_free() -> None:
    assert not should_compact(1000, 2000, 1000)
    assert should_compact(1001, 2000, 1000)
