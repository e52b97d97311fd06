"""``agentls acp`` against lines nested too deep and a client that stops reading, in raw NDJSON.

As ``agentls serve`` (``tests/server/test_hardening_rpc_round2.py``): a line may nest 512
levels; a deeper request is answered with its id, a deeper notification dropped, a
deeper answer to a permission question rejects the call. The output is written from a
thread, so SIGTERM ends the agent (and its runs' processes) while its client reads
nothing, and a client that leaves too much unread is taken as gone.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp import script
from tests.server.conftest import tool_call, within
from tests.tools.test_bash import gone

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEEP = 10_000
FLOOD = "A client that stops reading must not stop the agent. " * 2000


def line(message: dict[str, Any], **deep: int) -> bytes:
    """``message`` as an NDJSON line, with each ``deep`` member an array nesting that many levels."""
    text = json.dumps(message)[:-1]
    for name, depth in deep.items():
        text += f', "{name}": ' + "[" * depth + "]" * depth
    return (text + "}\n").encode()


class RawAgent:
    """``agentls acp`` on pipes of the test's own (see ``StalledClient`` in the server tests)."""

    def __init__(self, process: asyncio.subprocess.Process, output: asyncio.StreamReader, pipe: Any) -> None:
        self.process = process
        self.output = output
        self._pipe = pipe
        self.received: list[dict[str, Any]] = []

    @classmethod
    async def start(cls, tmp_path: Path, faux: Path, **env: str) -> RawAgent:
        read_end, write_end = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agentls", "acp", "--data-dir", str(tmp_path / "data"),
                "--faux-script", str(faux),
                stdin=asyncio.subprocess.PIPE, stdout=write_end, stderr=asyncio.subprocess.DEVNULL,
                env={**os.environ, **env},
            )  # fmt: skip
        finally:
            os.close(write_end)
        output = asyncio.StreamReader()
        pipe, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(output), os.fdopen(read_end, "rb")
        )
        return cls(process, output, pipe)

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def read_until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            message = json.loads(await within(self.output.readline()))
            self.received.append(message)
            if predicate(message):
                return message

    async def call(self, msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.send(line({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}))
        return await self.read_until(lambda m: m.get("id") == msg_id and "method" not in m)

    async def session(self, cwd: Path) -> str:
        assert "result" in await self.call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        answer = await self.call(1, "session/new", {"cwd": str(cwd), "mcpServers": []})
        return str(answer["result"]["sessionId"])

    def writing_blocked(self) -> bool:
        """A thread of the agent waits in a write into the full pipe (Linux's ``/proc``)."""
        tasks = glob.glob(f"/proc/{self.process.pid}/task/*")
        return any("pipe_write" in Path(task, "wchan").read_text() for task in tasks)

    async def end(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await within(self.process.wait())
        self._pipe.close()


def prompt(msg_id: int, session: str) -> bytes:
    params = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
    return line({"jsonrpc": "2.0", "id": msg_id, "method": "session/prompt", "params": params})


async def test_lines_nested_too_deep_are_answered_with_their_id(tmp_path: Path) -> None:
    agent = await RawAgent.start(tmp_path, script(tmp_path / "faux.json", "ok"))
    try:
        session = await agent.session(tmp_path)
        await agent.send(
            line({"jsonrpc": "2.0", "id": 7, "method": "session/set_mode"}, params=DEEP)
            + line({"jsonrpc": "2.0", "id": 8, "method": "session/set_mode", "params": {}}, extra=DEEP)
            + line({"jsonrpc": "2.0", "method": "session/cancel"}, params=DEEP)
            + b"[" * DEEP
            + b"]" * DEEP
            + b"\n"
        )
        answers = [await agent.read_until(lambda m: "error" in m) for _ in range(3)]
        assert [(a["id"], a["error"]["code"]) for a in answers] == [(7, -32602), (8, -32600), (None, -32600)]
        assert all("nests deeper than 512 levels" in a["error"]["message"] for a in answers)
        ended = await agent.call(9, "session/prompt", json.loads(prompt(9, session))["params"])
        assert ended["result"]["stopReason"] == "end_turn"  # still reading, the notification dropped
    finally:
        await agent.end()


async def test_a_permission_answer_nested_too_deep_rejects_the_call(tmp_path: Path) -> None:
    faux = script(tmp_path / "faux.json", [tool_call("b", "bash", {"command": "touch ran"})], "done")
    agent = await RawAgent.start(tmp_path, faux)
    try:
        session = await agent.session(tmp_path)
        await agent.send(prompt(2, session))
        question = await agent.read_until(lambda m: m.get("method") == "session/request_permission")
        await agent.send(line({"jsonrpc": "2.0", "id": question["id"]}, result=DEEP))
        ended = await agent.read_until(lambda m: m.get("id") == 2)
        assert ended["result"]["stopReason"] == "end_turn"
        [update] = [
            m["params"]["update"]
            for m in agent.received
            if m.get("method") == "session/update" and m["params"]["update"].get("status") == "failed"
        ]
        assert "nests deeper than 512 levels" in json.dumps(update)
        assert not (tmp_path / "ran").exists()
    finally:
        await agent.end()


async def stalled(tmp_path: Path, **env: str) -> tuple[RawAgent, int]:
    """An agent whose client stopped reading while its run floods the pipe; (agent, a leftover's pid)."""
    pid_file = tmp_path / "pid"
    faux = tmp_path / "faux.json"
    bash = tool_call("b", "bash", {"command": f"sleep 1000 & echo $! > {pid_file}"})
    faux.write_text(
        json.dumps(
            {
                "responses": [{"content": [bash], "stopReason": "toolUse"}, {"content": FLOOD}],
                "tokensPerSecond": 2000,
                "tokenSize": {"min": 1, "max": 1},
            }
        )
    )
    agent = await RawAgent.start(tmp_path, faux, **env)
    session = await agent.session(tmp_path)
    await agent.send(prompt(2, session))
    question = await agent.read_until(lambda m: m.get("method") == "session/request_permission")
    outcome = {"outcome": {"outcome": "selected", "optionId": "allowOnce"}}
    await agent.send(line({"jsonrpc": "2.0", "id": question["id"], "result": outcome}))
    await agent.read_until(
        lambda m: m.get("method") == "session/update" and m["params"]["update"].get("status") == "completed"
    )  # from here on nothing more is read

    async def blocked() -> None:
        while not agent.writing_blocked():  # noqa: ASYNC110 - a thread's state has no event to await
            await asyncio.sleep(0.02)

    await within(blocked())
    return agent, int(pid_file.read_text())


async def test_sigterm_ends_the_agent_whose_client_stopped_reading(tmp_path: Path) -> None:
    agent, pid = await stalled(tmp_path)
    try:
        agent.process.send_signal(signal.SIGTERM)
        assert await within(agent.process.wait(), 5) == 0
        assert gone(pid)
    finally:
        await agent.end()


async def test_a_client_that_leaves_too_much_unread_is_taken_as_gone(tmp_path: Path) -> None:
    agent, pid = await stalled(tmp_path, AGENTLS_MAX_UNREAD_BYTES="100000")
    try:
        assert await within(agent.process.wait()) == 0  # it ends on its own, as at the end of input
        assert gone(pid)
    finally:
        await agent.end()
