"""The stdio transport to an MCP server: the SDK's ``stdio_client``, with a reader that bounds what it reads.

The SDK's process handling is kept (its spawn in a process group of its own, its
shutdown: stdin closed, a grace, then the process tree killed). Its reader is not: it
joins each chunk to the line read so far (quadratic: a 70 MB answer took 40 s and
500 MB), and a line it cannot parse (JSON nested deeper than pydantic's parser goes,
about 200 levels) is handed on as a bare exception, so the request it answered is
never answered and its call waits forever.

:class:`_Lines` reads in time linear in the size and refuses a line longer than
:data:`MAX_MESSAGE_BYTES` without holding it; a line is parsed by orjson (in a worker
thread when it is long) and refused when it nests more than :data:`MAX_MESSAGE_DEPTH`
levels. An answer that cannot be read becomes a JSON-RPC error for its request's id
(found by :func:`~agentls.json_depth.top_level`, which does not recurse), so the call
ends at once with a message that says why, and the connection goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
import orjson
from mcp.client._transport import TransportStreams
from mcp.client.stdio import (
    StdioServerParameters,
    _aclose_all,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _stop_server_process,
    get_default_environment,
)
from mcp.shared.message import SessionMessage

from agentls.json_depth import depth_of, top_level, valid_id

MAX_MESSAGE_BYTES = 128 * 1024 * 1024
"""The longest message (one line) read from a server; a longer one is dropped as it arrives."""
MAX_MESSAGE_DEPTH = 256
"""Levels of nesting a message may have: the SDK re-serializes a result with pydantic, which
stops at about 260 (orjson reads 1024); an answer deeper than this ends its call with an error."""
THREAD_PARSE_BYTES = 1024 * 1024
"""A longer message is parsed in a worker thread, not on the event loop."""
READ_CHUNK = 1024 * 1024
_HEAD_BYTES = 64 * 1024
"""What is kept of a line that is too long: enough to find its id in."""
_WRITER_FLUSH_SECONDS = 0.5


def _unreadable(line: bytes | bytearray, reason: str, error: Exception) -> SessionMessage | Exception:
    """A JSON-RPC error answering the request ``line`` answered, or ``error`` if it answered none."""
    top = top_level(line)
    request_id = top.fields.get("id")
    if top.kind != "response" or not valid_id(request_id):
        return error
    message = f"its answer could not be read: {reason}"
    failure = types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=types.PARSE_ERROR, message=message)
    )
    return SessionMessage(failure)


def _parse(line: bytearray) -> SessionMessage | Exception:
    """One message; parsed by orjson, which makes each string once (pydantic's JSON parser held a
    70 MB answer four times over), then validated as Python data, which keeps those strings."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        if "depth limit" in str(error):
            return _too_deep(line)
        return _unreadable(line, f"it is not JSON ({error})", error)
    brackets = line.count(b"[") + line.count(b"{")  # no more than the limit: no need to scan
    if brackets > MAX_MESSAGE_DEPTH and depth_of(line) > MAX_MESSAGE_DEPTH:
        return _too_deep(line)
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
    except (ValueError, RecursionError) as error:
        reason = f"it is not a JSON-RPC message ({' '.join(str(error).split())[:300]})"
        return _unreadable(line, reason, error)


def _too_deep(line: bytearray) -> SessionMessage | Exception:
    error = ValueError(f"an MCP message nested more than {MAX_MESSAGE_DEPTH} levels was dropped")
    return _unreadable(line, f"its JSON nests more than {MAX_MESSAGE_DEPTH} levels deep", error)


async def _parsed(line: bytearray) -> SessionMessage | Exception:
    if len(line) > THREAD_PARSE_BYTES:
        return await anyio.to_thread.run_sync(_parse, line)
    return _parse(line)


class _Lines:
    """Newline-delimited messages from a byte stream, each within :data:`MAX_MESSAGE_BYTES`."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._limit = limit
        self._line = bytearray()
        self._size = 0
        """Bytes of the current line so far (only its head is kept once it is too long)."""

    def feed(self, chunk: bytes) -> list[bytearray | SessionMessage | Exception]:
        """The lines that ``chunk`` ends, to be parsed, and errors for those that cannot be."""
        messages: list[bytearray | SessionMessage | Exception] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            if (message := self._end_line()) is not None:
                messages.append(message)
            start = end + 1
        self._add(chunk[start:])
        return messages

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size <= self._limit:
            self._line += piece
        elif len(self._line) < _HEAD_BYTES:
            self._line += piece[: _HEAD_BYTES - len(self._line)]
        elif len(self._line) > _HEAD_BYTES:
            del self._line[_HEAD_BYTES:]

    def _end_line(self) -> bytearray | SessionMessage | Exception | None:
        line, size = self._line, self._size
        self._line, self._size = bytearray(), 0  # the line itself is handed on, not copied
        if size > self._limit:
            reason = f"it is {size} bytes, more than the {self._limit} agentls reads"
            return _unreadable(line, reason, ValueError(f"an MCP message of {size} bytes was dropped"))
        return line if line.strip() else None


@asynccontextmanager
async def stdio_transport(server: StdioServerParameters, errlog: IO[str]) -> AsyncIterator[TransportStreams]:
    """Start the server and speak to it over its stdin and stdout, as the SDK's ``stdio_client`` does."""
    command = await _get_executable_command(server.command)
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,  # type: ignore[arg-type]
        cwd=server.cwd,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def read() -> None:
        assert process.stdout is not None
        lines = _Lines()
        try:
            async with read_writer:
                try:
                    while True:
                        try:
                            chunk = await process.stdout.receive(READ_CHUNK)
                        except anyio.EndOfStream:
                            return
                        for item in lines.feed(chunk):
                            await read_writer.send(
                                await _parsed(item) if isinstance(item, bytearray) else item
                            )
                finally:
                    await _drain_stdout(process)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError):
            pass  # the session or the pipe is gone: the session sees the read stream end

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the server may live on: end the session's reads, not hang them
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_SECONDS):
            await writer_done.wait()
        await _stop_server_process(process)
        await _aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):  # the process must not outlive the connection
                await shutdown()
            group.cancel_scope.cancel()
