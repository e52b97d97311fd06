"""The JSON-RPC connection under :class:`agentls.client.AgentClient`: LSP base framing over a
server's stdin and stdout (or any pair of streams).

Written for the client rather than taken from pygls: pygls's JSON-RPC layer imports every LSP
type (``lsprotocol.types``, 0.2-0.4 s), which was most of the start of ``agentls run``,
``chat``, ``models`` and ``sessions``. The client needs little of it: its own requests and
their answers, the server's notifications, and the server's few requests (a permission
question, ``window/showMessageRequest``), which the server may cancel with
``$/cancelRequest``.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Callable
from typing import Any

import orjson

from agentls.json_depth import valid_id

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800

Handler = Callable[[Any], Any]
"""A handler of the server's request (its params in, its result or an awaitable of it out) or of
a notification (called as it arrives)."""

logger = logging.getLogger("agentls.client")


class RpcError(Exception):
    """An error answer of the server."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(RuntimeError):
    """The server's output ended (it exited, or closed the stream) before it answered."""


class ClientConnection:
    """One connection to a server: requests sent and answered, the server's messages dispatched."""

    def __init__(self, on_exit: Callable[[int | None], None]) -> None:
        self._on_exit = on_exit
        self._handlers: dict[str, Handler] = {}
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._answering: dict[Any, asyncio.Task[None]] = {}
        """The server's requests being answered, by id (``$/cancelRequest`` cancels one)."""
        self._last_id = 0
        self._writer: Any = None
        self._reading: asyncio.Task[None] | None = None
        self._server: asyncio.subprocess.Process | None = None
        """The server process, when this connection started it."""

    def feature(self, method: str) -> Callable[[Handler], Handler]:
        """Register the handler of a method the server sends."""

        def register(handler: Handler) -> Handler:
            self._handlers[method] = handler
            return handler

        return register

    # --- the streams -------------------------------------------------------------------------

    async def start_io(self, command: str, *args: str, env: dict[str, str], cwd: str | None) -> None:
        """Start the server with its stdin and stdout piped here.

        Its stderr is dropped: what it logs there it also sends as ``window/logMessage``, which
        the client logs (:data:`agentls.client.SERVER_LOG`), so a terminal would show it twice.
        """
        server = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self._server = server
        assert server.stdin is not None and server.stdout is not None
        self.connect(server.stdout, server.stdin)

    def connect(self, reader: asyncio.StreamReader, writer: Any) -> None:
        """Read the server's messages from ``reader``; write to ``writer`` (``write`` and, if it
        has one, ``flush``)."""
        self._writer = writer
        self._reading = asyncio.get_running_loop().create_task(self._read(reader))

    async def stop(self) -> None:
        """Close the server's input and stop reading; what still waits for an answer fails."""
        with contextlib.suppress(Exception):
            if hasattr(self._writer, "close"):
                self._writer.close()
        for task in list(self._answering.values()):
            task.cancel()
        if self._reading is not None:
            self._reading.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reading

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while (body := await _read_frame(reader)) is not None:
                self._handle(body)
        except (OSError, ValueError, asyncio.IncompleteReadError) as error:
            logger.warning("the server's output could not be read: %s", error)
        finally:
            self._close_pending("the agentls server closed the connection")
        if self._server is not None:
            await self._server.wait()
            self._on_exit(self._server.returncode)

    def _close_pending(self, reason: str) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed(reason))

    def _write(self, message: dict[str, Any]) -> None:
        body = orjson.dumps(message)
        self._writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        if hasattr(self._writer, "flush"):
            self._writer.flush()

    # --- this client's messages ----------------------------------------------------------------

    async def send_request_async(self, method: str, params: Any) -> Any:
        """The server's result; :class:`RpcError` for an error answer, :class:`ConnectionClosed`
        when the server's output ends first."""
        self._last_id += 1
        request_id = self._last_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._write(message)
            return await future
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)

    # --- the server's messages -----------------------------------------------------------------

    def _handle(self, body: bytes) -> None:
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            logger.warning("a message of the server is not JSON (%s): ignored", error)
            return
        if not isinstance(message, dict):
            logger.warning("a message of the server is not an object: ignored")
            return
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                self._answer(message["id"], method, message.get("params"))
            else:
                self._notified(method, message.get("params"))
            return
        future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            logger.warning("an answer to no request of this client (id %r): ignored", message.get("id"))
            return
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            future.set_exception(
                RpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    def _notified(self, method: str, params: Any) -> None:
        if method == "$/cancelRequest":
            request_id = params.get("id") if isinstance(params, dict) else None
            if valid_id(request_id):
                if (task := self._answering.get(request_id)) is not None:
                    task.cancel()
            else:
                logger.warning("$/cancelRequest without a usable id from the server: ignored")
            return
        handler = self._handlers.get(method)
        if handler is None:
            return
        try:
            handler(params)
        except Exception:
            logger.exception("the handler of the server's %s failed", method)

    def _answer(self, request_id: Any, method: str, params: Any) -> None:
        handler = self._handlers.get(method)
        if handler is None:
            self._write_error(request_id, METHOD_NOT_FOUND, f"Method Not Found: {method}")
            return
        task = asyncio.get_running_loop().create_task(self._answered(request_id, handler, params))
        self._answering[request_id] = task
        task.add_done_callback(lambda _: self._answering.pop(request_id, None))

    async def _answered(self, request_id: Any, handler: Handler, params: Any) -> None:
        try:
            result = handler(params)
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:  # the server gave the question up
            self._write_error(request_id, REQUEST_CANCELLED, "Request cancelled")
            return
        except Exception as error:
            logger.exception("the answer to the server's request %r failed", request_id)
            self._write_error(request_id, INTERNAL_ERROR, str(error))
            return
        with contextlib.suppress(OSError, RuntimeError):  # the server is gone meanwhile
            self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _write_error(self, request_id: Any, code: int, message: str) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self._write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


async def _read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """The next message's body (``None`` at the end of the stream)."""
    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        raise ValueError("a message without Content-Length")
    return await reader.readexactly(length)
