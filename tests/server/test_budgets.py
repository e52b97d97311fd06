"""Budgets end to end: the real server stops a run between turns when a limit is reached, asks the
client whether to go on with the limit raised, and says which limit stopped it in ``agent/settled``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient, AgentClientError
from agentls.protocol_methods import SettledNotification

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text, a_tool
from tests.ai.providers.mock_http import MockServer
from tests.server.conftest import Answers, FauxScript, tool_call, within
from tests.server.test_providers_e2e import MODEL, NO_KEYS, point_anthropic_at

pytestmark = pytest.mark.asyncio(loop_scope="module")


def turns_of_ls(count: int) -> list[Any]:
    """``count`` turns that each list the folder (``ls`` is allowed unasked), then an answer."""
    calls = [
        {"content": [tool_call(f"t{n}", "ls", {"path": "."})], "stopReason": "toolUse"} for n in range(count)
    ]
    return [*calls, {"content": "all done"}]


async def assistant_turns(client: AgentClient, session: str) -> int:
    messages = (await within(client.get_messages(session))).messages
    return sum(1 for m in messages if m["role"] == "assistant")


async def test_max_turns_stops_a_five_turn_script_after_two_with_the_question(
    start: Any, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(turns_of_ls(5))
    answers = Answers("reject")
    client = await start(answers)
    session = await within(client.new_session(cwd=str(workspace), budget={"maxTurns": 2}))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification)
    assert settled.budget is not None and settled.budget.wire() == {
        "kind": "maxTurns",
        "scope": "run",
        "limit": 2,
        "used": 2,
    }
    assert settled.stop_reason == "toolUse"  # the last response's, as Pi has it
    assert await assistant_turns(client, session) == 2
    [question] = answers.asked
    assert (
        question.kind == "budget"
        and question.tool_name == "budget"
        and question.tool_call_id == settled.run_id
    )
    assert [o.id for o in question.options] == ["raiseBudget", "reject"]
    assert question.options[0].label == "Continue, the limit raised to 4 turns"
    assert question.budget is not None and question.budget.kind == "maxTurns"
    state = (await within(client.get_state(session))).budget
    assert state is not None and state.run.turns == 2 and state.session.turns == 2
    assert state.limits.max_turns == 2


async def test_raising_the_limit_goes_on_until_the_raised_one(
    start: Any, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(turns_of_ls(5))
    answers = Answers("raiseBudget", "reject")
    client = await start(answers)
    session = await within(client.new_session(cwd=str(workspace), budget={"maxTurns": 2}))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification) and settled.budget is not None
    assert (settled.budget.limit, settled.budget.used) == (4, 4)
    assert await assistant_turns(client, session) == 4 and len(answers.asked) == 2


async def test_without_an_answer_the_run_ends_and_a_run_that_ends_by_itself_asks_nothing(
    start: Any, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(turns_of_ls(5))
    client = await start(None, budget={"maxTurns": 1})  # no on_permission: every question is rejected
    session = await within(client.new_session(cwd=str(workspace)))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification) and settled.budget is not None
    assert await assistant_turns(client, session) == 1

    faux_script([{"content": "just an answer"}])
    answers = Answers()
    client = await start(answers, budget={"maxTurns": 1})
    session = await within(client.new_session(cwd=str(workspace)))
    settled = await within(client.prompt(session, "go", wait=True))
    assert isinstance(settled, SettledNotification) and settled.budget is None and answers.asked == []


async def test_max_tokens_counts_the_usage_each_response_reported(
    start: Any, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(turns_of_ls(5))
    answers = Answers()
    client = await start(answers)
    session = await within(client.new_session(cwd=str(workspace), budget={"maxTokens": 1}))
    settled = await within(client.prompt(session, "go", wait=True))
    messages = (await within(client.get_messages(session))).messages
    [used] = [m["usage"]["totalTokens"] for m in messages if m["role"] == "assistant"]
    assert isinstance(settled, SettledNotification) and settled.budget is not None
    assert settled.budget.wire() == {"kind": "maxTokens", "scope": "run", "limit": 1, "used": used}
    assert len(answers.asked) == 1 and used > 1


async def test_a_session_budget_counts_across_runs_and_set_budget_changes_it(
    start: Any, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([*turns_of_ls(1), *turns_of_ls(3)])
    client = await start(Answers())
    session = await within(client.new_session(cwd=str(workspace), budget={"session": {"maxTurns": 3}}))
    first = await within(client.prompt(session, "one", wait=True))
    assert isinstance(first, SettledNotification) and first.budget is None
    second = await within(client.prompt(session, "two", wait=True))
    assert isinstance(second, SettledNotification) and second.budget is not None
    assert second.budget.wire() == {"kind": "maxTurns", "scope": "session", "limit": 3, "used": 3}
    state = await within(client.set_budget(session, {}))
    assert (
        state.budget is not None and state.budget.limits.session is None and state.budget.session.turns == 3
    )
    with pytest.raises(AgentClientError) as caught:
        await within(client._call("agent/setBudget", {"sessionId": session, "budget": {"maxTurns": 0}}))
    assert caught.value.code == -32602 and "budget.maxTurns" in str(caught.value)


async def test_bad_budgets_are_invalid_params_naming_the_field(start: Any, workspace: Path) -> None:
    client = await start()
    for budget, field in (
        ({"maxCostUsd": -1}, "budget.maxCostUsd"),
        ({"maxTokens": "many"}, "budget.maxTokens"),
        ({"session": {"maxTurns": 1.5}}, "budget.session.maxTurns"),
        ({"maxTurn": 3}, "budget.maxTurn"),
    ):
        with pytest.raises(AgentClientError) as caught:
            await within(client._call("agent/newSession", {"cwd": str(workspace), "budget": budget}))
        assert caught.value.code == -32602 and field in str(caught.value), str(caught.value)


def tool_turn(n: int) -> Any:
    return a_reply(
        a_start(input_tokens=100_000, model=MODEL),
        a_text(0, f"Turn {n}."),
        a_tool(1, f"toolu_{n}", "ls", '{"path": "."}'),
        a_end("tool_use", output_tokens=10),
    )


async def test_max_cost_stops_when_the_cost_the_anthropic_api_reported_passes_it(
    tmp_path: Path, workspace: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    async with MockServer([tool_turn(n) for n in range(5)]) as mock:
        point_anthropic_at(data_dir, mock.url)
        answers = Answers()
        client = AgentClient(
            initialization_options={"dataDir": str(data_dir)}, on_permission=answers, env=NO_KEYS
        )
        await within(client.start())
        try:
            session = await within(client.new_session(cwd=str(workspace), budget={"maxCostUsd": 0.5}))
            settled = await within(client.prompt(session, "go", wait=True))
            messages = (await within(client.get_messages(session))).messages
        finally:
            await within(client.close())
    costs = [m["usage"]["cost"]["total"] for m in messages if m["role"] == "assistant"]
    assert len(costs) == 2 and len(mock.requests) == 2  # no third request was made
    assert costs[0] < 0.5 <= costs[0] + costs[1]
    assert isinstance(settled, SettledNotification) and settled.budget is not None
    assert settled.budget.kind == "maxCostUsd" and settled.budget.limit == 0.5
    assert settled.budget.used == pytest.approx(sum(costs))
    [question] = answers.asked
    assert question.kind == "budget" and "0.5" in question.title


async def test_a_loaded_session_keeps_its_budget_where_it_narrows_the_servers(
    start: Any, workspace: Path
) -> None:
    first = await start()
    tight = await within(first.new_session(cwd=str(workspace), budget={"maxTurns": 2}))
    loose = await within(first.new_session(cwd=str(workspace), budget={"maxTurns": 50}))
    await within(first.close())

    server = await start(budget={"maxTurns": 10})
    assert (await within(server.load_session(tight))).warnings is None
    state = (await within(server.get_state(tight))).budget
    assert state is not None and state.limits.max_turns == 2
    loaded = await within(server.load_session(loose))
    assert loaded.warnings == [
        "The session file's budget was not applied (it would let runs spend more than this server's); "
        "the server's applies."
    ]
    state = (await within(server.get_state(loose))).budget
    assert state is not None and state.limits.max_turns == 10
