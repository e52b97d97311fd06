"""An internal error in a handler: the client gets ``-32603`` and a message, no traceback; the log has it."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from agentls.fronts.lsp.app import create_server


class Capture:
    """A writer that keeps the frames the server writes."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.written = asyncio.Event()

    def write(self, data: bytes, *, at_once: bool = False) -> None:
        self.data += data
        self.written.set()

    async def response(self, msg_id: Any) -> dict[str, Any]:
        while not (found := [m for m in self.messages() if m.get("id") == msg_id and "method" not in m]):
            self.written.clear()
            await asyncio.wait_for(self.written.wait(), 5)
        [answer] = found
        return answer

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        found, rest = [], bytes(self.data)
        while rest:
            header, _, rest = rest.partition(b"\r\n\r\n")
            length = int(header.split(b":")[1])
            found.append(json.loads(rest[:length]))
            rest = rest[length:]
        return found


def body(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


async def test_an_internal_error_is_answered_without_a_traceback_and_logged_with_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = create_server()
    writer = Capture()
    server.connection.writer = writer

    async def broken(params: Any) -> None:
        raise KeyError("the bug")

    server.connection.requests["test/broken"] = broken
    server.connection.handle_body(
        body({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}})
    )
    with caplog.at_level(logging.ERROR, logger="agentls"):
        server.connection.handle_body(body({"jsonrpc": "2.0", "id": 1, "method": "test/broken"}))
        answer = await writer.response(1)
    assert answer["error"] == {
        "code": -32603,
        "message": "Internal error in test/broken: KeyError: 'the bug'",
    }
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.exc_info is not None and "test/broken failed" in record.getMessage()
