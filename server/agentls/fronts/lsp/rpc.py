"""JSON-RPC 2.0 over the LSP base framing, answered as the specification says whatever a client sends.

agentls's own connection layer (it replaced pygls, whose JSON-RPC layer imports every LSP
type: ``lsprotocol.types``, half of the server's start). :class:`Connection` reads each
frame's body, dispatches it to the handlers the server registered, answers, and sends the
server's own requests and notifications:

- a body that is not JSON gets ``-32700`` (id ``null``);
- a body nesting deeper than :data:`~agentls.json_depth.MAX_DEPTH` is refused with
  the id its top level holds: ``-32602`` when only its params are too deep, else
  ``-32600``; too deep a notification is ignored, too deep an answer to one of the
  server's requests fails that request;
- what is not a request object (no ``"jsonrpc": "2.0"``, a method that is not a
  string, an id that is not a string or an integer, a batch) gets ``-32600``, with the
  id when it is usable;
- params that are not an object get ``-32602``; the handlers check their fields;
- a method the server does not offer gets ``-32601``;
- a notification method (LSP's, :data:`LSP_NOTIFICATIONS`) sent with an id gets
  ``-32600``; a request method sent without one cannot be answered and is dropped with a
  warning; an unknown notification is ignored, as LSP says;
- requests before ``initialize`` get ``-32002``, after ``shutdown`` ``-32600``;
  notifications before ``initialize`` or after ``shutdown`` are ignored (``exit`` aside).

Every request with an id gets exactly one response; ``$/cancelRequest`` cancels a
request's handler, which is then answered ``-32800``. The client's answers to the
server's own requests are handed over as plain JSON, for the caller to validate, and
they live apart from the client's requests: a ``$/cancelRequest`` with the id of a server
request ends that request as :class:`CancelledByClient`.

Client mistakes are logged as one warning line; tracebacks are logged only for
internal errors, and never sent.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from agentls.ai.json_codec import json_bytes
from agentls.ai.secrets import redact
from agentls.ai.wire import to_wire
from agentls.fronts.lsp.framing import frame_bytes
from agentls.json_depth import TooDeep, parse_body, valid_id
from agentls.protocol import AGENT_ERROR, INVALID_PARAMS
from agentls.protocol_methods import REQUESTS

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800

INITIALIZE = "initialize"
SHUTDOWN = "shutdown"
EXIT = "exit"
CANCEL_REQUEST = "$/cancelRequest"

LSP_NOTIFICATIONS = frozenset(
    {
        "initialized",
        EXIT,
        CANCEL_REQUEST,
        "$/setTrace",
        "$/logTrace",
        "$/progress",
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didClose",
        "textDocument/didSave",
        "textDocument/willSave",
        "notebookDocument/didOpen",
        "notebookDocument/didChange",
        "notebookDocument/didSave",
        "notebookDocument/didClose",
        "workspace/didChangeConfiguration",
        "workspace/didChangeWorkspaceFolders",
        "workspace/didChangeWatchedFiles",
        "workspace/didCreateFiles",
        "workspace/didRenameFiles",
        "workspace/didDeleteFiles",
        "window/workDoneProgress/cancel",
    }
)
"""The client-to-server notifications of LSP 3.17: sent with an id, they are invalid requests."""

MsgId = str | int

INVALID_PARAMS_DATA = {"kind": "invalidParams"}
"""``data`` of ``-32602`` errors, as the handlers' own (``protocol.md``)."""

SERVER_ONLY = {"toClient": False}
"""``extra`` of log records that stay in the server's log (not sent as ``window/logMessage``)."""

CANCELLED_KEPT = 256
"""How many of its cancelled requests the server remembers, to take their late answers quietly."""


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler to answer with it, or the client's error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class CancelledByClient(RpcError):
    """The client sent ``$/cancelRequest`` for one of the server's own requests."""

    def __init__(self, message: str = "the client cancelled the request") -> None:
        super().__init__(REQUEST_CANCELLED, message)


class ClientGone(Exception):
    """The client's connection ended while the server waited for its answer (it never comes)."""

    def __init__(self) -> None:
        super().__init__("the client went away before it answered")


def invalid_params(method: str, problems: list[str]) -> RpcError:
    """``-32602`` naming each problem (``field.path: message``)."""
    return RpcError(
        INVALID_PARAMS,
        f"Invalid params for {method}: " + "; ".join(problems),
        {"kind": "invalidParams", "errors": problems},
    )


class Writer(Protocol):
    def write(self, data: bytes, *, at_once: bool = False) -> None: ...


RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], Awaitable[None] | None]


class Connection:
    """One client's JSON-RPC connection (module doc): the server registers its handlers in
    :attr:`requests` and :attr:`notifications`, by method."""

    def __init__(self) -> None:
        self.requests: dict[str, RequestHandler] = {}
        self.notifications: dict[str, NotificationHandler] = {}
        self.writer: Writer | None = None
        self._running: dict[MsgId, asyncio.Task[Any]] = {}
        """The client's requests whose handlers run."""
        self.settled: Callable[[], None] | None = None
        """Called when the last running request has been answered."""
        self._outgoing: dict[MsgId, asyncio.Future[Any]] = {}
        """The server's own requests waiting for the client's answer."""
        self._cancelled: deque[MsgId] = deque(maxlen=CANCELLED_KEPT)
        """The server's requests it cancelled lately: the client may still answer them (LSP says it
        should, with ``RequestCancelled``), and such an answer is expected, not a stray one."""
        self._background: set[asyncio.Task[Any]] = set()
        self.initialized = False
        """``initialize`` was received (and did not fail)."""
        self.shut_down = False
        """``shutdown`` was received."""
        self.closed = False
        """The connection has ended (:meth:`cancel_running`): nothing the server asks is answered."""
        self.answered_early: MsgId | None = None
        """The id of the ``initialize`` that :mod:`agentls.fronts.lsp.boot` answered: not answered again."""

    # --- reading -------------------------------------------------------------------------

    def handle_body(self, body: bytes) -> None:
        """One frame's body: parse it and dispatch the message (module doc for the answers)."""
        try:
            message = parse_body(body)
        except TooDeep as deep:
            self._too_deep(deep)
            return
        except ValueError as error:  # not JSON, not UTF-8, NaN, an int of too many digits
            self.reply_error(None, PARSE_ERROR, f"Parse error: {error}")
            return
        self.dispatch(message)

    def _too_deep(self, deep: TooDeep) -> None:
        """A body too deep to read whole, answered from its top-level members (module doc)."""
        msg_id = deep.fields.get("id") if valid_id(deep.fields.get("id")) else None
        if deep.kind == "notification":
            logger.warning("%s: ignored, %s", deep.fields["method"], deep)
        elif deep.kind == "response" and msg_id is not None:
            logger.warning("the answer to %r failed: %s", msg_id, deep)
            future = self._pending(msg_id)
            if future is not None:
                future.set_exception(RpcError(INVALID_REQUEST, f"the client's answer {deep}"))
        elif deep.params_only and msg_id is not None:
            message = f"Invalid params for {deep.fields['method']}: {deep}"
            self.reply_error(msg_id, INVALID_PARAMS, message, INVALID_PARAMS_DATA)
        else:
            self.reply_error(msg_id, INVALID_REQUEST, f"Invalid request: {deep}")

    def dispatch(self, message: Any) -> None:
        if isinstance(message, list):
            self._refuse_batch(message)
            return
        if not isinstance(message, dict):
            self.reply_error(None, INVALID_REQUEST, "Invalid request: a message must be a JSON object")
            return
        msg_id = message.get("id")
        usable_id = msg_id if valid_id(msg_id) else None
        if message.get("jsonrpc") != "2.0":
            self.reply_error(usable_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"')
            return
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str):
                self.reply_error(usable_id, INVALID_REQUEST, 'Invalid request: "method" must be a string')
            elif "id" not in message:
                self._notification(method, message.get("params"))
            elif usable_id is None:
                self.reply_error(
                    None, INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer'
                )
            else:
                self._request(usable_id, method, message.get("params"))
        elif usable_id is not None and ("result" in message or "error" in message):
            self._response(usable_id, message)
        else:
            self.reply_error(usable_id, INVALID_REQUEST, 'Invalid request: no "method", and not a response')

    def _refuse_batch(self, batch: list[Any]) -> None:
        """LSP has no batches: each request in one gets its own error (one error if none has an id)."""
        ids = [m["id"] for m in batch if isinstance(m, dict) and "method" in m and valid_id(m.get("id"))]
        for msg_id in ids or [None]:
            self.reply_error(msg_id, INVALID_REQUEST, "Invalid request: batches are not supported")

    def _request(self, msg_id: MsgId, method: str, params: Any) -> None:
        if method in LSP_NOTIFICATIONS:
            self.reply_error(msg_id, INVALID_REQUEST, f"{method} is a notification: it takes no id")
            return
        if method == INITIALIZE and self.initialized:
            self.reply_error(msg_id, INVALID_REQUEST, "Invalid request: initialize was already received")
            return
        if method != INITIALIZE and not self.initialized:
            self.reply_error(msg_id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized yet")
            return
        if self.shut_down:
            self.reply_error(msg_id, INVALID_REQUEST, f"{method}: the server is shutting down")
            return
        if params is not None and not isinstance(params, dict | list):
            message = f"Invalid params for {method}: params must be an object"
            self.reply_error(msg_id, INVALID_PARAMS, message, INVALID_PARAMS_DATA)
            return
        handler = self.requests.get(method)
        if handler is None:
            self.reply_error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        if method == INITIALIZE:
            self.initialized = True  # what follows it in the same read is handled as after it
        elif method == SHUTDOWN:
            self.shut_down = True
        task = asyncio.get_running_loop().create_task(handler(params))
        self._running[msg_id] = task
        task.add_done_callback(lambda done: self._answer(msg_id, method, done))

    def _notification(self, method: str, params: Any) -> None:
        if self.shut_down and method != EXIT:
            logger.warning("%s after shutdown: ignored", method)
            return
        if method == CANCEL_REQUEST:
            cancelled = params.get("id") if isinstance(params, dict) else None
            if valid_id(cancelled):
                self._cancel(cancelled)
            else:
                logger.warning("$/cancelRequest without a usable id: ignored")
            return
        if method in REQUESTS or method in (INITIALIZE, SHUTDOWN):
            logger.warning(
                "%s is a request: sent without an id it cannot be answered, so it is ignored", method
            )
            return
        if not self.initialized and method != EXIT:
            logger.warning("%s before initialize: ignored", method)
            return
        handler = self.notifications.get(method)
        if handler is None:
            logger.debug("%s: no handler, ignored", method)
            return
        try:
            done = handler(params)
        except Exception:  # a bug must cost one notification, not the connection
            logger.exception("%s could not be handled", method)
            return
        if inspect.isawaitable(done):
            self._keep(asyncio.ensure_future(done))

    def _keep(self, task: asyncio.Future[Any]) -> None:
        """Hold a notification's task until it ends (the loop keeps only weak references)."""
        self._background.add(task)  # type: ignore[arg-type]
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Future[Any]) -> None:
        self._background.discard(task)  # type: ignore[arg-type]
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            logger.error("a notification failed: %s: %s", type(error).__name__, error, exc_info=error)

    def _pending(self, msg_id: MsgId) -> asyncio.Future[Any] | None:
        """The server's request ``msg_id`` answers, now answered (``None``, with a warning, if none)."""
        future = self._outgoing.pop(msg_id, None)
        if future is None and msg_id in self._cancelled:
            self._cancelled.remove(msg_id)
            logger.debug("the answer to %r, which the server cancelled: ignored", msg_id)
            return None
        if future is None or future.done():
            logger.warning("a response to %r, which is not a pending request of the server: ignored", msg_id)
            return None
        return future

    def _response(self, msg_id: MsgId, message: dict[str, Any]) -> None:
        future = self._pending(msg_id)
        if future is None:
            return
        if "error" not in message:
            future.set_result(message["result"])
            return
        error = message["error"]
        if (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        ):
            future.set_exception(RpcError(error["code"], error["message"], error.get("data")))
        else:
            future.set_exception(RpcError(INTERNAL_ERROR, "the client sent a malformed error"))

    def _cancel(self, msg_id: MsgId) -> None:
        outgoing = self._outgoing.pop(msg_id, None)
        if outgoing is not None:
            if not outgoing.done():
                outgoing.set_exception(CancelledByClient())
            return
        incoming = self._running.get(msg_id)
        if incoming is not None:
            incoming.cancel()  # its response is then the -32800 "cancelled" error

    # --- answering -----------------------------------------------------------------------

    @property
    def answering(self) -> bool:
        """A request of the client's is being handled."""
        return bool(self._running)

    def _answer(self, msg_id: MsgId, method: str, task: asyncio.Task[Any]) -> None:
        if self._running.get(msg_id) is task:
            del self._running[msg_id]
        self._reply(msg_id, method, task)
        if not self._running and self.settled is not None:
            self.settled()

    def _reply(self, msg_id: MsgId, method: str, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            if self.answered_early != msg_id:
                self.reply_error(
                    msg_id, REQUEST_CANCELLED, f"{method}: the request was cancelled", level=logging.DEBUG
                )
            return
        error = task.exception()
        if error is not None and method == INITIALIZE:
            self.initialized = False  # a client may correct its initialize and send it again
        if self.answered_early == msg_id:
            self.answered_early = None
            if error is not None:
                logger.error("initialize, answered early, then failed: %r", error)
            return
        if error is None:
            self._send_result(msg_id, method, task.result())
        elif isinstance(error, RpcError):
            # Agent errors (busy, unknownSession...) are answers, not faults; bad params are the client's.
            level = logging.DEBUG if error.code == AGENT_ERROR else logging.WARNING
            self.reply_error(msg_id, error.code, error.message, error.data, level=level)
        else:
            logger.error("%s failed: %s: %s", method, type(error).__name__, error, exc_info=error)
            message = f"Internal error in {method}: {type(error).__name__}: {error}"
            self.reply_error(msg_id, INTERNAL_ERROR, message, level=logging.DEBUG)

    def _send_result(self, msg_id: MsgId, method: str, result: Any) -> None:
        try:
            body = self.encode({"jsonrpc": "2.0", "id": msg_id, "result": result})
        except (TypeError, ValueError) as error:
            logger.error("%s: its result could not be encoded: %s", method, error, exc_info=error)
            message = f"Internal error in {method}: the result could not be encoded"
            self.reply_error(msg_id, INTERNAL_ERROR, message, level=logging.DEBUG)
            return
        self.write(body, at_once=True)

    def reply_error(
        self, msg_id: MsgId | None, code: int, message: str, data: Any = None, *, level: int = logging.WARNING
    ) -> None:
        """Send an error response and log it as one line (on stderr only: the client has the answer).

        Every error message the server sends passes here, so credentials are redacted here.
        """
        message = redact(message)
        logger.log(
            level, "request %r: %s" if msg_id is not None else "%.0s%s", msg_id, message, extra=SERVER_ONLY
        )
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        try:
            body = self.encode({"jsonrpc": "2.0", "id": msg_id, "error": error})
        except (TypeError, ValueError):
            body = self.encode({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
        self.write(body, at_once=True)

    # --- the server's own requests and notifications ------------------------------------------

    async def request_client(self, method: str, params: Any, seconds: float | None = None) -> Any:
        """A request to the client; its answer as plain JSON (the caller validates it).

        When the waiting task is cancelled (an abort) or ``seconds`` pass, the request
        is cancelled at the client too with ``$/cancelRequest``, so an editor closes the
        question it shows. Raises :class:`CancelledByClient` when the client cancels it,
        :class:`RpcError` for an error answer, :class:`ClientGone` when the connection ends first.
        """
        if self.closed:
            raise ClientGone()
        msg_id = str(uuid.uuid4())
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._outgoing[msg_id] = future
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(future, seconds)
        except (asyncio.CancelledError, TimeoutError):
            self.cancel_request(msg_id)
            raise

    def cancel_request(self, msg_id: MsgId) -> None:
        """Give up on one of the server's requests: forget it and tell the client (``$/cancelRequest``)."""
        future = self._outgoing.pop(msg_id, None)
        if future is not None:
            future.cancel()
            self._cancelled.append(msg_id)
            self.notify(CANCEL_REQUEST, {"id": msg_id})

    def notify(self, method: str, params: Any = None) -> None:
        frame = notification_frame(method, params)
        if frame is not None:
            self.write(frame)

    async def answered(self, seconds: float) -> None:
        """Until the handlers of the client's requests still running have answered (at most ``seconds``);
        the server's own requests end at once with :class:`ClientGone`: no answer can come."""
        self._end_requests()
        if self._running:
            await asyncio.wait(list(self._running.values()), timeout=seconds)

    def cancel_running(self) -> None:
        """The connection is ending: cancel the handlers of the client's requests still running, and
        end the server's requests waiting for an answer with :class:`ClientGone`."""
        for task in list(self._running.values()):
            task.cancel()
        self._end_requests()

    def _end_requests(self) -> None:
        self.closed = True
        outgoing, self._outgoing = self._outgoing, {}
        for future in outgoing.values():
            if not future.done():
                future.set_exception(ClientGone())

    # --- writing -------------------------------------------------------------------------

    def encode(self, data: Any) -> bytes:
        """A frame: compact JSON (NaN and the infinities as ``null``) with its ``Content-Length`` header."""
        return frame_bytes(json_bytes(data, _json_default))

    def write(self, frame: bytes, *, at_once: bool = False) -> None:
        """Hand a frame to the writer (which reports a client that is gone to the server itself);
        ``at_once`` for what the client waits for (:meth:`~agentls.fronts.lsp.framing.OutputWriter.write`)."""
        if self.writer is not None:
            self.writer.write(frame, at_once=at_once)

    def send(self, request: dict[str, Any]) -> None:
        """A request of the server's, handed over at once: the run waits for its answer."""
        frame = _frame_or_none(request)
        if frame is not None:
            self.write(frame, at_once=True)


def notification_frame(method: str, params: Any = None) -> bytes | None:
    """The frame of a notification (``None``, logged, when it cannot be encoded): made once, it can
    be written to several clients (:mod:`agentls.fronts.lsp.host`)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return _frame_or_none(message)


def _frame_or_none(data: dict[str, Any]) -> bytes | None:
    """``data``'s frame (:meth:`Connection.encode`); ``None``, logged, when it cannot be encoded."""
    try:
        return frame_bytes(json_bytes(data, _json_default))
    except (TypeError, ValueError) as error:
        logger.error("a message could not be encoded and was not sent: %s", error, exc_info=error)
        return None


def _json_default(value: Any) -> Any:
    """Protocol models in results and params are sent in their wire form."""
    if hasattr(value, "model_dump"):
        return to_wire(value)
    raise TypeError(f"{type(value).__name__} is not JSON")
