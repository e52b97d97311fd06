"""JSON-RPC 2.0 over the LSP base framing, answered as the specification says whatever a client sends.

pygls's reader parses every body with an object hook that takes any object with a
``"jsonrpc"`` key, at any depth, for a message, and drops what it cannot structure:
such requests were never answered. :class:`AgentProtocol` replaces that reading layer
and keeps pygls for the rest (handlers, documents, the server's own requests):

- a body that is not JSON gets ``-32700`` (id ``null``);
- a body nesting deeper than :data:`~agentls.json_depth.MAX_DEPTH` is refused with
  the id its top level holds: ``-32602`` when only its params are too deep, else
  ``-32600``; too deep a notification is ignored, too deep an answer to one of the
  server's requests fails that request;
- what is not a request object (no ``"jsonrpc": "2.0"``, a method that is not a
  string, an id that is not a string or an integer, a batch) gets ``-32600``, with the
  id when it is usable;
- params of the wrong type get ``-32602``, naming the field;
- a notification method sent with an id gets ``-32600``; a request method sent without
  one cannot be answered and is dropped with a warning;
- requests before ``initialize`` get ``-32002``, after ``shutdown`` ``-32600``.

Every request with an id gets exactly one response. The client's answers to the
server's own requests are handed over as plain JSON, for the caller to validate, and
they live apart from the client's requests: a client's ``$/cancelRequest`` with the id
of a server request ends that request as :class:`CancelledByClient` instead of
cancelling the server's task that waits for it.

Client mistakes are logged as one warning line; tracebacks are logged only for
internal errors, and never sent.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import uuid
from collections import deque
from concurrent.futures import Future
from functools import partial
from typing import Any

import attrs
import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol

from agentls.ai.json_codec import json_bytes
from agentls.ai.secrets import redact
from agentls.fronts.lsp.boot import KEPT_FIELDS, valid_id
from agentls.fronts.lsp.framing import frame_bytes
from agentls.json_depth import TooDeep, parse_body
from agentls.protocol import AGENT_ERROR, INVALID_PARAMS, REQUESTS

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800

MsgId = str | int


INVALID_PARAMS_DATA = {"kind": "invalidParams"}
"""``data`` of ``-32602`` errors, as the handlers' own (``protocol.md``)."""

SERVER_ONLY = {"toClient": False}
"""``extra`` of log records that stay in the server's log (not sent as ``window/logMessage``)."""


class CancelledByClient(JsonRpcException):
    """The client sent ``$/cancelRequest`` for one of the server's own requests."""

    CODE = REQUEST_CANCELLED


def _is_request_type(message_type: type) -> bool:
    return any(field.name == "id" for field in attrs.fields(message_type))


def _structure_problem(error: Exception) -> str:
    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(error, path="message"))
    return f"{type(error).__name__}: {error}"


CANCELLED_KEPT = 256
"""How many of its cancelled requests the server remembers, to take their late answers quietly."""


class StrictProtocol(LanguageServerProtocol):
    """pygls's language server protocol with a reading layer that answers every request (module doc)."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self._outgoing: dict[MsgId, Future[Any]] = {}
        """The server's own requests waiting for the client's answer (pygls keeps them with the client's)."""
        self._cancelled: deque[MsgId] = deque(maxlen=CANCELLED_KEPT)
        """The server's requests it cancelled lately: the client may still answer them (LSP says it
        should, with ``RequestCancelled``), and such an answer is expected, not a stray one."""
        self._initialize_seen = False
        self.answered_early: tuple[MsgId, dict[str, Any]] | None = None
        """The ``initialize`` that :mod:`agentls.fronts.lsp.boot` answered: its id and the result it sent."""

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
                message = f"the client's answer {deep}"
                future.set_exception(JsonRpcException(code=INVALID_REQUEST, message=message))
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
                self._notification(method, message)
            elif usable_id is None:
                self.reply_error(
                    None, INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer'
                )
            else:
                self._request(usable_id, method, message)
        elif usable_id is not None and ("result" in message or "error" in message):
            self._response(usable_id, message)
        else:
            self.reply_error(usable_id, INVALID_REQUEST, 'Invalid request: no "method", and not a response')

    def _refuse_batch(self, batch: list[Any]) -> None:
        """LSP has no batches: each request in one gets its own error (one error if none has an id)."""
        ids = [m["id"] for m in batch if isinstance(m, dict) and "method" in m and valid_id(m.get("id"))]
        for msg_id in ids or [None]:
            self.reply_error(msg_id, INVALID_REQUEST, "Invalid request: batches are not supported")

    def _request(self, msg_id: MsgId, method: str, message: dict[str, Any]) -> None:
        params = message.get("params")
        if method == lsp.INITIALIZE and self._initialize_seen:
            self.reply_error(msg_id, INVALID_REQUEST, "Invalid request: initialize was already received")
            return
        if method != lsp.INITIALIZE and not self._initialize_seen:
            self.reply_error(msg_id, SERVER_NOT_INITIALIZED, f"{method}: the server is not initialized yet")
            return
        if self._shutdown:
            self.reply_error(msg_id, INVALID_REQUEST, f"{method}: the server is shutting down")
            return
        if params is not None and not isinstance(params, dict | list):
            self.reply_error(
                msg_id,
                INVALID_PARAMS,
                f"Invalid params for {method}: params must be an object",
                INVALID_PARAMS_DATA,
            )
            return
        message_type = self.get_message_type(method)
        if message_type is None:  # agentls's methods (plain JSON params) and unknown ones
            structured: Any = JsonRPCRequestMessage(id=msg_id, method=method, jsonrpc="2.0", params=params)
        elif not _is_request_type(message_type):
            self.reply_error(msg_id, INVALID_REQUEST, f"{method} is a notification: it takes no id")
            return
        else:
            try:
                structured = self._converter.structure(
                    {"jsonrpc": "2.0", "id": msg_id, "method": method, **_params(message)}, message_type
                )
            except Exception as error:
                problem = _structure_problem(error)
                if self._is_answered_early(msg_id):
                    structured = self._without_capabilities(message, message_type, problem)
                else:
                    message = f"Invalid params for {method}: {problem}"
                    self.reply_error(msg_id, INVALID_PARAMS, message, INVALID_PARAMS_DATA)
                    return
        if method == lsp.INITIALIZE:
            self._initialize_seen = True
        elif method == lsp.SHUTDOWN:
            self._shutdown = True  # pygls sets it once shutdown's handler ended: too late for what follows
        contextvars.copy_context().run(self._handle_request, msg_id, method, structured.params)

    def _is_answered_early(self, msg_id: MsgId) -> bool:
        return self.answered_early is not None and self.answered_early[0] == msg_id

    def _without_capabilities(self, message: dict[str, Any], message_type: type, problem: str) -> Any:
        """An ``initialize`` already answered cannot be refused: it goes on without the client's capabilities.

        :mod:`agentls.fronts.lsp.boot` checked the other fields the server keeps, so only
        the LSP capabilities can be what the structuring refused.
        """
        logger.warning("initialize: the client's capabilities are left out (%s)", problem)
        params = message.get("params") or {}
        kept = {key: params[key] for key in KEPT_FIELDS if key in params}
        return self._converter.structure(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                "method": lsp.INITIALIZE,
                "params": {**kept, "capabilities": {}},
            },
            message_type,
        )

    def _notification(self, method: str, message: dict[str, Any]) -> None:
        if self._shutdown and method != lsp.EXIT:
            logger.warning("%s after shutdown: ignored", method)
            return
        params = message.get("params")
        if method == lsp.CANCEL_REQUEST:
            cancelled = params.get("id") if isinstance(params, dict) else None
            if valid_id(cancelled):
                self._cancel(cancelled)
            else:
                logger.warning("$/cancelRequest without a usable id: ignored")
            return
        message_type = self.get_message_type(method)
        is_request = method in REQUESTS if message_type is None else _is_request_type(message_type)
        if is_request:
            logger.warning(
                "%s is a request: sent without an id it cannot be answered, so it is ignored", method
            )
            return
        if message_type is None:
            structured: Any = JsonRPCNotification(method=method, jsonrpc="2.0", params=params)
        else:
            try:
                structured = self._converter.structure(
                    {"jsonrpc": "2.0", "method": method, **_params(message)}, message_type
                )
            except Exception as error:
                logger.warning("%s with invalid params ignored: %s", method, _structure_problem(error))
                return
        if not self._initialize_seen and method != lsp.EXIT:
            logger.warning("%s before initialize: ignored", method)
            return
        contextvars.copy_context().run(self._handle_notification, method, structured.params)

    def _pending(self, msg_id: MsgId) -> Future[Any] | None:
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
            future.set_exception(
                JsonRpcException(code=error["code"], message=error["message"], data=error.get("data"))
            )
        else:
            future.set_exception(
                JsonRpcException(code=INTERNAL_ERROR, message="the client sent a malformed error")
            )

    def _cancel(self, msg_id: MsgId) -> None:
        outgoing = self._outgoing.pop(msg_id, None)
        if outgoing is not None:
            if not outgoing.done():
                outgoing.set_exception(CancelledByClient(message="the client cancelled the request"))
            return
        incoming = self._request_futures.get(msg_id)
        if incoming is not None:
            incoming.cancel()  # its response is then the -32800 "cancelled" error

    # --- answering -----------------------------------------------------------------------

    def _handle_request(self, msg_id: MsgId, method_name: str, params: Any) -> None:
        try:
            handler = self._get_handler(method_name)
        except JsonRpcMethodNotFound:
            self.reply_error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method_name}")
            return
        self._ctx_msg_id.set(msg_id)
        self._execute_handler(
            msg_id=msg_id,
            handler=handler,
            args=(params,),
            callback=partial(self._send_handler_result, msg_id=msg_id, method=method_name),
        )

    def _send_handler_result(self, future: Future[Any], *, msg_id: MsgId, method: str = "") -> None:  # type: ignore[override]
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]
        if self._is_answered_early(msg_id):
            self._check_early_answer(future)
            return
        if future.cancelled():
            self.reply_error(
                msg_id, REQUEST_CANCELLED, f"{method}: the request was cancelled", level=logging.DEBUG
            )
            return
        error = future.exception()
        if error is not None and method == lsp.INITIALIZE:
            self._initialize_seen = False  # a client may correct its initialize and send it again
        if error is None:
            self._send_result(msg_id, method, future.result())
        elif isinstance(error, JsonRpcException):
            # Agent errors (busy, unknownSession...) are answers, not faults; bad params are the client's.
            level = logging.DEBUG if error.code == AGENT_ERROR else logging.WARNING
            self.reply_error(msg_id, error.code, error.message, error.data, level=level)
        else:
            logger.error("%s failed: %s: %s", method, type(error).__name__, error, exc_info=error)
            message = f"Internal error in {method}: {type(error).__name__}: {error}"
            self.reply_error(msg_id, INTERNAL_ERROR, message, level=logging.DEBUG)

    def _check_early_answer(self, future: Future[Any]) -> None:
        """The server's own answer to the ``initialize`` the boot answered: not sent, but compared."""
        assert self.answered_early is not None
        early = self.answered_early[1]
        self.answered_early = None
        if future.cancelled():  # the client's $/cancelRequest, too late to matter
            return
        if future.exception() is not None:
            logger.error("initialize, answered early, then failed: %r", future.exception())
            return
        result = json.loads(json_bytes(future.result(), self._serialize_message))
        if result != early:
            logger.error("initialize was answered early with %s; the server's answer is %s", early, result)

    def _send_result(self, msg_id: MsgId, method: str, result: Any) -> None:
        try:
            body = self.encode({"jsonrpc": "2.0", "id": msg_id, "result": result})
        except (TypeError, ValueError) as error:
            logger.error("%s: its result could not be encoded: %s", method, error, exc_info=error)
            message = f"Internal error in {method}: the result could not be encoded"
            self.reply_error(msg_id, INTERNAL_ERROR, message, level=logging.DEBUG)
            return
        self.write(body)

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
        self.write(body)

    # --- the server's own requests ---------------------------------------------------------

    def send_request(
        self, method: str, params: Any | None = None, callback: Any = None, msg_id: MsgId | None = None
    ) -> Future[Any]:
        """Send a request to the client; the future gets its answer as plain JSON (validate it)."""
        msg_id = str(uuid.uuid4()) if msg_id is None else msg_id
        future: Future[Any] = Future()
        if callback is not None:
            future.add_done_callback(
                lambda done: callback(done.result()) if done.exception() is None else None
            )
        self._outgoing[msg_id] = future
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return future

    async def request_client(self, method: str, params: Any, seconds: float | None = None) -> Any:
        """A request to the client; its answer as plain JSON (the caller validates it).

        When the waiting task is cancelled (an abort) or ``seconds`` pass, the request
        is cancelled at the client too with ``$/cancelRequest`` (pygls itself does not),
        so an editor closes the question it shows. Raises :class:`CancelledByClient`
        when the client cancels it, :class:`JsonRpcException` for an error answer.
        """
        request_id = str(uuid.uuid4())
        future = asyncio.wrap_future(self.send_request(method, params, msg_id=request_id))
        try:
            return await asyncio.wait_for(future, seconds)
        except (asyncio.CancelledError, TimeoutError):
            self.cancel_request(request_id)
            raise

    def cancel_request(self, msg_id: MsgId) -> None:
        """Give up on one of the server's requests: forget it and tell the client (``$/cancelRequest``)."""
        future = self._outgoing.pop(msg_id, None)
        if future is not None:
            future.cancel()
            self._cancelled.append(msg_id)
            self.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))

    lsp_shutdown = None  # type: ignore[assignment]
    """pygls's built-in ``shutdown`` is left out (it would cancel the client's requests still running):
    the server's own ``shutdown`` feature answers it, and :meth:`_request` marks the shutdown."""

    # --- writing -------------------------------------------------------------------------

    def encode(self, data: Any) -> bytes:
        """A frame: compact JSON (NaN and the infinities as ``null``) with its ``Content-Length`` header."""
        return frame_bytes(json_bytes(data, self._serialize_message))

    def write(self, frame: bytes) -> None:
        """Hand a frame to the writer (which reports a client that is gone to the server itself)."""
        if self.writer is not None:
            self.writer.write(frame)

    def notify(self, method: str, params: Any | None = None) -> None:
        """A notification; agentls's own (plain JSON params) go straight to the encoder.

        pygls would wrap them in an attrs object that cattrs then unstructures value by value:
        most of the cost of an ``agent/event``.
        """
        if isinstance(params, dict) and self.get_message_type(method) is None:
            self._send_data({"jsonrpc": "2.0", "method": method, "params": params})
        else:
            super().notify(method, params)

    def _send_data(self, data: Any) -> None:
        if not data:
            return
        try:
            frame = self.encode(data)
        except (TypeError, ValueError) as error:
            logger.error("a message could not be encoded and was not sent: %s", error, exc_info=error)
            return
        self.write(frame)


def _params(message: dict[str, Any]) -> dict[str, Any]:
    return {"params": message["params"]} if "params" in message else {}
