"""A client that speaks raw bytes to the real ``agentls serve``, as a broken or hostile client would.

:class:`RawServer` writes whatever bytes a test gives it and reads the server's output
with a framing reader of its own (independent of the server's), keeping every message.
Tests await the message they need with a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.server.conftest import WAIT, server_process

Message = dict[str, Any]


def _not_json(name: str) -> Any:
    raise AssertionError(f"the server wrote {name}, which is not JSON")


def frame(message: Any = None, *, body: bytes | None = None) -> bytes:
    """One LSP frame: ``message`` as JSON, or ``body`` as given."""
    data = body if body is not None else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


def request(msg_id: Any, method: str, params: Any = None) -> bytes:
    message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


def notification(method: str, params: Any = None) -> bytes:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


def well_formed_response(message: Message) -> bool:
    """A JSON-RPC 2.0 response: an id, and a result or a well-formed error (not both)."""
    if message.get("jsonrpc") != "2.0" or "id" not in message or "method" in message:
        return False
    if ("result" in message) == ("error" in message):
        return False
    error = message.get("error")
    if error is None:
        return True
    return isinstance(error.get("code"), int) and isinstance(error.get("message"), str)


class RawServer:
    """``agentls serve`` as a subprocess; every message it writes is kept in :attr:`messages`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.messages: list[Message] = []
        self.stderr = bytearray()
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self._stderr_reader = asyncio.get_running_loop().create_task(self._read_stderr())

    @classmethod
    async def start(cls, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> RawServer:
        process = await server_process(*args, stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd)
        return cls(process)

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        with contextlib.suppress(asyncio.IncompleteReadError):
            while True:
                length = None
                while (line := await stdout.readuntil(b"\r\n")) != b"\r\n":
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                assert length is not None, "a frame without Content-Length"
                self.messages.append(json.loads(await stdout.readexactly(length), parse_constant=_not_json))
                self._changed.set()
        self._changed.set()

    async def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while chunk := await stderr.read(65536):
            self.stderr += chunk

    async def send(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        await stdin.drain()

    async def wait_for(self, predicate: Callable[[Message], bool], seconds: float = WAIT) -> Message:
        """The first message (of all received so far) matching ``predicate``."""

        async def wait() -> Message:
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                if self._reader.done():
                    raise AssertionError(f"the server's output ended; last messages: {self.messages[-5:]}")
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(wait(), seconds)

    async def until(self, condition: Callable[[], bool], seconds: float = WAIT) -> None:
        """Wait until ``condition()`` holds, checking it as messages arrive."""

        async def wait() -> None:
            while not condition():
                if self._reader.done():
                    raise AssertionError(f"the server's output ended; last messages: {self.messages[-5:]}")
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), seconds)

    async def response(self, msg_id: Any, seconds: float = WAIT) -> Message:
        return await self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, seconds)

    async def call(self, msg_id: Any, method: str, params: Any = None) -> Message:
        await self.send(request(msg_id, method, params))
        return await self.response(msg_id)

    async def server_request(self, method: str, seconds: float = WAIT) -> Message:
        """The first request the server sent with this method."""
        return await self.wait_for(lambda m: m.get("method") == method and "id" in m, seconds)

    async def initialize(
        self, options: dict[str, Any], capabilities: dict[str, Any] | None = None
    ) -> Message:
        params = {"processId": None, "capabilities": capabilities or {}, "initializationOptions": options}
        answer = await self.call("init", "initialize", params)
        await self.send(notification("initialized", {}))
        return answer

    def responses(self) -> list[Message]:
        return [m for m in self.messages if "method" not in m]

    def notifications(self, method: str) -> list[Message]:
        return [m for m in self.messages if m.get("method") == method and "id" not in m]

    async def settled(self, run_id: str, seconds: float = WAIT) -> dict[str, Any]:
        note = await self.wait_for(
            lambda m: m.get("method") == "agent/settled" and m["params"]["runId"] == run_id, seconds
        )
        return note["params"]

    def events(self, session_id: str) -> list[dict[str, Any]]:
        return [
            m["params"]["event"]
            for m in self.notifications("agent/event")
            if m["params"]["sessionId"] == session_id
        ]

    async def new_session(self, msg_id: Any, cwd: Path, **params: Any) -> str:
        answer = await self.call(msg_id, "agent/newSession", {"cwd": str(cwd), **params})
        assert "result" in answer, answer
        return answer["result"]["sessionId"]

    async def close(self) -> int:
        """Close stdin and wait for the server to end; its exit code."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        try:
            code = await asyncio.wait_for(self.process.wait(), WAIT)
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
            await asyncio.wait_for(asyncio.gather(self._reader, self._stderr_reader), WAIT)
        return code
