"""End to end on a real provider: ``agentls serve`` with the Anthropic provider against a mock Messages API.

The server reads ``models.json`` from its data directory, which points the built-in
``anthropic`` provider at a mock server on 127.0.0.1; the model answers with a tool
call (``ls``, allowed without asking) and then with text, and the run settles. The
HTTP stack (``httpx``) is imported by the server only when a network provider is configured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentls.client import AgentClientError

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text, a_tool
from tests.ai.providers.mock_http import MockServer
from tests.import_probe import connected_to, import_probe
from tests.server.conftest import FauxScript, Recorder, Servers, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODEL = "claude-sonnet-4-6"
"""The built-in catalog's first Anthropic model: the default of a session that names none."""
NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "ANTHROPIC_BASE_URL": "", "OPENAI_BASE_URL": ""}
"""The developer's keys must not change what these servers see."""


def point_anthropic_at(data_dir: Path, url: str) -> None:
    config = {"providers": {"anthropic": {"baseUrl": url, "apiKey": "test-key", "retryBaseDelayMs": 10}}}
    (data_dir / "models.json").write_text(json.dumps(config), encoding="utf-8")


async def test_a_prompt_with_a_tool_call_settles_on_the_anthropic_provider(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    replies = [
        a_reply(
            a_start(input_tokens=900, model=MODEL),
            a_text(0, "Let me ", "look."),
            a_tool(1, "toolu_01", "ls", '{"pa', 'th": "."}'),
            a_end("tool_use", output_tokens=30),
        ),
        a_reply(
            a_start(input_tokens=1000, model=MODEL, cache_read_input_tokens=900),
            a_text(0, "There is notes.txt."),
            a_end(),
        ),
    ]
    async with MockServer(replies) as mock:
        point_anthropic_at(data_dir, mock.url)
        report = tmp_path / "httpx-imported"
        probe = import_probe(report, "serve")
        client = await servers.start({"dataDir": str(data_dir)}, command=probe, env=NO_KEYS)
        recorder = await Recorder(client).start()
        try:
            models = await within(client.list_models())
            assert (models[0]["provider"], models[0]["id"]) == ("anthropic", MODEL)
            assert {m["provider"] for m in models} == {"anthropic"}

            session = await within(client.new_session(cwd=str(workspace)))
            assert (await within(client.get_state(session))).model.provider == "anthropic"
            run = await within(client.prompt(session, "What is in this folder?"))
            settled = await recorder.settled(run.run_id)
            assert settled["stopReason"] == "stop" and "errorMessage" not in settled

            messages = (await within(client.get_messages(session))).messages
            assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
            first, result, answer = messages[1], messages[2], messages[3]
            assert first["stopReason"] == "toolUse" and (first["provider"], first["model"]) == (
                "anthropic",
                MODEL,
            )
            assert first["content"] == [
                {"type": "text", "text": "Let me look."},
                {"type": "toolCall", "id": "toolu_01", "name": "ls", "arguments": {"path": "."}},
            ]
            assert result["toolCallId"] == "toolu_01" and not result["isError"]
            assert "notes.txt" in result["content"][0]["text"]
            assert answer["content"] == [{"type": "text", "text": "There is notes.txt."}]
            assert answer["usage"]["cacheRead"] == 900 and answer["usage"]["cost"]["total"] > 0

            updates = [
                e["event"]["assistantMessageEvent"]
                for e in recorder.events(session, run.run_id)
                if e["event"]["type"] == "message_update"
            ]
            # deltas that arrived together may travel as one (coalesceDeltas, the default)
            argument_deltas = [u["delta"] for u in updates if u["type"] == "toolcall_delta"]
            assert "".join(argument_deltas) == '{"path": "."}' and 1 <= len(argument_deltas) <= 2

            stats = await within(client.get_stats(session))
            assert stats.tokens.cache_read == 900 and stats.cost > 0
        finally:
            await recorder.stop()
            await within(client.close(), 15)

    second = mock.requests[1].json()
    tool_result = second["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result" and tool_result["tool_use_id"] == "toolu_01"
    assert "notes.txt" in tool_result["content"] and tool_result["cache_control"] == {"type": "ephemeral"}
    assert second["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert second["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert report.read_text() == "True", "a request was made: httpx was imported then"
    headers = mock.requests[0].headers
    assert headers["x-api-key"] == "test-key" and headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"


async def test_with_coalesce_deltas_off_each_streamed_delta_is_its_own_event(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    reply = a_reply(a_start(model=MODEL), a_text(0, "one ", "two ", "three"), a_end())
    async with MockServer([reply]) as mock:
        point_anthropic_at(data_dir, mock.url)
        client = await servers.start({"dataDir": str(data_dir), "coalesceDeltas": False}, env=NO_KEYS)
        recorder = await Recorder(client).start()
        try:
            session = await within(client.new_session(cwd=str(workspace)))
            run = await within(client.prompt(session, "Count"))
            await recorder.settled(run.run_id)
            deltas = [
                e["event"]["assistantMessageEvent"]["delta"]
                for e in recorder.events(session, run.run_id)
                if e["event"]["type"] == "message_update"
                and e["event"]["assistantMessageEvent"]["type"] == "text_delta"
            ]
            assert deltas == ["one ", "two ", "three"]
        finally:
            await recorder.stop()
            await within(client.close(), 15)


async def test_the_http_stack_is_imported_in_the_background_once_the_server_is_idle(
    servers: Servers, data_dir: Path, tmp_path: Path
) -> None:
    point_anthropic_at(data_dir, "http://127.0.0.1:9")
    report = tmp_path / "httpx-imported"
    async with connected_to() as (port, warm_up_started):
        probe = import_probe(report, "serve", warm_up_port=port)
        client = await servers.start({"dataDir": str(data_dir)}, command=probe, env=NO_KEYS)
        models = await within(client.list_models())
        assert models and all(m["provider"] == "anthropic" for m in models)
        await within(warm_up_started.wait())  # the client sends nothing more: the server warms up
    await within(client.close(), 15)
    assert report.read_text() == "True", "no request was made: the warm-up imported httpx"


async def test_without_a_network_provider_the_http_stack_is_never_imported(
    servers: Servers, data_dir: Path, faux_script: FauxScript, tmp_path: Path
) -> None:
    report = tmp_path / "httpx-imported"
    options = {"dataDir": str(data_dir), "fauxScript": str(faux_script.path)}
    client = await servers.start(options, command=import_probe(report, "serve"), env=NO_KEYS)
    session = await within(client.new_session())
    assert (await within(client.prompt(session, "Hi", wait=True))).stop_reason == "stop"
    await within(client.close(), 15)
    assert report.read_text() == "False"


async def test_with_nothing_configured_a_session_fails_with_what_would_fix_it(
    servers: Servers, data_dir: Path
) -> None:
    client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
    with pytest.raises(AgentClientError) as caught:
        await within(client.new_session())
    error = caught.value
    assert error.kind == "noModel"
    for fix in ("ANTHROPIC_API_KEY", str(data_dir / "models.json"), "fauxScript", "AGENTLS_FAUX_SCRIPT"):
        assert fix in str(error)
    assert "Traceback" not in str(error)


async def test_a_bad_models_file_is_reported_with_its_field(servers: Servers, data_dir: Path) -> None:
    (data_dir / "models.json").write_text(json.dumps({"providers": {"anthropic": {"maxRetries": -1}}}))
    client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
    with pytest.raises(AgentClientError) as caught:
        await within(client.list_models())
    assert "models.json" in str(caught.value) and "providers.anthropic.maxRetries" in str(caught.value)
