"""Hardening, round two, of the connection: bodies nested too deep, and a client that stops reading.

A body may nest 512 levels (``agentls.json_depth.MAX_DEPTH``); a deeper request is
still answered with its id (read from its top level), a deeper notification is ignored
and a deeper answer to one of the server's requests fails that request. The server
writes from a thread of its own, so a client that never reads its output neither keeps
it from ending on SIGTERM nor, past the unread-output bound, keeps it running at all.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.raw import RawServer, frame, notification, request
from tests.server.test_hardening_rpc import (
    error_of,
    result_text,
    run_with_an_editor,
    stored_messages,
    tool_results,
    write_an_open_file,
)
from tests.tools.test_bash import gone

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAX_DEPTH = 512
DEEP = 10_000


def nested(depth: int) -> str:
    """An array nesting ``depth`` levels."""
    return "[" * depth + "]" * depth


def deep_body(msg_id: Any, method: str, member: str = "params", depth: int = DEEP) -> bytes:
    """A request whose ``member`` holds an object nesting ``depth`` levels (the body: one more)."""
    head = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    value = '{"sessionId":' + nested(depth - 1) + "}"
    return frame(body=(json.dumps(head)[:-1] + f',"{member}":{value}}}').encode())


@pytest_asyncio.fixture(loop_scope="module")
async def server(data_dir: Path, faux_script: FauxScript) -> AsyncIterator[RawServer]:
    started = await RawServer.start()
    await started.initialize({"dataDir": str(data_dir), "fauxScript": str(faux_script.path)})
    yield started
    await started.close()


async def alive(server: RawServer, msg_id: str = "alive") -> None:
    assert "result" in await server.call(msg_id, "agent/listSessions", {})


# --- nesting -------------------------------------------------------------------------------


async def test_a_request_nested_too_deep_is_answered_with_its_id(server: RawServer) -> None:
    await server.send(deep_body(7, "agent/getState") + deep_body(8, "agent/getState", member="extra"))
    params, other = await server.response(7), await server.response(8)
    assert error_of(params) == (7, -32602) and params["error"]["data"] == {"kind": "invalidParams"}
    assert params["error"]["message"] == (
        "Invalid params for agent/getState: the message nests deeper than 512 levels"
    )
    assert error_of(other) == (8, -32600) and "nests deeper than 512 levels" in other["error"]["message"]
    await alive(server)


async def test_the_nesting_bound_is_exactly_512_levels(server: RawServer) -> None:
    # params is level 2, so its sessionId nests 510 levels to reach 512 in all
    at_bound = deep_body(1, "agent/getState", depth=MAX_DEPTH - 1)
    beyond = deep_body(2, "agent/getState", depth=MAX_DEPTH)
    await server.send(at_bound + beyond)
    read, refused = await server.response(1), await server.response(2)
    assert error_of(read) == (1, -32602) and "sessionId" in read["error"]["message"]  # read, then checked
    assert "nests deeper" not in read["error"]["message"]
    assert error_of(refused) == (2, -32602) and "nests deeper than 512 levels" in refused["error"]["message"]


async def test_a_notification_nested_too_deep_is_ignored_with_a_warning(server: RawServer) -> None:
    deep = '{"x":' + nested(DEEP) + "}"
    for method in ("textDocument/didOpen", "$/cancelRequest", "agent/whatever"):
        await server.send(frame(body=f'{{"jsonrpc":"2.0","method":"{method}","params":{deep}}}'.encode()))
    await alive(server)
    warnings = await server.wait_for(
        lambda m: "$/cancelRequest: ignored, the message nests deeper than 512 levels" in str(m.get("params"))
    )
    assert warnings["method"] == "window/logMessage"
    assert not [m for m in server.responses() if m.get("id") is None]  # nothing to answer


async def test_a_first_message_nested_too_deep_is_answered_with_its_id(data_dir: Path) -> None:
    """The first message goes through the early loader (``boot.py``) before the server is imported."""
    server = await RawServer.start()
    try:
        await server.send(deep_body("init", "initialize"))
        assert error_of(await server.response("init")) == ("init", -32602)
        await server.send(deep_body(7, "agent/getState"))
        assert error_of(await server.response(7)) == (7, -32602)
        params = {"processId": None, "capabilities": {}, "initializationOptions": {"dataDir": str(data_dir)}}
        assert "result" in await server.call("again", "initialize", params)
        await alive(server)
    finally:
        await server.close()


def deep_answer(msg_id: Any) -> bytes:
    return frame(body=f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{nested(DEEP)}}}'.encode())


async def test_a_permission_answer_nested_too_deep_rejects_the_call(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    server, session_id, run_id = await run_with_an_editor(
        data_dir, faux_script, workspace, tool_call("b", "bash", {"command": "echo ran > ran.txt"})
    )
    try:
        question = await server.server_request("agent/requestPermission")
        await server.send(deep_answer(question["id"]))
        assert (await server.settled(run_id))["stopReason"] == "stop"
        [result] = tool_results(server, session_id)
        assert "nests deeper than 512 levels" in result_text(result) and result["isError"] is True
        assert not (workspace / "ran.txt").exists()
    finally:
        await server.close()


async def test_an_apply_edit_answer_nested_too_deep_writes_nothing(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    server, session_id, run_id, target = await write_an_open_file(data_dir, faux_script, workspace)
    try:
        edit = await server.server_request("workspace/applyEdit")
        await server.send(deep_answer(edit["id"]))
        await server.settled(run_id)
        [result] = tool_results(server, session_id)
        assert result["isError"] is True and "nests deeper than 512 levels" in result_text(result), result
        assert target.read_text() == "old text\n"
    finally:
        await server.close()


# --- a client that stops reading -----------------------------------------------------------

FLOOD = "A client that stops reading must not stop the server. " * 2000
"""About 100 KB of text: at 2000 chunks of 4 characters a second, its events fill a pipe in well under
a second, and the run is still streaming seconds later."""


class StalledClient:
    """A client that reads the server's output until it has a session, then stops.

    The output comes through a pipe of the test's own, not the subprocess's: asyncio's
    ``Process.wait()`` also waits for the end of the subprocess's pipes, which an unread
    pipe never reaches.
    """

    def __init__(
        self, process: asyncio.subprocess.Process, output: asyncio.StreamReader, pipe: asyncio.BaseTransport
    ) -> None:
        self.process = process
        self.output = output
        self._pipe = pipe

    async def end(self) -> None:
        """Kill the server if it still runs; close the pipe."""
        if self.process.returncode is None:
            self.process.kill()
            await within(self.process.wait())
        self._pipe.close()

    @classmethod
    async def start(cls, **env: str) -> StalledClient:
        read_end, write_end = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "agentls",
                "serve",
                stdin=asyncio.subprocess.PIPE,
                stdout=write_end,
                stderr=asyncio.subprocess.DEVNULL,
                env={**os.environ, **env},
            )
        finally:
            os.close(write_end)
        output = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        pipe, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(output), os.fdopen(read_end, "rb")
        )
        return cls(process, output, pipe)

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def read_until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Read frames until one matches (the client still reads here)."""
        while True:
            length = 0
            while (line := await within(self.output.readuntil(b"\r\n"))) != b"\r\n":
                name, _, value = line.decode().partition(":")
                length = int(value) if name.lower() == "content-length" else length
            message = json.loads(await within(self.output.readexactly(length)))
            if predicate(message):
                return message

    async def call(self, msg_id: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.send(request(msg_id, method, params))
        return await self.read_until(lambda m: m.get("id") == msg_id and "method" not in m)

    async def start_a_flood(self, data_dir: Path, faux_script: FauxScript, workspace: Path) -> int:
        """A run whose bash call leaves ``sleep`` running, then floods the pipe; the sleep's pid.

        Once the pid is known the client reads nothing more.
        """
        faux_script(
            [
                {
                    "content": [tool_call("b", "bash", {"command": "sleep 1000 & echo $!"})],
                    "stopReason": "toolUse",
                },
                {"content": FLOOD},
            ],
            tokens_per_second=2000,
            token_size=(1, 1),
        )
        options = {"dataDir": str(data_dir), "fauxScript": str(faux_script.path)}
        await self.call(
            "init", "initialize", {"processId": None, "capabilities": {}, "initializationOptions": options}
        )
        await self.send(notification("initialized", {}))
        params = {"cwd": str(workspace), "permissions": {"bash": "allow"}}
        self.session_id = (await self.call("new", "agent/newSession", params))["result"]["sessionId"]
        await self.send(request("go", "agent/prompt", {"sessionId": self.session_id, "text": "go"}))
        end = await self.read_until(
            lambda m: (
                m.get("method") == "agent/event" and m["params"]["event"]["type"] == "tool_execution_end"
            )
        )
        return int(end["params"]["event"]["result"]["content"][0]["text"].split()[0])

    def writing_blocked(self) -> bool:
        """A thread of the server waits in a write into the full pipe (Linux's ``/proc``)."""
        return any(
            "pipe_write" in Path(task, "wchan").read_text()
            for task in glob.glob(f"/proc/{self.process.pid}/task/*")
        )


async def until_blocked(client: StalledClient) -> None:
    """Until the server's output waits for the client (no event says so: ``/proc`` is polled)."""

    async def wait() -> None:
        while not client.writing_blocked():  # noqa: ASYNC110 - a thread's state has no event to await
            await asyncio.sleep(0.02)

    await within(wait())


async def stalled(
    data_dir: Path, faux_script: FauxScript, workspace: Path, **env: str
) -> tuple[StalledClient, int]:
    """A server whose client stopped reading while its run floods the pipe; (client, the sleep's pid)."""
    client = await StalledClient.start(**env)
    pid = await client.start_a_flood(data_dir, faux_script, workspace)
    await until_blocked(client)
    return client, pid


async def test_sigterm_ends_the_server_whose_client_stopped_reading(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    client, pid = await stalled(data_dir, faux_script, workspace)
    try:
        client.process.send_signal(signal.SIGTERM)
        assert await within(client.process.wait(), 5) == 0
        assert gone(pid)
        *_, last = stored_messages(data_dir, client.session_id)
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    finally:
        await client.end()


async def test_a_client_that_leaves_too_much_unread_is_taken_as_gone(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    client, pid = await stalled(data_dir, faux_script, workspace, AGENTLS_MAX_UNREAD_BYTES="100000")
    try:
        assert await within(client.process.wait()) == 0  # it ends on its own, as at the end of input
        assert gone(pid)
        *_, last = stored_messages(data_dir, client.session_id)
        assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    finally:
        await client.end()


async def test_requests_read_before_the_end_of_input_are_answered_and_runs_aborted(
    data_dir: Path, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script([{"content": "word " * 5000}], slow=True)  # an answer that would stream for minutes
    raw = await RawServer.start()
    await raw.initialize({"dataDir": str(data_dir), "fauxScript": str(faux_script.path)})
    session = await raw.new_session(1, tmp_path)
    # the last frames: a prompt, a second session, and the end of input right after them
    await raw.send(request(2, "agent/prompt", {"sessionId": session, "text": "talk"}))
    await raw.send(request(3, "agent/newSession", {"cwd": str(tmp_path)}))
    assert await raw.close() == 0
    answers = {m["id"]: m for m in raw.responses()}
    assert (await raw.settled(answers[2]["result"]["runId"]))["stopReason"] == "aborted"
    assert answers[3]["result"]["sessionId"] not in (None, session)
