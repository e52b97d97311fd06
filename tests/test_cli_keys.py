"""``agentls run`` when the provider refuses the key (401): the error names the key's variable or
file, and no ``--continue`` is suggested. Real providers against a mock HTTP API."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.ai.providers.mock_http import MockServer, json_reply
from tests.conftest import PROJECT_ROOT
from tests.test_cli_run import TIMEOUT, environment

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "ANTHROPIC_BASE_URL": "", "OPENAI_BASE_URL": ""}


async def run(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "run",
        *args,
        cwd=PROJECT_ROOT,
        env={**environment(), **NO_KEYS, **env},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), TIMEOUT)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def test_a_refused_key_from_the_environment_names_its_variable(tmp_path: Path) -> None:
    refused = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    async with MockServer([json_reply(401, refused)]) as mock:
        code, _, stderr = await run(
            ["hi", "--model", "anthropic/claude-sonnet-4-6", "--data-dir", str(tmp_path / "data")],
            {"ANTHROPIC_API_KEY": "sk-ant-not-this-one", "ANTHROPIC_BASE_URL": mock.url},
        )
    assert code == 1
    assert (
        "agentls run: 401 authentication_error: invalid x-api-key. The API key of provider 'anthropic', "
        "read from the environment variable ANTHROPIC_API_KEY, was refused: check it." in stderr
    ), stderr
    assert "--continue" not in stderr and "sk-ant-not-this-one" not in stderr


async def test_a_refused_key_from_the_models_file_names_the_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    async with MockServer([json_reply(401, {"error": {"message": "Incorrect API key provided"}})]) as mock:
        provider = {
            "api": "openai-completions",
            "baseUrl": f"{mock.url}/v1",
            "apiKey": "sk-old",
            "models": [{"id": "m"}],
        }
        models = data / "models.json"
        models.write_text(json.dumps({"providers": {"local": provider}}), encoding="utf-8")
        code, _, stderr = await run(["hi", "--model", "local/m", "--data-dir", str(data)], {})
    assert code == 1
    assert (
        f"401: Incorrect API key provided. The API key of provider 'local', read from {models} "
        "(providers.local.apiKey), was refused: check it." in stderr
    ), stderr
    assert "--continue" not in stderr
