"""End to end: API keys and header values never leave the server process.

``models.json`` in the server's data directory configures providers that point at a
mock API on 127.0.0.1 with keys pasted carelessly: with a trailing newline (which is
stripped: the request succeeds), with a newline inside (refused, naming the field), in
the variable that ``apiKeyEnv`` names with a trailing newline, and as header values.
The server runs through ``tee``, so that the test sees every byte it writes to stdout;
its stderr goes to a file. Neither, nor any notification, nor the session files, may
hold any part of a key.
"""

from __future__ import annotations

import json
import logging
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from agentls.ai.secrets import REDACTED, register
from agentls.client import AgentClient
from agentls.fronts.lsp.logs import ClientLogHandler
from agentls.fronts.lsp.rpc import Connection

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text, o_chunk
from tests.ai.providers.mock_http import MockServer, Reply, json_reply, openai_sse
from tests.server.conftest import Recorder, Servers, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

TRAILING_KEY = "sk-e2e-trailing-0123456789"
"""``apiKey`` of provider ``trailing``, written with a trailing newline."""
INNER_KEY = "sk-e2e-inner-first-half\nsk-e2e-inner-second-half"
ENV_KEY = "sk-e2e-from-env-0123456789"
"""The value of :data:`KEY_VARIABLE`, set with a trailing newline."""
KEY_VARIABLE = "AGENTLS_E2E_SECRET_KEY"
PROXY_TOKEN = "proxy-e2e-token-0123456789"
"""A header value of provider ``fromenv``, with surrounding whitespace."""
MODEL_TOKEN = "model-e2e-token-0123456789"
"""A header value of the model of provider ``trailing``."""
INNER_HEADER = "hdr-e2e-inner-first\nhdr-e2e-inner-second"

SECRETS = [TRAILING_KEY, *INNER_KEY.split("\n"), ENV_KEY, PROXY_TOKEN, MODEL_TOKEN, *INNER_HEADER.split("\n")]
"""Every piece of every credential: none may appear in anything the server writes."""

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "ANTHROPIC_BASE_URL": "", "OPENAI_BASE_URL": ""}
"""The developer's keys must not change what these servers see."""


def write_models_file(data_dir: Path, url: str) -> Path:
    def openai(api_key: str | None = None, **more: Any) -> dict[str, Any]:
        entry = {"api": "openai-completions", "baseUrl": f"{url}/v1", "maxRetries": 0, **more}
        return {**entry, "apiKey": api_key} if api_key is not None else entry

    config = {
        "providers": {
            "trailing": openai(
                TRAILING_KEY + "\n", models=[{"id": "trail-model", "headers": {"X-Model-Token": MODEL_TOKEN}}]
            ),
            "inner": openai(INNER_KEY, models=[{"id": "inner-model"}]),
            "fromenv": {
                "api": "anthropic-messages",
                "baseUrl": url,
                "apiKeyEnv": KEY_VARIABLE,
                "headers": {"X-Proxy-Token": f" {PROXY_TOKEN}\r\n"},
                "maxRetries": 0,
                "models": [{"id": "env-model"}],
            },
            "badheader": openai(headers={"X-Proxy-Token": INNER_HEADER}, models=[{"id": "header-model"}]),
        }
    }
    path = data_dir / "models.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def teed_server(stdout_copy: Path, stderr_file: Path) -> list[str]:
    """``agentls serve`` with a copy of all it writes to stdout in ``stdout_copy``, its stderr in a file."""
    script = '"$0" -m agentls serve 2>"$1" | tee "$2"'
    return ["sh", "-c", script, sys.executable, str(stderr_file), str(stdout_copy)]


async def prompt(client: AgentClient, recorder: Recorder, session: str, text: str) -> dict[str, Any]:
    run = await within(client.prompt(session, text))
    return await recorder.settled(run.run_id)


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} holds a secret"


def assert_nothing_written(stdout_copy: Path, stderr_file: Path, data_dir: Path, models_file: Path) -> None:
    """No secret in the server's stdout (all of it), its stderr, or the files of its data directory."""
    written = stdout_copy.read_bytes().decode("utf-8")
    assert "Hi from trailing" in written and "providers.inner.apiKey" in written
    assert_no_secret(written, "the server's stdout")
    assert_no_secret(stderr_file.read_text(encoding="utf-8"), "the server's stderr")
    session_files = [p for p in data_dir.rglob("*") if p.is_file() and p != models_file]
    assert session_files
    for path in session_files:
        data = path.read_bytes()
        if "objects" in path.relative_to(data_dir).parts:  # a snapshot's git object: zlib-compressed
            data = zlib.decompress(data)
        assert_no_secret(data.decode("utf-8", errors="replace"), str(path))


async def test_keys_are_stripped_refused_or_redacted_and_never_leave_the_server(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    replies = [
        Reply(
            body=openai_sse(
                [o_chunk({"role": "assistant", "content": "Hi from trailing"}), o_chunk({}, "stop")]
            )
        ),
        a_reply(a_start(model="env-model"), a_text(0, "Hi from env"), a_end()),
        json_reply(401, {"error": {"message": f"Incorrect API key provided: {TRAILING_KEY}"}}),
    ]
    stdout_copy, stderr_file = tmp_path / "stdout.bin", tmp_path / "stderr.txt"
    async with MockServer(replies) as mock:
        models_file = write_models_file(data_dir, mock.url)
        client = await servers.start(
            {"dataDir": str(data_dir)},
            command=teed_server(stdout_copy, stderr_file),
            env={**NO_KEYS, KEY_VARIABLE: ENV_KEY + "\n"},
        )
        recorder = await Recorder(client).start()
        try:
            listed = await within(client.list_models())
            assert [m["id"] for m in listed] == ["trail-model", "inner-model", "env-model", "header-model"]
            assert all("headers" not in m for m in listed)

            trailing = await within(client.new_session(cwd=str(workspace), model=("trailing", "trail-model")))
            settled = await prompt(client, recorder, trailing, "Hello")
            assert settled["stopReason"] == "stop", settled.get("errorMessage")
            request = mock.requests[0]
            assert request.headers["authorization"] == f"Bearer {TRAILING_KEY}"
            assert request.headers["x-model-token"] == MODEL_TOKEN

            from_env = await within(client.new_session(cwd=str(workspace), model=("fromenv", "env-model")))
            settled = await prompt(client, recorder, from_env, "Hello")
            assert settled["stopReason"] == "stop", settled.get("errorMessage")
            request = mock.requests[1]
            # the SDK sends the key as x-api-key or as a bearer token
            sent = request.headers.get("x-api-key", request.headers.get("authorization"))
            assert sent in (ENV_KEY, f"Bearer {ENV_KEY}")
            assert request.headers["x-proxy-token"] == PROXY_TOKEN

            inner = await within(client.new_session(cwd=str(workspace), model=("inner", "inner-model")))
            settled = await prompt(client, recorder, inner, "Hello")
            error = settled["errorMessage"]
            assert settled["stopReason"] == "error"
            assert error.startswith(f"The API key in {models_file} (providers.inner.apiKey) cannot be sent")
            assert "line break" in error

            bad_header = await within(
                client.new_session(cwd=str(workspace), model=("badheader", "header-model"))
            )
            settled = await prompt(client, recorder, bad_header, "Hello")
            assert settled["stopReason"] == "error"
            assert settled["errorMessage"].startswith(
                f'Header "X-Proxy-Token" in {models_file} (providers.badheader.headers) cannot be sent'
            )
            assert len(mock.requests) == 2, "the refused credentials were never sent"

            settled = await prompt(client, recorder, trailing, "Again")  # the API echoes the key
            assert settled["stopReason"] == "error"
            assert settled["errorMessage"] == (
                f"401: Incorrect API key provided: {REDACTED}. The API key of provider 'trailing', "
                f"read from {models_file} (providers.trailing.apiKey), was refused: check it."
            )
            messages = (await within(client.get_messages(trailing))).messages
            assert messages[-1]["errorMessage"] == settled["errorMessage"]
            assert_no_secret(json.dumps(messages), "agent/getMessages")
            state = await within(client.get_state(inner))
            assert_no_secret(json.dumps(state.model_dump(by_alias=True)), "agent/getState")
        finally:
            await recorder.stop()
            await within(client.close(), 15)

    assert recorder.notes, "the notifications were recorded"
    for note in recorder.notes:
        assert_no_secret(json.dumps(note.params), f"a {note.method} notification")
    assert_nothing_written(stdout_copy, stderr_file, data_dir, models_file)


async def test_list_models_carries_no_headers(servers: Servers, data_dir: Path, workspace: Path) -> None:
    write_models_file(data_dir, "http://127.0.0.1:9")
    client = await servers.start({"dataDir": str(data_dir)}, env={**NO_KEYS, KEY_VARIABLE: ENV_KEY})
    for session_id in (None, await within(client.new_session(cwd=str(workspace)))):
        listed = await within(client.list_models(session_id))
        assert {m["provider"] for m in listed} == {"trailing", "inner", "fromenv", "badheader"}
        assert all("headers" not in m and m["baseUrl"].startswith("http://127.0.0.1:9") for m in listed)
        assert_no_secret(json.dumps(listed), "agent/listModels")
    await within(client.close(), 15)


class _Frames:
    """The writer of a real :class:`Connection`: keeps the bodies of the frames it is given."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    def write(self, data: bytes, *, at_once: bool = False) -> None:
        self.bodies.append(json.loads(data.partition(b"\r\n\r\n")[2]))


class _Server:
    def __init__(self) -> None:
        self.connection = Connection()
        self.frames = _Frames()
        self.connection.writer = self.frames


async def test_log_messages_sent_to_the_client_are_redacted() -> None:
    register("sk-e2e-log-0123456789")
    server = _Server()
    handler = ClientLogHandler(server)
    log = logging.getLogger("agentls.tests.secrets")
    log.addHandler(handler)
    try:
        log.warning("request with %s failed", "sk-e2e-log-0123456789")
        log.warning("sent Authorization: Bearer sk-never-registered-42")
    finally:
        log.removeHandler(handler)
    messages = [body["params"]["message"] for body in server.frames.bodies]
    assert messages == [
        f"agentls: request with {REDACTED} failed",
        f"agentls: sent Authorization: Bearer {REDACTED}",
    ]
