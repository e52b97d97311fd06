"""The low-level loop entry points used directly, as a library user would."""

from __future__ import annotations

from typing import Any

import pytest
from agentls.agent import (
    AfterToolCallResult,
    AgentContext,
    AgentLoopConfig,
    BeforeToolCallResult,
    agent_loop,
    agent_loop_continue,
    default_convert_to_llm,
)
from agentls.ai import AbortController, TextContent, ToolResultMessage, UserMessage
from agentls.ai.providers.faux import FauxProvider

from tests.agent.helpers import calls, echo_tool, text


def config(faux: FauxProvider, **hooks: Any) -> AgentLoopConfig:
    return AgentLoopConfig(model=faux.models[0], convert_to_llm=default_convert_to_llm, **hooks)


async def test_agent_loop_streams_events_and_returns_new_messages_without_touching_the_context() -> None:
    faux = FauxProvider([calls(("c1", "echo", {"text": "a"}), ("c2", "echo", {"text": "b"})), text("done")])
    context = AgentContext(system_prompt="s", messages=[UserMessage(content="earlier")], tools=[echo_tool()])
    stream = agent_loop(
        [UserMessage(content="go")], context, config(faux), AbortController().signal, faux.stream
    )
    seen = [event.type async for event in stream]
    messages = await stream.result()
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert len(context.messages) == 1


async def test_agent_loop_continue_checks_its_context_synchronously() -> None:
    faux = FauxProvider([text("x")])
    with pytest.raises(ValueError, match="Cannot continue: no messages in context"):
        agent_loop_continue(AgentContext(), config(faux), None, faux.stream)
    with pytest.raises(ValueError, match="Cannot continue from message role: assistant"):
        agent_loop_continue(AgentContext(messages=[text("x")]), config(faux), None, faux.stream)


async def test_before_and_after_hooks_can_block_and_override() -> None:
    faux = FauxProvider([calls(("c1", "echo", {"text": "a"}), ("c2", "echo", {"text": "b"})), text("done")])

    def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        return BeforeToolCallResult(block=True, reason="not c1") if ctx.tool_call.id == "c1" else None

    async def after(ctx: Any, signal: Any) -> AfterToolCallResult:
        return AfterToolCallResult(
            content=[TextContent(text=f"reviewed {ctx.result.content[0].text}")], is_error=True
        )

    stream = agent_loop(
        [UserMessage(content="go")],
        AgentContext(tools=[echo_tool()]),
        config(faux, before_tool_call=before, after_tool_call=after),
        None,
        faux.stream,
    )
    messages = await stream.result()
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [(r.content[0].text, r.is_error) for r in results] == [
        ("not c1", True),
        ("reviewed echo: b", True),
    ]


async def test_sync_and_async_tools_both_work() -> None:
    def sync_execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "from a dict"}], "details": {"n": 1}}

    tool = echo_tool("plain")
    tool.execute = sync_execute
    faux = FauxProvider([calls(("c1", "plain", {"text": "a"})), text("ok")])
    messages = await agent_loop(
        [UserMessage(content="go")], AgentContext(tools=[tool]), config(faux), None, faux.stream
    ).result()
    result = messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.content[0].text == "from a dict" and result.details == {"n": 1}
