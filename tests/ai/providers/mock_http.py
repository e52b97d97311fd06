"""A scripted HTTP/1.1 server on 127.0.0.1 for testing the providers with their real clients.

Each request the server receives takes the next :class:`Reply` of its script: a status,
headers and a body of chunks (optionally paced), sent with chunked transfer encoding
as a streaming API sends server-sent events. A reply can also misbehave: close the
connection before sending a byte (``reset``), stop in the middle of the body without
finishing it (``cut``), go silent without closing (``stall``) or never answer at all
(``silent``). Requests are recorded with their JSON bodies, so tests can assert on what
the provider sent; a client that closes the connection during a :class:`Pause` of a
body is counted as a hang-up (that is how an abort shows on the wire).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Pause:
    """Wait this long before the next chunk of a body (unless the client hangs up meanwhile)."""

    seconds: float


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    body: list[bytes | Pause] = field(default_factory=list)
    reset: bool = False
    """Close the connection as soon as the request is read, without a response."""
    cut: bool = False
    """Close the connection after the body's chunks without ending the chunked body."""
    stall: bool = False
    """After the body's chunks, keep the connection open and send nothing more."""
    silent: bool = False
    """Read the request and never answer it."""


def json_reply(status: int, data: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        headers={"content-type": "application/json", **(headers or {})},
        body=[json.dumps(data).encode()],
    )


def anthropic_sse(events: Iterable[dict[str, Any]]) -> list[bytes | Pause]:
    """Anthropic's SSE framing: ``event: <type>`` and ``data: <json>`` per event."""
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def openai_sse(chunks: Iterable[dict[str, Any]], *, done: bool = True) -> list[bytes | Pause]:
    """OpenAI's SSE framing: ``data: <json>`` per chunk, then ``data: [DONE]``."""
    body: list[bytes | Pause] = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks]
    if done:
        body.append(b"data: [DONE]\n\n")
    return body


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


class MockServer:
    """``async with MockServer([Reply(...), ...]) as server``: ``server.url``, ``server.requests``."""

    def __init__(self, replies: list[Reply] | None = None, *, keep_alive: bool = False) -> None:
        self.replies = list(replies or [])
        self.keep_alive = keep_alive
        """Serve the next request on the same connection (``connection: keep-alive``)."""
        self.connections = 0
        self.requests: list[Request] = []
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._arrived = asyncio.Event()
        self.hang_ups = 0
        """Responses the client closed while the server paused in their body."""
        self._hung_up = asyncio.Event()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def wait_for_requests(self, count: int = 1) -> None:
        """Until ``count`` requests have arrived."""
        while len(self.requests) < count:
            self._arrived.clear()
            await self._arrived.wait()

    async def wait_for_hang_up(self) -> None:
        """Until the client has closed a response during one of its pauses."""
        await self._hung_up.wait()

    async def __aenter__(self) -> MockServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._handlers):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while (request := await self._read_request(reader)) is not None:
                self.requests.append(request)
                self._arrived.set()
                unscripted = json_reply(500, {"error": "no reply scripted"})
                reply = self.replies.pop(0) if self.replies else unscripted
                await self._send(reply, reader, writer)
                if not self.keep_alive:
                    break
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return Request(method, path, headers, body)

    async def _send(self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if reply.silent:
            await asyncio.Event().wait()
        if reply.reset:
            transport = writer.transport
            sock = transport.get_extra_info("socket")
            if sock is not None:  # RST rather than FIN: "connection reset by peer"
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
            return
        reason = _REASONS.get(reply.status, "Status")
        connection = "keep-alive" if self.keep_alive else "close"
        head = [f"HTTP/1.1 {reply.status} {reason}", "transfer-encoding: chunked"]
        head.append(f"connection: {connection}")
        head += [f"{name}: {value}" for name, value in reply.headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        for part in reply.body:
            if isinstance(part, Pause):
                with contextlib.suppress(
                    TimeoutError
                ):  # the client has nothing more to send: EOF is a hang-up
                    if await asyncio.wait_for(reader.read(1), part.seconds) == b"":
                        self.hang_ups += 1
                        self._hung_up.set()
                        return
                continue
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            await writer.drain()
        if reply.stall:
            await asyncio.Event().wait()
        if reply.cut:
            writer.transport.abort()
            return
        writer.write(b"0\r\n\r\n")
        await writer.drain()
