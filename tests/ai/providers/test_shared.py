"""What both providers share: retry policy, message transformation and output budgets."""

from __future__ import annotations

import email.utils
import time

import pytest
from agentls.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    clamp_thinking_level,
    user_message,
)
from agentls.ai.providers.budgets import (
    adjust_max_tokens_for_thinking,
    clamp_max_tokens_to_context,
    estimate_context_tokens,
)
from agentls.ai.providers.retry import (
    RetryDelayTooLong,
    RetryPolicy,
    Timeouts,
    request_settings,
    retry_after_ms,
    status_failure,
)
from agentls.ai.providers.transform import TOOL_IMAGE_PLACEHOLDER, sanitize_surrogates, transform_messages
from agentls.ai.providers.wire_forms import WireForms

MODEL = Model(
    id="m",
    api="anthropic-messages",
    provider="anthropic",
    reasoning=True,
    context_window=10_000,
    max_tokens=4000,
)


# --- retries ---------------------------------------------------------------------------------


def test_retry_after_in_milliseconds_seconds_or_as_a_date() -> None:
    assert retry_after_ms({"retry-after-ms": "250"}) == 250
    assert retry_after_ms({"retry-after": "2"}) == 2000
    assert retry_after_ms({"retry-after": "0.5", "retry-after-ms": "junk"}) == 500
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28_000 < retry_after_ms({"retry-after": date}) <= 30_000  # type: ignore[operator]
    assert retry_after_ms({"retry-after": "soon"}) is None
    assert retry_after_ms({}) is None


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(base_delay_ms=1000, max_delay_ms=3000)
    for index, full in ((0, 1.0), (1, 2.0), (2, 3.0), (5, 3.0)):
        delay = policy.delay_seconds(index, None)
        assert 0.75 * full <= delay <= full
    assert policy.delay_seconds(0, 2500) == 2.5
    with pytest.raises(RetryDelayTooLong, match="asked to retry in 4 s"):
        policy.delay_seconds(0, 4000)
    assert RetryPolicy(max_delay_ms=0).delay_seconds(0, 10**7) == 10**4, "0: no limit"


@pytest.mark.parametrize(
    ("status", "headers", "retryable", "summary"),
    [
        (429, {}, True, "429 rate limited"),
        (529, {}, True, "529 overloaded"),
        (503, {}, True, "503 server error"),
        (408, {}, True, "408 request timeout"),
        (400, {}, False, "400 error"),
        (400, {"x-should-retry": "true"}, True, "400 error"),
        (500, {"x-should-retry": "false"}, False, "500 server error"),
    ],
)
def test_which_statuses_are_retried(
    status: int, headers: dict[str, str], retryable: bool, summary: str
) -> None:
    failure = status_failure(status, headers, "msg")
    assert (failure.retryable, failure.summary, failure.message) == (retryable, summary, "msg")


def test_the_options_of_a_request_override_the_providers_settings() -> None:
    policy, timeouts = RetryPolicy(max_retries=3), Timeouts(connect_ms=100, idle_ms=200)
    assert request_settings(policy, timeouts, None) == (policy, timeouts)
    options = StreamOptions(max_retries=0, max_retry_delay_ms=10, timeout_ms=50)
    assert request_settings(policy, timeouts, options) == (
        RetryPolicy(max_retries=0, max_delay_ms=10),
        Timeouts(connect_ms=100, idle_ms=50),
    )


# --- the conversation a model sees -------------------------------------------------------------


def assistant(*content: object, model: str = "m", stop: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(
        api="anthropic-messages", provider="anthropic", model=model, content=list(content), stop_reason=stop
    )  # type: ignore[arg-type]


def test_thinking_of_another_model_becomes_text_and_its_signatures_go() -> None:
    messages = [
        assistant(
            ThinkingContent(thinking="mine", thinking_signature="s"),
            ThinkingContent(thinking="", thinking_signature="encrypted"),
            ThinkingContent(thinking="secret", thinking_signature="x", redacted=True),
            TextContent(text="hi", text_signature="t"),
            stop="stop",
        ),
        assistant(
            ThinkingContent(thinking="theirs", thinking_signature="s"),
            ThinkingContent(thinking="  "),
            ThinkingContent(thinking="secret", thinking_signature="x", redacted=True),
            TextContent(text="hello", text_signature="t"),
            ToolCall(id="a/b", name="read", arguments={}, thought_signature="sig"),
            model="other",
        ),
        ToolResultMessage(tool_call_id="a/b", tool_name="read", content=[TextContent(text="r")]),
    ]
    same, other, result = transform_messages(messages, MODEL, lambda i: i.replace("/", "_"))
    assert same == messages[0]
    assert other.content == [  # type: ignore[union-attr]
        TextContent(text="theirs"),
        TextContent(text="hello"),
        ToolCall(id="a_b", name="read", arguments={}),
    ]
    assert result.tool_call_id == "a_b"  # type: ignore[union-attr]


def test_what_messages_became_is_kept_for_the_next_request_and_renamed_ids_still_follow() -> None:
    call = ToolCall(id="a/b", name="read", arguments={})
    messages: list = [
        assistant(TextContent(text="own"), stop="stop"),
        assistant(TextContent(text="theirs"), call, model="other"),
        ToolResultMessage(tool_call_id="a/b", tool_name="read", content=[TextContent(text="r")]),
    ]
    forms = WireForms()
    first = transform_messages(messages, MODEL, lambda i: i.replace("/", "_"), forms)
    messages.append(UserMessage(content="next"))
    second = transform_messages(messages, MODEL, lambda i: i.replace("/", "_"), forms)
    assert first[0] is messages[0], "the model's own message is not copied"
    assert all(a is b for a, b in zip(first, second[:3], strict=True)), "nothing converted twice"
    assert second[1].content[1].id == second[2].tool_call_id == "a_b"  # type: ignore[union-attr]
    other_model = MODEL.model_copy(update={"id": "third"})
    third = transform_messages(messages, other_model, lambda i: i.replace("/", "_"), forms)
    assert third[0] is not messages[0] and third[0].content == [TextContent(text="own")]


def _underscores(call_id: str) -> str:
    return call_id.replace("/", "_")


def _timeless(messages: list) -> list:
    """The messages with their timestamps cleared: a synthesized result is stamped when it is made."""
    return [m.model_copy(update={"timestamp": 0}) for m in messages]


def test_a_request_that_extends_the_last_one_converts_only_its_new_messages_with_the_same_result() -> None:
    messages: list = [
        user_message("go"),
        assistant(TextContent(text="theirs"), ToolCall(id="a/1", name="read", arguments={}), model="other"),
        ToolResultMessage(tool_call_id="a/1", tool_name="read", content=[TextContent(text="r")]),
        assistant(ToolCall(id="c1", name="read", arguments={}), ToolCall(id="c2", name="read", arguments={})),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="ok")]),
    ]
    forms = WireForms()
    first = transform_messages(messages, MODEL, _underscores, forms)
    assert [getattr(m, "tool_call_id", None) for m in first[-2:]] == ["c1", "c2"]  # c2 answered for now
    messages += [
        user_message("next"),
        ToolResultMessage(tool_call_id="a/1", tool_name="read", content=[TextContent(text="late")]),
    ]
    resumed = transform_messages(messages, MODEL, _underscores, forms)
    fresh = transform_messages(messages, MODEL, _underscores, WireForms())
    assert _timeless(resumed) == _timeless(fresh)
    assert resumed[:5] == first[:5] and resumed[1] is first[1], "the converted prefix is reused"
    assert resumed[-1].tool_call_id == "a_1", "a rename made before still applies"  # type: ignore[union-attr]
    shorter = transform_messages(messages[:3], MODEL, _underscores, forms)  # not an extension: afresh
    assert _timeless(shorter) == _timeless(transform_messages(messages[:3], MODEL, _underscores, WireForms()))


def test_failed_responses_are_dropped_and_orphaned_calls_get_an_error_result() -> None:
    messages = [
        user_message("go"),
        assistant(ToolCall(id="c1", name="read", arguments={}), ToolCall(id="c2", name="read", arguments={})),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="ok")]),
        user_message("interrupting"),
        assistant(TextContent(text="half"), stop="error"),
        assistant(ToolCall(id="c3", name="ls", arguments={})),
    ]
    out = transform_messages(messages, MODEL)
    shape = [(m.role, getattr(m, "tool_call_id", None), getattr(m, "is_error", None)) for m in out]
    assert shape == [
        ("user", None, None),
        ("assistant", None, None),
        ("toolResult", "c1", False),
        ("toolResult", "c2", True),
        ("user", None, None),
        ("assistant", None, None),
        ("toolResult", "c3", True),
    ]
    assert out[3].content == [TextContent(text="No result provided")]  # type: ignore[union-attr]


def test_images_become_placeholders_for_a_model_without_vision() -> None:
    image = ImageContent(data="AA==", mime_type="image/png")
    text_only = MODEL.model_copy(update={"input": ["text"]})
    messages = [
        UserMessage(content=[TextContent(text="see"), image, image]),
        ToolResultMessage(tool_call_id="c", tool_name="read", content=[image]),
    ]
    user, result = transform_messages(messages, text_only)
    assert user.content == [  # type: ignore[union-attr]
        TextContent(text="see"),
        TextContent(text="(image omitted: model does not support images)"),
    ]
    assert result.content == [TextContent(text=TOOL_IMAGE_PLACEHOLDER)]  # type: ignore[union-attr]


def test_lone_surrogates_are_dropped() -> None:
    assert sanitize_surrogates("a\ud83db\udc00c 😀") == "abc 😀"


# --- budgets -----------------------------------------------------------------------------------


def test_the_output_limit_leaves_room_for_the_context() -> None:
    small = Context(system_prompt="x" * 400, messages=[user_message("y" * 4000)])
    assert estimate_context_tokens(small) == 100 + 1000
    assert clamp_max_tokens_to_context(MODEL, small, 4000) == 4000
    big = Context(messages=[user_message("z" * 20_000)])
    assert clamp_max_tokens_to_context(MODEL, big, 4000) == 10_000 - 5000 - 4096
    huge = Context(messages=[user_message("z" * 80_000)])
    assert clamp_max_tokens_to_context(MODEL, huge, 4000) == 1


def test_reported_usage_replaces_the_estimate_of_what_it_covers() -> None:
    question = user_message("q" * 4000)
    answered = assistant(TextContent(text="a"), stop="stop")
    answered.usage = Usage(input=3000, output=500, total_tokens=3500)
    answered.timestamp = question.timestamp + 1  # fixed: a millisecond tick must not reorder them
    context = Context(system_prompt="s" * 4000, messages=[question, answered, user_message("n" * 40)])
    assert estimate_context_tokens(context) == 3500 + 10


def test_a_response_older_than_a_message_before_it_is_not_the_usage_that_counts() -> None:
    """pi-ai scans forward: a response stamped before an earlier message (the clock went back) is
    not taken as the prompt's size; the last response in order is."""
    first, late = user_message("q" * 400), user_message("r" * 400)
    counted = assistant(TextContent(text="a"), stop="stop")
    counted.usage = Usage(input=1000, output=0, total_tokens=1000)
    skipped = assistant(TextContent(text="b" * 40), stop="stop")
    skipped.usage = Usage(input=5000, output=0, total_tokens=5000)
    first.timestamp, counted.timestamp, late.timestamp, skipped.timestamp = 100, 101, 300, 200
    context = Context(messages=[first, counted, late, skipped, user_message("n" * 40)])
    assert estimate_context_tokens(context) == 1000 + 100 + 10 + 10
    skipped.timestamp = 300  # as new as the message before it: it counts
    assert estimate_context_tokens(context) == 5000 + 10


def test_thinking_budgets_and_levels() -> None:
    assert adjust_max_tokens_for_thinking(None, 32000, "medium", None) == (32000, 8192)
    assert adjust_max_tokens_for_thinking(1000, 32000, "low", None) == (3048, 2048)
    assert adjust_max_tokens_for_thinking(None, 2000, "high", None) == (2000, 976)

    def mapped(levels: dict[str, str | None]) -> Model:
        return MODEL.model_copy(update={"thinking_level_map": levels})

    assert clamp_thinking_level(mapped({"off": None, "xhigh": "xhigh"}), "max") == "xhigh"
    assert clamp_thinking_level(MODEL, "max") == "high"
    assert clamp_thinking_level(mapped({"minimal": None}), "minimal") == "low"
    assert clamp_thinking_level(MODEL.model_copy(update={"reasoning": False}), "high") == "off"


def test_anthropic_messages_of_a_request_that_extends_the_last_one_reuse_its_wire_forms() -> None:
    from agentls.ai.providers.anthropic import convert_messages

    messages: list = [
        user_message("go"),
        assistant(ToolCall(id="c1", name="read", arguments={}), ToolCall(id="c2", name="read", arguments={})),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="one")]),
    ]
    forms = WireForms()
    first = convert_messages(messages, {"type": "ephemeral"}, False, forms)
    # the next message joins the last wire message (tool results share one user message)
    messages.append(ToolResultMessage(tool_call_id="c2", tool_name="read", content=[TextContent(text="two")]))
    second = convert_messages(messages, {"type": "ephemeral"}, False, forms)
    assert second == convert_messages(messages, {"type": "ephemeral"}, False, WireForms())
    assert [len(p["content"]) for p in second if p["role"] == "user"][-1] == 2
    assert second[1] is first[1], "the assistant's wire form is reused"
    messages.append(user_message("more"))
    third = convert_messages(messages, None, False, forms)
    assert third == convert_messages(messages, None, False, WireForms())
    assert convert_messages(messages[:1], None, False, forms) == convert_messages(messages[:1], None, False)


@pytest.mark.parametrize("bridged", [False, True])
def test_chat_completion_messages_of_a_request_that_extends_the_last_one_are_the_same(bridged: bool) -> None:
    from agentls.ai import Context
    from agentls.ai.providers.openai_compat import OpenAICompat, convert_messages
    from agentls.ai.providers.wire_forms import MessageForms

    compat = OpenAICompat(
        supports_store=False,
        supports_developer_role=False,
        supports_reasoning_effort=False,
        requires_assistant_after_tool_result=bridged,
    )
    image = ImageContent(data="AA==", mime_type="image/png")
    messages: list = [
        user_message("go"),
        assistant(ToolCall(id="c1", name="read", arguments={}), ToolCall(id="c2", name="read", arguments={})),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="one")]),
    ]
    forms = MessageForms()

    def both(prompt: str) -> list:
        context = Context(system_prompt=prompt, messages=list(messages))
        resumed = convert_messages(MODEL, context, compat, forms)
        assert resumed == convert_messages(MODEL, context, compat, MessageForms())
        return resumed

    both("first")
    messages.append(
        ToolResultMessage(tool_call_id="c2", tool_name="read", content=[TextContent(text="2"), image])
    )
    both("first")
    messages.append(user_message("next"))
    converted = both("a new system prompt")
    assert converted[0]["content"] == "a new system prompt"
