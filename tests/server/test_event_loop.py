"""The servers' event loop (``agentls.event_loop``), for real: ``agentls serve`` runs a prompt whose
``bash`` call goes through the loop's pipes on uvloop's loop by default and on asyncio's with
``AGENTLS_EVENT_LOOP=asyncio`` (which loop ran is read from the process's mapped libraries), and a
value the servers cannot honour stops them with a clear error before anything starts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import FauxScript, server_options, tool_call
from tests.server.raw import RawServer, request

ENV = "AGENTLS_EVENT_LOOP"


def environment(value: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if value is not None:
        env[ENV] = value
    return env


def uses_uvloop(pid: int) -> bool:
    """Whether uvloop's extension module is mapped into the process (imported by its loop)."""
    return "/uvloop/" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize(("value", "uvloop"), [(None, True), ("uvloop", True), ("asyncio", False)])
async def test_a_prompt_with_a_bash_call_runs_on_the_chosen_loop(
    value: str | None, uvloop: bool, data_dir: Path, workspace: Path, faux_script: FauxScript
) -> None:
    faux_script(
        [
            {"content": [tool_call("b1", "bash", {"command": "echo from-bash"})], "stopReason": "toolUse"},
            {"content": "Done."},
        ]
    )
    server = await RawServer.start(env=environment(value))
    await server.initialize({**server_options(data_dir, faux_script), "permissions": {"bash": "allow"}})
    session_id = await server.new_session(2, workspace)
    answer = await server.call(3, "agent/prompt", {"sessionId": session_id, "text": "run it"})
    settled = await server.settled(answer["result"]["runId"])
    events = server.events(session_id)
    assert uses_uvloop(server.process.pid) is uvloop
    await server.send(request(4, "shutdown"))
    assert await server.close() == 0

    assert settled["stopReason"] == "stop", settled
    ended = next(e for e in events if e["type"] == "tool_execution_end")
    assert not ended["isError"] and "from-bash" in ended["result"]["content"][0]["text"], ended
    assert [e for e in events if e["type"] == "message_end"][-1]["message"]["content"][0]["text"] == "Done."


@pytest.mark.parametrize("command", ["serve", "acp"])
@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("libuv", f"${ENV} must be 'uvloop' or 'asyncio', not 'libuv'"),
        ("UVLOOP", f"${ENV} must be 'uvloop' or 'asyncio', not 'UVLOOP'"),
    ],
)
async def test_a_loop_the_servers_cannot_run_stops_them_with_a_clear_error(
    command: str, value: str, error: str
) -> None:
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "agentls", command],
        input=b"",
        capture_output=True,
        env=environment(value),
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b"", done
    assert done.stderr.decode().strip().endswith(f"agentls: error: {error}"), done.stderr


async def test_without_uvloop_the_server_runs_on_asyncio_and_refuses_uvloop_asked_for(
    tmp_path: Path, data_dir: Path, faux_script: FauxScript
) -> None:
    """An interpreter that cannot import uvloop (a module of that name that fails) stands for a
    platform without it: unset, the server answers on asyncio's loop; ``uvloop`` asked for is refused."""
    (tmp_path / "uvloop").mkdir()
    (tmp_path / "uvloop" / "__init__.py").write_text("raise ImportError('no uvloop here')\n")
    env = environment(None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(tmp_path), env.get("PYTHONPATH", "")] if p)

    server = await RawServer.start(env=env)
    await server.initialize(server_options(data_dir, faux_script))
    listing = await server.call(2, "agent/listModels", {})
    assert not uses_uvloop(server.process.pid)
    await server.send(request(3, "shutdown"))
    assert await server.close() == 0
    assert [m["id"] for m in listing["result"]["models"]] == ["faux-1"], listing

    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "agentls", "serve"],
        input=b"",
        capture_output=True,
        env={**env, ENV: "uvloop"},
        timeout=60,
    )
    refused = f"agentls: error: ${ENV}=uvloop, but uvloop is not installed"
    assert done.returncode == 2 and done.stderr.decode().strip().endswith(refused), done
