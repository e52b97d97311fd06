"""Small builders shared by the kernel tests."""

from __future__ import annotations

from typing import Any

from agentls.agent import Agent, AgentEvent, AgentState, AgentTool, AgentToolResult
from agentls.ai import AssistantMessage, TextContent, ToolCall
from agentls.ai.providers.faux import FauxProvider, FauxStep


def text(reply: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=reply)])


def calls(*tool_calls: tuple[str, str, dict[str, Any]]) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=i, name=n, arguments=a) for i, n, a in tool_calls], stop_reason="toolUse"
    )


def echo_tool(name: str = "echo", **kwargs: Any) -> AgentTool:
    async def execute(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=[TextContent(text=f"echo: {args['text']}")], details={"id": tool_call_id}
        )

    return AgentTool(
        name=name,
        description="Echo the text back",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=execute,
        **kwargs,
    )


def make_agent(
    responses: list[FauxStep], tools: list[AgentTool] | None = None, **options: Any
) -> tuple[Agent, FauxProvider, list[AgentEvent]]:
    faux = FauxProvider(responses)
    agent = Agent(
        initial_state=AgentState(model=faux.models[0], tools=tools or []),
        stream_fn=faux.stream,
        **options,
    )
    events: list[AgentEvent] = []

    async def record(event: AgentEvent, signal: Any) -> None:
        events.append(event)

    agent.subscribe(record)
    return agent, faux, events


def types(events: list[AgentEvent]) -> list[str]:
    return [e.type for e in events if e.type != "message_update"]
