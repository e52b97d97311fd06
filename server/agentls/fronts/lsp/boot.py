"""``initialize`` answered before the server's heavy imports (the sessions, the providers, the tools).

An editor sends nothing else until ``initialize`` is answered. So ``agentls serve`` first
reads the client's first message with the standard library, pydantic and
:mod:`agentls.protocol` only. When it is an ``initialize`` the server accepts
(:func:`~agentls.fronts.lsp.initialize.read_initialize`, the server's own check), it is
answered at once with the result the server gives; then the server is imported and
handed that message and whatever else was read. It handles the message as usual, without
answering it again (:attr:`~agentls.fronts.lsp.rpc.Connection.answered_early`).

Any other first message (another request, bad options, a framing error, the end of
input) goes to the server untouched, to be answered as it always was.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from agentls.fronts.lsp.framing import Frame, FrameParser, FramingError, frame_bytes
from agentls.fronts.lsp.initialize import Initialize, InitializeRefused, read_initialize
from agentls.json_depth import parse_body, valid_id

logger = logging.getLogger(__name__)


@dataclass
class Boot:
    """What was read before the server was imported, for it to handle first."""

    parser: FrameParser
    read: list[Frame | FramingError] = field(default_factory=list)
    """The messages (and framing errors) read so far, in order."""
    answered: str | int | None = None
    """The id of the ``initialize`` answered early."""


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
        message, initialize = usable
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": initialize.result}
        try:
            sys.stdout.buffer.write(frame_bytes(json.dumps(answer, separators=(",", ":")).encode()))
            sys.stdout.buffer.flush()
        except OSError:  # the client is gone: the server finds out as it answers, and ends
            return started
        started.answered = message["id"]
    return started


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except OSError:  # as the server's reader: a failing input is its end
        return b""


def _usable_initialize(body: bytes) -> tuple[dict[str, Any], Initialize] | None:
    """The message and what it says, if it is an ``initialize`` request the server accepts as it is sent."""
    try:
        message = parse_body(body)  # the reading layer's parse: a body too deep for it is not answered here
    except ValueError:
        return None
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or message.get("method") != "initialize"
        or not valid_id(message.get("id"))
    ):
        return None
    try:
        return message, read_initialize(message.get("params"))
    except InitializeRefused:
        return None
