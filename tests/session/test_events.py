"""``AgentSession.subscribe()``: a real session on the faux model, its typed events as a front sees them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentStartEvent, AgentTool, MessageEndEvent
from agentls.protocol import (
    InitializationOptions,
    NewSessionParams,
    RequestPermissionParams,
    RequestPermissionResult,
)
from agentls.session import AgentSession, SessionManager
from agentls.session.events import KernelEvent, McpStatusChanged, QueueChanged, RunSettled, SessionEvent
from agentls.tools.workspace import Workspace

from tests.server.conftest import write_faux_script


class Front:
    """A front with no wire: the disk's files, every question rejected, the sessions it was given."""

    def editor(self, session_id: str) -> None:
        return None

    def __init__(self) -> None:
        self.opened: list[AgentSession] = []

    def workspace(self, session_id: str, cwd: str, allow_outside: bool) -> Workspace | None:
        return None

    def tools(self, session_id: str, cwd: str, tools: list[AgentTool]) -> list[AgentTool]:
        return tools

    async def ask(self, request: RequestPermissionParams) -> RequestPermissionResult:
        return RequestPermissionResult(outcome="reject")

    def session_opened(self, session: AgentSession) -> None:
        self.opened.append(session)

    def mcp_status_changed(self, event: McpStatusChanged) -> None:
        pass


@pytest.fixture
async def session(tmp_path: Path) -> Any:
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Hello!"}, {"content": "Again!"}])
    front = Front()
    options = InitializationOptions(data_dir=str(tmp_path / "data"), faux_script=str(script))
    manager = SessionManager(options, front)
    (tmp_path / "work").mkdir()
    session = await manager.new_session(NewSessionParams(cwd=str(tmp_path / "work")))
    assert front.opened == [session]
    try:
        yield session
    finally:
        await manager.close()


async def run(session: AgentSession, text: str) -> RunSettled:
    result = await session.prompt(text, None, None)
    assert session.run is not None and session.run.run_id == result.run_id
    return await asyncio.wait_for(session.run.outcome(), 10)


async def test_events_arrive_typed_and_in_order(session: AgentSession) -> None:
    events: list[SessionEvent] = []
    session.subscribe(events.append)
    settled = await run(session, "hi")

    assert isinstance(events[0], QueueChanged) and events[0].queue.steering == []
    assert events[-1] is settled
    assert settled.stop_reason == "stop" and settled.error_message is None
    kernel = [event for event in events if isinstance(event, KernelEvent)]
    assert len(kernel) == len(events) - 2  # between the run's queue state and its settlement
    assert isinstance(kernel[0].event, AgentStartEvent)
    assert [event.seq for event in kernel] == list(range(kernel[0].seq, kernel[0].seq + len(kernel)))
    assert {event.run_id for event in kernel} == {settled.run_id}
    answer = [e.event.message for e in kernel if isinstance(e.event, MessageEndEvent)][-1]
    assert answer.role == "assistant" and answer.content[0].text == "Hello!"  # type: ignore[union-attr]


async def test_every_subscriber_gets_every_event_until_it_unsubscribes(session: AgentSession) -> None:
    first: list[SessionEvent] = []
    second: list[SessionEvent] = []
    session.subscribe(first.append)
    unsubscribe = session.subscribe(second.append)
    await run(session, "hi")
    assert first == second and first

    unsubscribe()
    unsubscribe()  # twice is harmless
    told = len(first)
    await run(session, "again")
    assert len(second) == told
    assert len(first) > told and isinstance(first[-1], RunSettled)


async def test_a_listener_may_unsubscribe_while_it_is_told(session: AgentSession) -> None:
    later: list[SessionEvent] = []
    unsubscribe = None

    def once(event: SessionEvent) -> None:
        assert unsubscribe is not None
        unsubscribe()

    unsubscribe = session.subscribe(once)
    session.subscribe(later.append)
    await run(session, "hi")
    assert isinstance(later[0], QueueChanged) and isinstance(later[-1], RunSettled)
