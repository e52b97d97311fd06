"""``agentls.client.AgentClient`` against the real server: its API, its results and its errors."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agentls.client import AgentClient, AgentClientError, Notification
from agentls.protocol import (
    AbortResult,
    MessagesResult,
    PromptResult,
    QueueState,
    SessionInfo,
    StateResult,
    StatsResult,
)
from agentls.protocol_methods import LoadSessionResult, RunResult, SettledNotification

from tests.server.conftest import (
    LONG_TEXT,
    FauxScript,
    Recorder,
    Servers,
    server_options,
    server_process,
    watchdog,
    within,
)


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    with watchdog():
        yield


@pytest.fixture
def faux_script(tmp_path: Path) -> FauxScript:
    script = FauxScript(tmp_path / "faux.json")
    script([{"content": "Hello!"}, {"content": "Hello again!"}])
    return script


@pytest.fixture
def options(tmp_path: Path, faux_script: FauxScript) -> dict[str, str]:
    return server_options(tmp_path, faux_script)


@pytest.fixture
async def servers() -> AsyncIterator[Servers]:
    started = Servers()
    try:
        yield started
    finally:
        await started.close()


async def collect(notes: AsyncIterator[Notification]) -> list[Notification]:
    return [note async for note in notes]


async def test_a_session_from_start_to_close(options: dict[str, str], faux_script: FauxScript) -> None:
    client = AgentClient(initialization_options=options)
    async with client:
        assert client.server_capabilities["version"] == 1
        assert "agent/prompt" in client.server_capabilities["methods"]

        session = await within(client.new_session(model=("faux", "faux-1"), thinking_level="low"))
        assert isinstance(session, str)
        async with client.subscribe(session) as notes:
            accepted = await within(client.prompt(session, "Hi"))
            assert isinstance(accepted, PromptResult) and accepted.run_id and accepted.queued is None
            settled = await within(client.wait_settled(accepted.run_id))
            assert isinstance(settled, SettledNotification)
            assert (settled.session_id, settled.run_id, settled.stop_reason) == (
                session,
                accepted.run_id,
                "stop",
            )
            # a run that settled before anyone waited is still known
            assert await within(client.wait_settled(accepted.run_id)) == settled

            methods = []
            async for note in notes:
                methods.append(note.method)
                if note.method == "agent/settled":
                    break
            assert methods.count("agent/settled") == 1 and "agent/event" in methods

        waited = await within(client.prompt(session, "Again", wait=True))
        assert isinstance(waited, SettledNotification) and waited.stop_reason == "stop"

        state = await within(client.get_state(session))
        assert isinstance(state, StateResult) and state.message_count == 4 and state.thinking_level == "low"
        messages = await within(client.get_messages(session, since=3))
        assert isinstance(messages, MessagesResult) and messages.total == 4
        assert messages.messages[0]["content"] == [{"type": "text", "text": "Hello again!"}]
        stats = await within(client.get_stats(session))
        assert isinstance(stats, StatsResult) and stats.tokens.total > 0
        assert isinstance(await within(client.get_queue(session)), QueueState)
        assert isinstance(await within(client.abort(session)), AbortResult)
        [info] = await within(client.list_sessions())
        assert isinstance(info, SessionInfo) and info.session_id == session and info.title == "Hi"
        loaded = await within(client.load_session(session))
        assert isinstance(loaded, LoadSessionResult) and loaded.message_count == 4
        assert [m["id"] for m in await within(client.list_models())] == ["faux-1"]
        assert (await within(client.set_thinking_level(session, "high"))).thinking_level == "high"
        assert (await within(client.set_queue_modes(session, steering="all"))).steering_mode == "all"
        assert (await within(client.set_model(session, "faux", "faux-1"))).model.id == "faux-1"
        assert await within(client.delete_session(session)) is True

    # closed cleanly: shutdown and exit, not a kill
    assert client._rpc._server.returncode == 0
    await within(client.close())  # a second close does nothing
    with pytest.raises(AgentClientError) as caught:
        await within(client.list_sessions())
    assert caught.value.kind == "connection" and "not started" in str(caught.value)


async def test_queueing_and_continuing(
    servers: Servers, options: dict[str, str], faux_script: FauxScript
) -> None:
    faux_script([{"content": LONG_TEXT}, {"content": "Continued."}], slow=True)
    client = await servers.start(options)
    recorder = await Recorder(client).start()
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Start"))).run_id
    await recorder.wait_delta(session)

    queued = await within(client.prompt(session, "Later", when_busy="followUp"))
    assert isinstance(queued, PromptResult) and queued.run_id is None and queued.queued
    # wait=True does not wait for a prompt that was only queued
    queued_too = await within(client.prompt(session, "Sooner", when_busy="steer", wait=True))
    assert isinstance(queued_too, PromptResult) and queued_too.queued
    steer_id = await within(client.steer(session, "Steer"))
    follow_id = await within(client.follow_up(session, "Follow"))
    removed = await within(client.clear_queue(session, kind="steering"))
    assert [i.id for i in removed.steering] == [queued_too.queued, steer_id]
    removed = await within(client.clear_queue(session, item_id=follow_id))
    assert [i.text for i in removed.follow_up] == ["Follow"]

    aborted = await within(client.abort(session))
    assert aborted.aborted and aborted.run_id == run_id
    assert [i.text for i in aborted.queue.follow_up] == ["Later"]
    run = await within(client.continue_(session))
    assert isinstance(run, RunResult)
    assert (await within(client.wait_settled(run.run_id))).stop_reason == "stop"
    # the queued follow-up became the prompt of the continuation
    messages = (await within(client.get_messages(session, since=2))).messages
    assert [(m["role"], m["content"][0]["text"]) for m in messages] == [
        ("user", "Later"),
        ("assistant", "Continued."),
    ]
    error = await asyncio.wait_for(_error(client.continue_(session, wait=True)), 10)
    assert error.kind == "cannotContinue"
    await recorder.stop()


async def _error(awaitable: object) -> AgentClientError:
    with pytest.raises(AgentClientError) as caught:
        await awaitable  # type: ignore[misc]
    return caught.value


async def test_errors_carry_the_servers_kind_code_and_data(servers: Servers, options: dict[str, str]) -> None:
    client = await servers.start(options)
    error = await within(_error(client.get_state("nope")))
    assert (error.kind, error.code, error.data) == ("unknownSession", -32000, {"kind": "unknownSession"})
    assert "No session nope" in str(error)

    error = await within(_error(client.new_session(model=("faux", "faux-7"))))
    assert error.kind == "unknownModel" and "faux/faux-1" in str(error)

    error = await within(
        _error(client.request("agent/getMessages", {"sessionId": "s", "since": -2}, MessagesResult))
    )
    assert error.kind == "invalidParams" and error.code == -32602
    assert error.data["errors"] == ["since: Input should be greater than or equal to 0"]

    error = await within(_error(client.request("agent/teleport", {}, MessagesResult)))
    assert error.kind == "protocol" and error.code == -32601 and error.data is None


async def test_subscriptions_filter_by_session(servers: Servers, options: dict[str, str]) -> None:
    client = await servers.start(options)
    first = await within(client.new_session())
    second = await within(client.new_session())
    async with client.subscribe(first) as only_first, client.subscribe() as everything:
        one = await within(client.prompt(first, "One", wait=True))
        two = await within(client.prompt(second, "Two", wait=True))
        await within(client.close())  # ends every subscription
        mine = await within(collect(only_first))
        all_notes = await within(collect(everything))
    assert {n.session_id for n in mine} == {first}
    assert {n.session_id for n in all_notes} == {first, second}
    assert [n.params["runId"] for n in all_notes if n.method == "agent/settled"] == [one.run_id, two.run_id]
    assert [n for n in all_notes if n.session_id == first] == mine


async def test_a_server_that_dies_fails_requests_instead_of_hanging(
    servers: Servers, options: dict[str, str], faux_script: FauxScript
) -> None:
    faux_script([{"content": LONG_TEXT}], slow=True)
    client = await servers.start(options)
    recorder = await Recorder(client).start()
    session = await within(client.new_session())
    run_id = (await within(client.prompt(session, "Write a lot"))).run_id
    await recorder.wait_delta(session)

    async with client.subscribe(session) as notes:
        settled = asyncio.ensure_future(client.wait_settled(run_id))
        draining = asyncio.ensure_future(collect(notes))
        client._rpc._server.kill()
        error = await within(_error(settled))
        assert error.kind == "connection" and "exited" in str(error)
        await within(draining)  # the subscription ended

    error = await within(_error(client.get_state(session)))
    assert error.kind == "connection" and "exited" in str(error)
    error = await within(_error(client.wait_settled("run-unknown")))
    assert error.kind == "connection"
    await within(client.close(), 5)
    await recorder.stop()


async def test_a_server_that_ended_at_the_end_of_its_input_is_a_connection_error(
    servers: Servers, options: dict[str, str]
) -> None:
    client = await servers.start(options)
    process = client._rpc._server
    process.stdin.close()  # the server sees the end of its input and exits
    error = await within(_error(client.list_sessions()))
    assert error.kind == "connection"
    assert await within(process.wait()) == 0


@pytest.mark.parametrize(
    "command",
    [
        ["/nonexistent/agentls-server"],
        [sys.executable, "-c", "pass"],  # starts, then exits without a word
    ],
)
async def test_a_server_that_cannot_start_is_a_connection_error(command: list[str]) -> None:
    client = AgentClient(command)
    with pytest.raises(AgentClientError) as caught:
        await within(client.start())
    assert caught.value.kind == "connection"
    await within(client.close(), 5)


async def test_requests_before_start_are_a_connection_error() -> None:
    client = AgentClient()
    with pytest.raises(AgentClientError) as caught:
        await within(client.new_session())
    assert caught.value.kind == "connection" and "not started" in str(caught.value)


async def test_connect_to_a_running_servers_streams(tmp_path: Path, faux_script: FauxScript) -> None:
    process = await server_process()
    assert process.stdout is not None and process.stdin is not None
    client = AgentClient(initialization_options=server_options(tmp_path / "data", faux_script))
    try:
        capabilities = await within(client.connect(process.stdout, process.stdin))
        assert capabilities["version"] == 1
        session = await within(client.new_session(cwd=str(tmp_path)))
        settled = await within(client.prompt(session, "hi", wait=True))
        assert isinstance(settled, SettledNotification) and settled.stop_reason == "stop"
    finally:
        await within(client.close())
    assert await within(process.wait()) == 0


async def test_waiting_for_an_id_that_is_no_run_fails_at_once_and_errors_speak_python(
    servers: Servers, options: dict[str, str], faux_script: FauxScript
) -> None:
    faux_script([{"content": LONG_TEXT}], slow=True)
    client = await servers.start(options)
    session = await within(client.new_session())
    error = await within(_error(client.wait_settled(session)))
    assert error.kind == "invalidParams" and "wait_settled() takes the run_id that prompt()" in str(error)
    run_id = (await within(client.prompt(session, "Write a lot"))).run_id
    error = await within(_error(client.prompt(session, "Another")))
    assert error.kind == "busy" and "steer()" in str(error) and "when_busy" in str(error)
    assert "agent/steer" not in str(error) and "whenBusy" not in str(error)
    await within(client.abort(session))
    assert (await within(client.wait_settled(run_id))).stop_reason == "aborted"
