"""Agent behaviour that the conformance scenarios do not pin."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agentls.agent import (
    Agent,
    AgentBusyError,
    AgentState,
    AgentTool,
    AgentToolResult,
    ContinueError,
    TurnContext,
    TurnUpdate,
)
from agentls.ai import (
    AssistantMessage,
    Context,
    CustomMessage,
    ImageContent,
    Model,
    StreamOptions,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from agentls.ai.providers.faux import FauxProvider

from tests.agent.helpers import calls, echo_tool, make_agent, text, types

PNG = ImageContent(data="iVBORw0KGgo=", mime_type="image/png")


async def test_prompt_runs_a_tool_turn_and_records_the_transcript() -> None:
    agent, _, events = make_agent([calls(("c1", "echo", {"text": "hi"})), text("done")], [echo_tool()])
    await agent.prompt("go")
    assert types(events) == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end",
        "tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
        "turn_start", "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    result = agent.state.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert result.content[0].text == "echo: hi" and result.details == {"id": "c1"}
    assert not agent.state.is_streaming and agent.state.streaming_message is None


async def test_prompt_while_busy_raises_at_once_and_leaves_the_run_alone() -> None:
    agent, _, _ = make_agent([text("a")])
    run = agent.prompt("first")
    with pytest.raises(AgentBusyError, match="already processing a prompt"):
        agent.prompt("second")
    with pytest.raises(AgentBusyError):
        agent.continue_()
    with pytest.raises(AgentBusyError):
        agent.reset()
    await run
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]


async def test_wait_for_idle_returns_at_once_when_idle_and_after_settlement_when_running() -> None:
    agent, _, events = make_agent([text("a")])
    await agent.wait_for_idle()
    agent.prompt("x")
    assert agent.state.is_streaming
    await agent.wait_for_idle()
    assert events[-1].type == "agent_end" and not agent.state.is_streaming


async def test_continue_errors_and_the_keyword_alias() -> None:
    agent, _, _ = make_agent([text("a"), text("b")])
    with pytest.raises(ContinueError, match="No messages to continue from"):
        agent.continue_()
    await agent.prompt("x")
    with pytest.raises(ContinueError, match="Cannot continue from message role: assistant"):
        getattr(agent, "continue")()
    agent.follow_up(UserMessage(content="more"))
    await getattr(agent, "continue")()
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "user", "assistant"]


async def test_listener_exception_ends_the_run_through_the_failure_path() -> None:
    agent, _, events = make_agent([calls(("c1", "echo", {"text": "hi"})), text("never")], [echo_tool()])
    failed = False

    def explode(event: Any, signal: Any) -> None:
        nonlocal failed
        if event.type == "tool_execution_start" and not failed:
            failed = True
            raise RuntimeError("listener broke")

    agent.subscribe(explode)
    await agent.prompt("go")
    assert types(events)[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    failure = events[-1].messages[0]
    assert failure.stop_reason == "error" and failure.error_message == "listener broke"
    assert agent.state.error_message == "listener broke"
    assert not agent.state.is_streaming


async def test_listener_that_keeps_failing_makes_the_run_task_raise() -> None:
    agent, _, _ = make_agent([text("a")])

    def always(event: Any, signal: Any) -> None:
        raise RuntimeError("always")

    agent.subscribe(always)
    with pytest.raises(RuntimeError, match="always"):
        await agent.prompt("go")
    assert not agent.is_running


async def test_unsubscribed_listener_hears_nothing_more() -> None:
    agent, _, events = make_agent([text("a"), text("b")])
    late: list[str] = []
    unsubscribe = agent.subscribe(lambda event, signal: late.append(event.type))
    await agent.prompt("one")
    unsubscribe()
    count = len(late)
    await agent.prompt("two")
    assert len(late) == count and events[-1].type == "agent_end"


async def test_tool_results_with_images_reach_the_next_model_call() -> None:
    async def screenshot(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text="see image"), PNG], details=None)

    tool = AgentTool(name="shot", parameters={"type": "object", "properties": {}}, execute=screenshot)
    seen: list[Context] = []

    def answer(ctx: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        seen.append(ctx)
        return text("a cat")

    agent, _, _ = make_agent([calls(("c1", "shot", {})), answer], [tool])
    await agent.prompt(UserMessage(content=[TextContent(text="look"), PNG]))
    tool_result = seen[0].messages[-1]
    assert isinstance(tool_result, ToolResultMessage)
    assert tool_result.content[1] == PNG
    assert seen[0].messages[0].content[1] == PNG  # type: ignore[index]


async def test_prompt_with_images_builds_one_user_message() -> None:
    agent, _, _ = make_agent([text("ok")])
    await agent.prompt("describe", [PNG])
    first = agent.state.messages[0]
    assert isinstance(first, UserMessage) and first.content == [TextContent(text="describe"), PNG]


async def test_get_api_key_is_called_for_every_model_call() -> None:
    asked: list[str] = []
    keys = iter(["key-1", "key-2"])
    received: list[str | None] = []

    async def get_api_key(provider: str) -> str:
        asked.append(provider)
        return next(keys)

    def answer(reply: Any) -> Any:
        def step(ctx: Context, options: StreamOptions | None, state: Any, model: Any) -> AssistantMessage:
            received.append(options.api_key if options else None)
            return reply

        return step

    agent, _, _ = make_agent(
        [answer(calls(("c1", "echo", {"text": "x"}))), answer(text("done"))],
        [echo_tool()],
        get_api_key=get_api_key,
    )
    await agent.prompt("go")
    assert asked == ["faux", "faux"]
    assert received == ["key-1", "key-2"]


async def test_tool_updates_and_abort_signal_reach_the_tool() -> None:
    started = asyncio.Event()

    async def slow(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(content=[TextContent(text="working")]))
        started.set()
        await signal.wait()
        raise RuntimeError("stopped by abort")

    tool = AgentTool(name="slow", parameters={"type": "object"}, execute=slow)
    agent, _, events = make_agent([calls(("c1", "slow", {})), text("unused")], [tool])
    run = agent.prompt("go")
    await started.wait()
    agent.abort()
    await run
    updates = [e for e in events if e.type == "tool_execution_update"]
    assert updates[0].partial_result.content[0].text == "working"
    end = next(e for e in events if e.type == "tool_execution_end")
    assert end.is_error and end.result.content[0].text == "stopped by abort"
    assert agent.state.messages[-1].stop_reason == "aborted"  # type: ignore[union-attr]


async def test_prepare_arguments_rewrites_before_validation_and_added_tool_names_are_kept() -> None:
    received: list[Any] = []

    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(args)
        return AgentToolResult(content=[TextContent(text="ok")], added_tool_names=["extra"])

    tool = AgentTool(
        name="legacy",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        prepare_arguments=lambda raw: {"path": raw.get("file", raw.get("path"))},
        execute=execute,
    )
    agent, _, events = make_agent([calls(("c1", "legacy", {"file": "a.txt"})), text("ok")], [tool])
    await agent.prompt("go")
    assert received == [{"path": "a.txt"}]
    start = next(e for e in events if e.type == "tool_execution_start")
    assert start.args == {"file": "a.txt"}
    result = next(m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert result.added_tool_names == ["extra"]


async def test_prepare_next_turn_with_context_sees_the_turn_and_switches_model_for_this_run_only() -> None:
    faux = FauxProvider([calls(("c1", "echo", {"text": "x"})), text("b"), text("c")], models=["m1", "m2"])
    used: list[tuple[str, str | None]] = []
    turns: list[TurnContext] = []

    def stream(model: Model, context: Context, options: StreamOptions | None) -> Any:
        used.append((model.id, options.reasoning if options else None))
        return faux.stream(model, context, options)

    def prepare(turn: TurnContext, signal: Any) -> TurnUpdate:
        turns.append(turn)
        return TurnUpdate(model=faux.get_model("m2"), thinking_level="high")

    agent = Agent(
        initial_state=AgentState(model=faux.models[0], tools=[echo_tool()]),
        stream_fn=stream,
        prepare_next_turn_with_context=prepare,
    )
    await agent.prompt("one")
    await agent.prompt("two")
    assert used == [("m1", None), ("m2", "high"), ("m1", None)]
    assert turns[0].tool_results[0].tool_call_id == "c1"
    # new_messages is the live list of the run (as in pi), so it has grown since.
    assert [m.role for m in turns[0].new_messages][:3] == ["user", "assistant", "toolResult"]
    assert agent.state.model.id == "m1"


async def test_custom_messages_stay_in_the_transcript_but_not_in_the_model_context() -> None:
    seen: list[Context] = []

    def answer(ctx: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        seen.append(ctx)
        return text("ok")

    agent, _, _ = make_agent([answer])
    agent.state.messages = [CustomMessage(role="bookmark", content="x", timestamp=1)]
    await agent.prompt("hi")
    assert [m.role for m in agent.state.messages] == ["bookmark", "user", "assistant"]
    assert [m.role for m in seen[0].messages] == ["user"]


async def test_reset_clears_transcript_error_and_queues() -> None:
    agent, _, _ = make_agent([AssistantMessage(content=[], stop_reason="error", error_message="bad")])
    await agent.prompt("x")
    agent.steer(UserMessage(content="s"))
    agent.follow_up(UserMessage(content="f"))
    assert agent.state.error_message == "bad" and agent.has_queued_messages()
    agent.reset()
    assert (
        agent.state.messages == [] and agent.state.error_message is None and not agent.has_queued_messages()
    )


async def test_state_setters_copy_lists() -> None:
    tools = [echo_tool()]
    agent = Agent(initial_state=AgentState(tools=tools), stream_fn=FauxProvider().stream)
    tools.append(echo_tool("other"))
    assert [t.name for t in agent.state.tools] == ["echo"]
    messages = [UserMessage(content="a")]
    agent.state.messages = messages
    messages.append(UserMessage(content="b"))
    assert len(agent.state.messages) == 1


def test_agent_without_stream_function_explains_what_to_do() -> None:
    with pytest.raises(RuntimeError, match="No default stream function configured"):
        Agent()
