"""``agentls acp``'s config options: the ``thinking`` option offers the levels the current model supports.

The models come from the data folder's ``models.json`` (a provider of our own and the built-in
Anthropic one, never contacted) beside the faux model; the official ACP SDK's client side
drives the agent, and every message it sends is checked against the ACP schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, spawn_agent_process
from acp.schema import ClientCapabilities

from tests.acp.conftest import SERVER_SOURCE, Editor, agent, agent_validator
from tests.acp.test_acp import script
from tests.import_probe import connected_to, import_probe
from tests.server.conftest import within
from tests.server.test_providers_e2e import NO_KEYS

pytestmark = pytest.mark.asyncio(loop_scope="module")

UP_TO_HIGH = ["off", "minimal", "low", "medium", "high"]


def models_file(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    local = {
        "api": "openai-completions",
        "baseUrl": "http://127.0.0.1:9",
        "models": [
            {"id": "plain"},
            {"id": "deep", "reasoning": True, "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"}},
        ],
    }
    anthropic = {"apiKey": "test-key", "baseUrl": "http://127.0.0.1:9"}
    (data_dir / "models.json").write_text(json.dumps({"providers": {"local": local, "anthropic": anthropic}}))


def thinking(options: list[Any]) -> tuple[list[str], str]:
    """The ``thinking`` option's values and its current value."""
    [option] = [o for o in options if o.id == "thinking"]
    return [choice.value for choice in option.options], option.current_value


async def test_the_thinking_option_offers_the_levels_of_the_current_model(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    models_file(data_dir)
    editor = Editor()
    async with agent(editor, data_dir, script(tmp_path / "faux.json", "ok"), env=NO_KEYS) as (
        connection,
        sent,
    ):
        await within(connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities()))
        created = await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))
        session = created.session_id
        # faux-1 reasons, with no level map: no xhigh or max
        assert thinking(created.config_options) == (UP_TO_HIGH, "off")

        async def choose(config_id: str, value: str) -> tuple[list[str], str]:
            answer = await within(
                connection.set_config_option(config_id=config_id, session_id=session, value=value)
            )
            update = await editor.until(lambda: editor.of("config_option_update", session))
            assert thinking(update[-1].config_options) == thinking(answer.config_options)
            editor.updates.clear()
            return thinking(answer.config_options)

        assert await choose("model", "local/deep") == ([*UP_TO_HIGH, "xhigh", "max"], "off")
        assert await choose("thinking", "max") == ([*UP_TO_HIGH, "xhigh", "max"], "max")
        # a model without reasoning: only off, and the level in effect is off
        assert await choose("model", "local/plain") == (["off"], "off")
        with pytest.raises(RequestError) as unsupported:
            await within(connection.set_config_option(config_id="thinking", session_id=session, value="high"))
        assert unsupported.value.code == -32602
        assert "local/plain has no thinking level 'high'" in str(unsupported.value.data)
        # the session kept its level: a model that has it uses it again
        assert await choose("model", "anthropic/claude-sonnet-4-6") == ([*UP_TO_HIGH, "max"], "max")
        assert await choose("model", "faux/faux-1") == (UP_TO_HIGH, "high")
        with pytest.raises(RequestError) as unknown:
            await within(
                connection.set_config_option(config_id="thinking", session_id=session, value="extreme")
            )
        assert unknown.value.code == -32602
        assert "no thinking level 'extreme': use one of the option's values (off, minimal" in str(
            unknown.value.data
        )
    validator = agent_validator()
    for message in sent:
        validator.validate(message)


async def test_a_model_is_resolved_as_agent_set_model_resolves_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    models_file(data_dir)
    editor = Editor()
    async with agent(editor, data_dir, script(tmp_path / "faux.json", "ok"), env=NO_KEYS) as (connection, _):
        await within(connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities()))
        session = (await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))).session_id
        for value in ("local", "local/none", "/deep"):
            with pytest.raises(RequestError) as unknown:
                await within(connection.set_config_option(config_id="model", session_id=session, value=value))
            assert unknown.value.code == -32602
            data = unknown.value.data
            assert data["kind"] == "unknownModel" and "available: faux/faux-1, local/plain" in data["message"]
        # a built-in model whose provider has no key: the same answer as agent/setModel's
        with pytest.raises(RequestError) as keyless:
            await within(
                connection.set_config_option(config_id="model", session_id=session, value="openai/gpt-4.1")
            )
        assert keyless.value.data["kind"] == "noModel" and "OPENAI_API_KEY" in keyless.value.data["message"]


async def test_the_http_stack_is_imported_in_the_background_once_a_session_is_open(tmp_path: Path) -> None:
    """As ``agentls serve`` does: once a session is open and announced and nothing runs, the providers and
    ``httpx`` are imported in a thread of their own (a first prompt typed meanwhile does not wait)."""
    data = tmp_path / "data"
    models_file(data)
    report = tmp_path / "httpx-imported"
    async with connected_to() as (port, warm_up_started):
        probe = import_probe(report, "acp", "--data-dir", str(data), warm_up_port=port)
        env = {"PYTHONPATH": str(SERVER_SOURCE), **NO_KEYS}
        spawned = spawn_agent_process(Editor(), *probe, env=env, use_unstable_protocol=True)
        async with spawned as (connection, _):
            await within(connection.initialize(protocol_version=1, client_capabilities=ClientCapabilities()))
            await within(connection.new_session(cwd=str(tmp_path), mcp_servers=[]))
            await within(warm_up_started.wait())  # the client sends nothing more: the agent warms up
    assert report.read_text() == "True", "no request was made: the warm-up imported httpx"
