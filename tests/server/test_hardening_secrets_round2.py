"""End to end: keys echoed in other encodings stay hidden, and the tools' shells never get them.

A mock Anthropic API on 127.0.0.1 answers with an error that echoes the key URL-encoded,
as every byte percent-encoded, in hex and inside a longer base64 string (``user:KEY``):
none of these may reach ``errorMessage``, ``agent/getState``, the notifications or the
session file. The ``bash`` tool's and ``agent/bash``'s ``env`` shows none of the
providers' key variables (built in, or named by ``models.json``), nor a variable whose
value is a key in use, unless the ``passKeys`` initialization option lists it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.parse
from pathlib import Path

import pytest
from agentls.ai.secrets import REDACTED
from agentls.client import AgentClient

from tests.ai.providers.mock_http import MockServer, json_reply
from tests.server.conftest import FauxScript, Recorder, Servers, within
from tests.server.test_hardening_processes import bash

pytestmark = pytest.mark.asyncio(loop_scope="module")

ANTHROPIC_KEY = "sk-ant-e2e/round2+key=0123456789abcdef"
"""A key with characters that URL encoding changes."""
OPENAI_KEY = "sk-openai-e2e-round2-0123456789"
OWN_KEY = "sk-own-e2e-round2-0123456789"
"""The value of :data:`OWN_VARIABLE`, which ``models.json`` names as a provider's ``apiKeyEnv``."""
OWN_VARIABLE = "AGENTLS_E2E_ROUND2_KEY"
LITERAL_KEY = "sk-literal-e2e-round2-0123456789"
"""A key written in ``models.json``; :data:`COPY_VARIABLE` holds the same value."""
COPY_VARIABLE = "AGENTLS_E2E_ROUND2_COPY"

ECHOES = [
    urllib.parse.quote(ANTHROPIC_KEY, safe=""),
    urllib.parse.quote_plus(ANTHROPIC_KEY),
    "".join(f"%{byte:02X}" for byte in ANTHROPIC_KEY.encode()),
    ANTHROPIC_KEY.encode().hex(),
    base64.b64encode(f"user:{ANTHROPIC_KEY}".encode()).decode(),
    base64.urlsafe_b64encode(f"x{ANTHROPIC_KEY}".encode()).decode(),
]
"""What the mock API sends back: the key in each encoding a server might echo it in."""


def assert_hidden(text: str, where: str) -> None:
    assert ANTHROPIC_KEY not in text, f"{where} holds the key"
    for echo in ECHOES:
        assert echo not in text, f"{where} holds the key encoded: {echo}"
    # the middle of the base64 of user:KEY, which no redaction of the whole string alone would hide
    middle = base64.b64encode(f"user:{ANTHROPIC_KEY}".encode()).decode()[8:-8]
    assert middle not in text, f"{where} holds the base64-encoded key"


async def test_a_key_echoed_encoded_is_redacted_everywhere(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    error = {"type": "error", "error": {"type": "authentication_error", "message": " ".join(ECHOES)}}
    async with MockServer([json_reply(401, error) for _ in range(3)]) as mock:
        client = await servers.start(
            {"dataDir": str(data_dir)},
            env={"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": mock.url, "OPENAI_API_KEY": ""},
        )
        recorder = await Recorder(client).start()
        try:
            session = await within(
                client.new_session(cwd=str(workspace), model=("anthropic", "claude-sonnet-4-6"))
            )
            run = await within(client.prompt(session, "Hello"))
            settled = await recorder.settled(run.run_id)
            assert mock.requests, "the request reached the mock API"
            assert settled["stopReason"] == "error"
            assert REDACTED in settled["errorMessage"]
            assert_hidden(settled["errorMessage"], "errorMessage")
            state = await within(client.get_state(session))
            assert_hidden(json.dumps(state.model_dump(by_alias=True)), "agent/getState")
            messages = (await within(client.get_messages(session))).messages
            assert_hidden(json.dumps(messages), "agent/getMessages")
        finally:
            await recorder.stop()
            await within(client.close(), 15)
    for note in recorder.notes:
        assert_hidden(json.dumps(note.params), f"a {note.method} notification")
    files = await asyncio.to_thread(
        lambda: {p: p.read_text(encoding="utf-8") for p in data_dir.rglob("*.jsonl")}
    )
    assert files
    for path, text in files.items():
        assert_hidden(text, str(path))


def write_models_file(data_dir: Path) -> None:
    providers = {
        "own": {
            "api": "openai-completions",
            "baseUrl": "http://127.0.0.1:9/v1",
            "apiKeyEnv": OWN_VARIABLE,
            "models": [{"id": "own-model"}],
        },
        "literal": {
            "api": "openai-completions",
            "baseUrl": "http://127.0.0.1:9/v1",
            "apiKey": LITERAL_KEY,
            "models": [{"id": "literal-model"}],
        },
    }
    (data_dir / "models.json").write_text(json.dumps({"providers": providers}), encoding="utf-8")


KEYS_ENV = {
    "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    "OPENAI_API_KEY": OPENAI_KEY,
    OWN_VARIABLE: OWN_KEY,
    COPY_VARIABLE: LITERAL_KEY,
    "AGENTLS_E2E_PLAIN": "an ordinary variable",
}


async def env_outputs(
    client: AgentClient, recorder: Recorder, faux_script: FauxScript, workspace: Path
) -> list[str]:
    """What ``env`` prints in a ``bash`` tool call and in an ``agent/bash`` command of a new session."""
    faux_script([bash("b1", "env"), {"content": "done"}])
    session = await within(
        client.new_session(cwd=str(workspace), model=("faux", "faux-1"), permissions={"bash": "allow"})
    )
    run = await within(client.prompt(session, "show the environment"))
    await recorder.settled(run.run_id)
    ended = await recorder.wait_event(session, "tool_execution_end", toolCallId="b1")
    tool_output = "".join(block["text"] for block in ended["event"]["result"]["content"])
    end = await within(client.bash(session, "env", wait=True))
    return [tool_output, end.message["output"]]


async def test_the_tools_shells_get_no_provider_key(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    write_models_file(data_dir)
    client = await servers.start(
        {"dataDir": str(data_dir), "fauxScript": str(faux_script.path)}, env=KEYS_ENV
    )
    recorder = await Recorder(client).start()
    try:
        for output in await env_outputs(client, recorder, faux_script, workspace):
            assert "AGENTLS_E2E_PLAIN=an ordinary variable" in output  # the rest of the environment is there
            for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", OWN_VARIABLE, COPY_VARIABLE):
                assert f"{variable}=" not in output
            for key in (ANTHROPIC_KEY, OPENAI_KEY, OWN_KEY, LITERAL_KEY):
                assert key not in output
    finally:
        await recorder.stop()


async def test_pass_keys_gives_the_listed_keys_to_the_shells(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    options = {"dataDir": str(data_dir), "fauxScript": str(faux_script.path), "passKeys": ["OPENAI_API_KEY"]}
    client = await servers.start(options, env=KEYS_ENV)
    recorder = await Recorder(client).start()
    try:
        for output in await env_outputs(client, recorder, faux_script, workspace):
            assert f"OPENAI_API_KEY={OPENAI_KEY}" in output
            assert "ANTHROPIC_API_KEY=" not in output and ANTHROPIC_KEY not in output
    finally:
        await recorder.stop()
