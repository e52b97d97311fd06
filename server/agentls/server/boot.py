"""``initialize`` answered before the server's heavy imports (pygls, lsprotocol, the sessions).

Importing the whole server takes about 0.4 s, most of it pygls's ``lsprotocol.types``,
and an editor sends nothing else until ``initialize`` is answered. So ``agentls
serve`` first reads the client's first message with the standard library, pydantic and
:mod:`agentls.protocol` only. When it is a well-formed ``initialize`` whose
``initializationOptions`` and ``capabilities.experimental.agent`` are valid, it is
answered at once with the result the full server gives (:func:`initialize_result`:
pygls's capabilities for agentls's features depend only on the position encoding the
client offers); then the server is imported and handed that message and whatever else
was read. It handles the message as usual, with its answer dropped (and compared with
the early one, see :class:`~agentls.server.rpc.StrictProtocol`).

Any other first message (another request, bad options, a framing error, the end of
input) goes to the server untouched, to be answered as it always was.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agentls import __version__
from agentls.json_depth import parse_body
from agentls.protocol import (
    FAUX_SCRIPT_ENV,
    PROTOCOL_VERSION,
    REQUESTS,
    ClientAgentCapabilities,
    InitializationOptions,
)
from agentls.server.framing import Frame, FrameParser, FramingError, frame_bytes

logger = logging.getLogger(__name__)

SERVER_FEATURES = [
    "sessions",
    "persistence",
    "queue",
    "deltaEvents",
    "faux",
    "permissions",
    "toolProgress",
    "editorWorkspace",
    "compaction",
]
"""``capabilities.experimental.agent.features`` of the ``initialize`` result."""

POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")
"""The encodings pygls can use, as it chooses among the client's (its ``choose_position_encoding``)."""


def agent_capabilities() -> dict[str, Any]:
    """``capabilities.experimental.agent``: what a client needs to know about agentls's protocol."""
    return {"version": PROTOCOL_VERSION, "features": SERVER_FEATURES, "methods": sorted(REQUESTS)}


def initialize_result(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The ``initialize`` result of the full server for a client with these capabilities.

    pygls builds the LSP part from the features the server registers (text document
    synchronisation, workspace folders) and the client's preferred position encoding;
    tests check this equals what it answers.
    """
    return {
        "capabilities": {
            "positionEncoding": _position_encoding(capabilities),
            "textDocumentSync": _text_document_sync(capabilities),
            "executeCommandProvider": {"commands": []},
            "workspace": {
                "workspaceFolders": {"supported": True, "changeNotifications": True},
                "fileOperations": {},
            },
            "experimental": {"agent": agent_capabilities()},
        },
        "serverInfo": {"name": "agentls", "version": __version__},
    }


def _text_document_sync(capabilities: dict[str, Any]) -> dict[str, Any]:
    """Incremental changes; ``willSave`` / ``willSaveWaitUntil`` false where the client states them."""
    text_document = capabilities.get("textDocument")
    stated = text_document.get("synchronization") if isinstance(text_document, dict) else None
    stated = stated if isinstance(stated, dict) else {}
    will_save = {key: False for key in ("willSave", "willSaveWaitUntil") if isinstance(stated.get(key), bool)}
    return {"openClose": True, "change": 2, **will_save, "save": False}


def _position_encoding(capabilities: dict[str, Any]) -> str:
    general = capabilities.get("general")
    offered = general.get("positionEncodings") if isinstance(general, dict) else None
    for encoding in offered or ():
        if encoding in POSITION_ENCODINGS:
            return str(encoding)
    return "utf-16"


@dataclass
class Boot:
    """What was read before the server was imported, for it to handle first."""

    parser: FrameParser
    read: list[Frame | FramingError] = field(default_factory=list)
    """The messages (and framing errors) read so far, in order."""
    answered: tuple[str | int, dict[str, Any]] | None = None
    """The id of the ``initialize`` answered early and the result sent."""


def boot(fd: int, max_message_bytes: int) -> Boot:
    """Read up to the first message on ``fd`` and answer it when it is a usable ``initialize``; blocks."""
    started = Boot(FrameParser(max_message_bytes))
    while not started.read:
        chunk = _read(fd)
        if not chunk:
            return started  # the end of input: the server sees it again and ends
        started.read.extend(started.parser.feed(chunk))
    first = started.read[0]
    usable = _usable_initialize(first.body) if isinstance(first, Frame) else None
    if usable is not None:
        message, options = usable
        result = initialize_result(message["params"]["capabilities"])
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        try:
            sys.stdout.buffer.write(frame_bytes(json.dumps(answer, separators=(",", ":")).encode()))
            sys.stdout.buffer.flush()
        except OSError:  # the client is gone: the server finds out as it answers, and ends
            return started
        started.answered = (message["id"], result)
        if not (options.faux_script or os.environ.get(FAUX_SCRIPT_ENV)):
            threading.Thread(target=_warm_up_http, name="agentls-boot-warm-up", daemon=True).start()
    return started


def _warm_up_http() -> None:
    """While the server is imported: what a model provider's first request needs (see ``http_warm_up``).

    Not for the offline faux model: a server on a faux script (the tests) rarely calls a provider.
    """
    try:
        from agentls.http_warm_up import warm_up_http

        warm_up_http()
    except Exception as error:  # the first request then does it, and reports what fails
        logger.debug("warming up HTTP failed: %s", error)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except OSError:  # as the server's reader: a failing input is its end
        return b""


def _usable_initialize(body: bytes) -> tuple[dict[str, Any], InitializationOptions] | None:
    """The message and its options, if it is an ``initialize`` request the server will accept as it is sent.

    The fields the server's own structuring checks are checked here with the same
    rules; the client's LSP capabilities beyond ``experimental.agent`` are not (an
    unusable part of them is then left out by the server, see ``StrictProtocol``).
    """
    try:
        message = parse_body(body)  # the reading layer's parse: a body too deep for it is not answered here
    except ValueError:
        return None
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or message.get("method") != "initialize"
    ):
        return None
    msg_id = message.get("id")
    params = message.get("params")
    if not valid_id(msg_id):
        return None
    if not isinstance(params, dict) or not _plain_fields(params):
        return None
    try:
        options = InitializationOptions.model_validate(params.get("initializationOptions") or {})
        experimental = params["capabilities"].get("experimental")
        if isinstance(experimental, dict) and isinstance(experimental.get("agent"), dict):
            ClientAgentCapabilities.model_validate(experimental["agent"])
    except ValidationError:
        return None
    return message, options


def _plain_fields(params: dict[str, Any]) -> bool:
    """The ``InitializeParams`` fields the server keeps have the types LSP gives them."""
    capabilities = params.get("capabilities")
    if not isinstance(capabilities, dict):
        return False
    process_id = params.get("processId")
    folders = params.get("workspaceFolders")
    general = capabilities.get("general")
    encodings = general.get("positionEncodings") if isinstance(general, dict) else None
    options = params.get("initializationOptions")
    return (
        (process_id is None or is_integer(process_id))
        and all(isinstance(params.get(key), str | None) for key in ("rootUri", "rootPath"))
        and (folders is None or (isinstance(folders, list) and all(_is_folder(folder) for folder in folders)))
        and (encodings is None or _strings(encodings))
        and isinstance(options, dict | None)
    )


def is_integer(value: Any) -> bool:
    """A JSON integer (``true`` and ``false`` are ``bool``, which Python counts as ``int``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def valid_id(value: Any) -> bool:
    """A usable JSON-RPC request id: a string or an integer."""
    return isinstance(value, str) or is_integer(value)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_folder(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("uri"), str) and isinstance(value.get("name"), str)
    )


KEPT_FIELDS = ("processId", "rootUri", "rootPath", "workspaceFolders", "initializationOptions")
"""What of an early-answered ``initialize`` the server keeps when the client's capabilities are unusable."""
