"""The summary request: what the session's model is sent, and which answers are no summary."""

from __future__ import annotations

from typing import Any

import pytest
from agentls.ai import AbortController, AssistantMessage, Context, StreamOptions, TextContent, ToolCall
from agentls.ai.providers.faux import FauxProvider, FauxState
from agentls.ai.types import Model
from agentls.session.compaction.summary import (
    SUMMARIZATION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
    Summarizer,
    SummaryAborted,
    SummaryError,
)
from agentls.session.messages import bash_execution_message, convert_to_llm

from tests.session.compaction.helpers import call, result, user


class Recorded:
    """A faux model that records each request and answers with the given message."""

    def __init__(self, *answers: AssistantMessage, max_tokens: int = 16384, reasoning: bool = True) -> None:
        self.requests: list[tuple[Context, StreamOptions | None]] = []

        def respond(answer: AssistantMessage) -> Any:
            def factory(context: Context, options: StreamOptions | None, _: FauxState, __: Model) -> Any:
                self.requests.append((context, options))
                return answer

            return factory

        self.provider = FauxProvider([respond(a) for a in answers])
        limits = {"max_tokens": max_tokens, "reasoning": reasoning}
        self.model = self.provider.models[0].model_copy(update=limits)

    def summarizer(self, level: str = "off", signal: Any = None) -> Summarizer:
        return Summarizer(
            model=self.model,
            stream_fn=self.provider.stream,
            convert_to_llm=convert_to_llm,
            thinking_level=level,  # type: ignore[arg-type]
            signal=signal,
        )


def said(text: str, **fields: Any) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], **fields)


CONVERSATION = [
    user(1, "q"),
    call("read", path="a.py"),
    result(1),
    bash_execution_message("make", output="ok", exit_code=0, cancelled=False, truncated=False),
]


async def test_the_request_is_the_conversation_as_text_with_pis_prompts() -> None:
    model = Recorded(said("## Goal\nFix it"))
    summary = await model.summarizer().summarize(CONVERSATION, 16384)
    # the usage is the response's (the faux model estimates it; no cache is read or written)
    assert summary.text == "## Goal\nFix it" and summary.usage.output == 4 and summary.usage.cache_write == 0
    [(context, options)] = model.requests
    assert context.system_prompt == SUMMARIZATION_SYSTEM_PROMPT and not context.tools
    [message] = context.messages
    assert message.role == "user"
    assert message.content[0].text == (  # type: ignore[union-attr]
        "<conversation>\n"
        "[User]: qqqq\n\n"
        '[Assistant tool calls]: read(path="a.py")\n\n'
        "[Tool result]: rrrr\n\n"
        "[User]: Ran `make`\n```\nok\n```\n"  # the coding roles as the model sees them
        "</conversation>\n\n" + SUMMARIZATION_PROMPT
    )
    assert options is not None
    assert options.max_tokens == 13107  # 80% of reserveTokens
    assert options.cache_retention == "none" and options.session_id and options.reasoning is None


async def test_a_previous_summary_is_updated_and_instructions_add_a_focus() -> None:
    model = Recorded(said("updated"))
    await model.summarizer().summarize(
        [user(1, "q")], 1000, instructions="the parser", previous_summary="## Goal\nOld goal"
    )
    text = model.requests[0][0].messages[0].content[0].text  # type: ignore[union-attr]
    assert text == (
        "<conversation>\n[User]: qqqq\n</conversation>\n\n"
        "<previous-summary>\n## Goal\nOld goal\n</previous-summary>\n\n"
        + UPDATE_SUMMARIZATION_PROMPT
        + "\n\nAdditional focus: the parser"
    )


async def test_the_budget_is_capped_by_the_model_and_thinking_follows_the_session() -> None:
    model = Recorded(said("s"), said("p"), max_tokens=500)
    await model.summarizer("high").summarize([user()], 16384)
    await model.summarizer("high").summarize_turn_prefix([user()], 800)
    (_, first), (prefix_context, second) = model.requests
    assert first is not None and second is not None
    assert (first.max_tokens, first.reasoning) == (500, "high")
    assert second.max_tokens == 400  # half of reserveTokens for a turn's prefix
    assert prefix_context.messages[0].content[0].text.endswith(TURN_PREFIX_SUMMARIZATION_PROMPT)  # type: ignore[union-attr]
    plain = Recorded(said("s"), reasoning=False)
    await plain.summarizer("high").summarize([user()], 1000)
    assert plain.requests[0][1].reasoning is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (said("", stop_reason="error", error_message="overloaded"), "Summarization failed: overloaded"),
        (
            said("## Goal\nhalf", stop_reason="length"),
            "Summarization failed: generation hit the token cap and the summary is incomplete",
        ),
        (
            AssistantMessage(content=[ToolCall(id="c", name="read", arguments={})], stop_reason="toolUse"),
            "Summarization attempted to call a tool",
        ),
    ],
)
async def test_an_answer_that_is_no_summary_fails(answer: AssistantMessage, error: str) -> None:
    with pytest.raises(SummaryError, match=f"^{error}$"):
        await Recorded(answer).summarizer().summarize([user()], 1000)


async def test_an_aborted_request_is_no_summary() -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(SummaryAborted):
        await Recorded(said("s")).summarizer(signal=controller.signal).summarize([user()], 1000)
