"""The parts of pygls that ``StrictProtocol`` (``server/rpc.py``) overrides or leans on, checked on pygls.

``rpc.py`` replaces pygls's reading layer and its answering path but keeps its handler
machinery: it overrides private methods of ``JsonRPCProtocol`` and reads its private
state. A pygls release that renames one, changes its signature or what it does would
break the transport with no error at import. ``pyproject.toml`` pins pygls to the minor
these tests pass with; each test here names the member it guards, so raising the pin
starts with this file. The end-to-end tests cover the transport as a whole; these say
which pygls member moved.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib.metadata
import inspect
import json
import tomllib
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from agentls.server.app import AgentProtocol, create_server
from agentls.server.rpc import StrictProtocol
from lsprotocol import types as lsp
from packaging.requirements import Requirement
from packaging.version import Version
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

OVERRIDDEN = {
    "__init__": ["server", "converter"],
    "_handle_request": ["msg_id", "method_name", "params"],
    "_send_handler_result": ["future", "*msg_id"],
    "_send_data": ["data"],
    "send_request": ["method", "params", "callback", "msg_id"],
    "notify": ["method", "params"],
}
"""pygls's methods that StrictProtocol replaces, and their parameters in pygls (``*``: keyword-only).

pygls calls them itself (``_send_handler_result`` is the callback its handlers end in,
``_send_data`` what ``notify`` and its built-in features send through), so ours must take
every call pygls makes."""

NOT_REGISTERED = {"lsp_shutdown"}
"""pygls's built-in features StrictProtocol leaves out (see :func:`test_shutdown_is_the_servers_feature`)."""

CALLED = {
    "_execute_handler": ["msg_id", "handler", "callback", "args", "kwargs"],
    "_get_handler": ["feature_name"],
    "_handle_notification": ["method_name", "params"],
    "_serialize_message": ["data"],
    "get_message_type": ["method"],
    "lsp_initialize": ["params"],
}
"""pygls's methods that StrictProtocol (and AgentProtocol) call by keyword or rely on as they are."""


def marked(parameter: inspect.Parameter) -> str:
    return ("*" if parameter.kind is parameter.KEYWORD_ONLY else "") + parameter.name


def parameters(function: Any) -> list[str]:
    """The parameters of ``function`` after ``self``, keyword-only ones marked ``*``."""
    return [marked(p) for p in list(inspect.signature(function).parameters.values())[1:]]


def protocol() -> StrictProtocol:
    """A StrictProtocol on a bare pygls language server, writing to a list."""
    server = LanguageServer("overrides", "0", protocol_cls=StrictProtocol)
    assert isinstance(server.protocol, StrictProtocol)
    server.protocol.set_writer(Frames())
    return server.protocol


class Frames(list[dict[str, Any]]):
    """A writer that keeps each frame's body as JSON."""

    def write(self, frame: bytes) -> None:
        self.append(json.loads(frame.split(b"\r\n\r\n", 1)[1]))

    def close(self) -> None:
        pass


def frames(protocol: StrictProtocol) -> Frames:
    assert isinstance(protocol.writer, Frames)
    return protocol.writer


# --- the pin --------------------------------------------------------------------------


def test_pygls_is_pinned_to_the_minor_these_tests_pass_with() -> None:
    [line] = [d for d in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"] if "pygls" in d]
    requirement = Requirement(line)
    installed = Version(importlib.metadata.version("pygls"))
    assert installed in requirement.specifier
    minor = f"{installed.major}.{installed.minor}"
    assert Version(f"{installed.major}.{installed.minor + 1}") not in requirement.specifier, f"pin to {minor}"


# --- the names ------------------------------------------------------------------------


def shared_names(ours: type, base: type) -> set[str]:
    """The members ``ours`` defines itself that ``base`` has too (``__init__`` the only dunder)."""
    return {n for n in vars(ours) if hasattr(base, n) and (n == "__init__" or not n.startswith("__"))}


def test_every_name_strict_protocol_shares_with_pygls_is_one_checked_here() -> None:
    """A name pygls adds later that StrictProtocol already uses (``write``, ``encode``, ...) fails here."""
    assert shared_names(StrictProtocol, LanguageServerProtocol) == OVERRIDDEN.keys() | NOT_REGISTERED
    assert shared_names(AgentProtocol, StrictProtocol) == {"lsp_initialize"}


@pytest.mark.parametrize("name", sorted(OVERRIDDEN))
def test_each_override_takes_every_call_pygls_makes_of_it(name: str) -> None:
    base, ours = getattr(LanguageServerProtocol, name), getattr(StrictProtocol, name)
    assert parameters(base) == OVERRIDDEN[name], f"pygls's {name} changed its parameters"
    theirs = set(parameters(base))
    extra = [p for p in list(inspect.signature(ours).parameters.values())[1:] if marked(p) not in theirs]
    assert theirs <= set(parameters(ours)), f"StrictProtocol.{name} lost a parameter of pygls's"
    assert all(p.default is not p.empty for p in extra), f"StrictProtocol.{name} needs more than pygls gives"


@pytest.mark.parametrize("name", sorted(CALLED))
def test_each_pygls_method_called_keeps_its_parameters(name: str) -> None:
    assert parameters(getattr(LanguageServerProtocol, name)) == CALLED[name]


def test_the_messages_and_errors_built_from_pygls_keep_their_fields() -> None:
    request = JsonRPCRequestMessage(id=1, method="agent/x", jsonrpc="2.0", params={"a": 1})
    notification = JsonRPCNotification(method="agent/y", jsonrpc="2.0", params=None)
    assert (request.id, request.method, request.params) == (1, "agent/x", {"a": 1})
    assert notification.method == "agent/y"
    error = JsonRpcException(code=-32001, message="busy", data={"kind": "busy"})
    assert (error.code, error.message, error.data) == (-32001, "busy", {"kind": "busy"})
    assert JsonRpcException(message="x").code == JsonRpcException.CODE  # CancelledByClient sets CODE


# --- the state read --------------------------------------------------------------------


def test_the_private_state_read_is_where_strict_protocol_reads_it() -> None:
    p = protocol()
    assert p._request_futures == {}
    assert isinstance(p._ctx_msg_id, contextvars.ContextVar)
    assert p._shutdown is False
    assert p._converter.structure({"id": 3}, lsp.CancelParams) == lsp.CancelParams(id=3)


# --- the behaviour relied on -------------------------------------------------------------


async def test_execute_handler_keeps_a_coroutines_future_by_id_until_its_callback() -> None:
    """``_cancel`` cancels a client's request through ``_request_futures``; the callback forgets it."""
    p = protocol()
    started, seen = asyncio.Event(), []

    async def handler(params: Any) -> Any:
        started.set()
        await asyncio.sleep(10)

    p._execute_handler(msg_id=7, handler=handler, args=("x",), callback=seen.append)
    future = p._request_futures[7]
    await started.wait()
    future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await future  # type: ignore[misc]
    await asyncio.sleep(0)
    assert seen == [future] and future.cancelled()


async def test_execute_handler_ends_a_plain_functions_call_in_its_callback() -> None:
    p = protocol()
    seen: list[Future[Any]] = []
    p._execute_handler(msg_id=8, handler=lambda params: params * 2, args=(21,), callback=seen.append)
    p._execute_handler(msg_id=9, handler=lambda params: 1 / params, args=(0,), callback=seen.append)
    assert seen[0].result() == 42
    assert isinstance(seen[1].exception(), ZeroDivisionError)


def test_get_handler_finds_builtins_and_features_and_refuses_the_rest() -> None:
    server = LanguageServer("overrides", "0", protocol_cls=StrictProtocol)

    @server.feature("agent/ping")
    def ping(ls: LanguageServer, params: Any) -> str:
        return "pong"

    p = server.protocol
    assert p._get_handler(lsp.INITIALIZE).__func__ is LanguageServerProtocol.lsp_initialize  # type: ignore[attr-defined]
    assert p._get_handler("agent/ping")(None) == "pong"
    with pytest.raises(JsonRpcMethodNotFound):
        p._get_handler("agent/nothing")


def test_handle_notification_runs_the_feature_with_its_params() -> None:
    server = LanguageServer("overrides", "0", protocol_cls=StrictProtocol)
    seen = []

    @server.feature("agent/told")
    def told(ls: LanguageServer, params: Any) -> None:
        seen.append(params)

    server.protocol._handle_notification("agent/told", {"a": 1})
    assert seen == [{"a": 1}]


def test_get_message_type_knows_lsps_methods_only() -> None:
    """``_request`` structures LSP messages by their type and passes agentls's as plain JSON."""
    p = protocol()
    assert p.get_message_type(lsp.INITIALIZE) is lsp.InitializeRequest
    assert p.get_message_type(lsp.TEXT_DOCUMENT_DID_OPEN) is lsp.DidOpenTextDocumentNotification
    assert p.get_message_type("agent/prompt") is None


def test_notify_of_a_typed_lsp_notification_goes_through_send_data_and_serialize_message() -> None:
    p = protocol()
    p.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="q1"))
    assert frames(p) == [{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "q1"}}]


async def test_initialize_runs_pygls_generator_through_the_send_handler_result_override() -> None:
    """``_handle_request`` -> ``_execute_handler`` -> ``_run_generator`` -> our ``_send_handler_result``;
    AgentProtocol extends the result of pygls's ``lsp_initialize`` generator."""
    server = create_server()
    p = server.protocol
    p.set_writer(Frames())
    params = {"processId": None, "rootUri": None, "capabilities": {}}
    p.handle_body(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode())
    for _ in range(10):
        if frames(p):
            break
        await asyncio.sleep(0)
    [answer] = frames(p)
    assert answer["id"] == 1
    assert "agent" in answer["result"]["capabilities"]["experimental"]
    assert p._request_futures == {}


def test_shutdown_is_the_servers_feature_not_pygls_builtin() -> None:
    """pygls's built-in ``shutdown`` cancels the client's requests still running; agentls answers them.

    pygls registers as built-ins the members that carry ``method_name`` (``@lsp_method``);
    StrictProtocol's ``lsp_shutdown`` carries none, so ``shutdown`` reaches the server's own
    feature (which closes the sessions) and ``_request`` marks the shutdown.
    """
    assert LanguageServerProtocol.lsp_shutdown.method_name == lsp.SHUTDOWN  # type: ignore[attr-defined]
    assert getattr(AgentProtocol.lsp_initialize, "method_name", None) == lsp.INITIALIZE
    server = create_server()
    assert lsp.SHUTDOWN not in server.protocol.fm.builtin_features
    assert lsp.SHUTDOWN in server.protocol.fm.features
    assert lsp.INITIALIZE in server.protocol.fm.builtin_features
