"""``agentls acp``: run the ACP agent on stdio until the client closes its end (or is gone, or SIGTERM).

The SDK reads the lines :func:`_screen` lets through and writes through the same
:class:`~agentls.fronts.lsp.framing.OutputWriter` as ``agentls serve``: from a thread, so a
client that stops reading never holds the event loop, and is taken as gone past the
unread-output bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from acp import run_agent

from agentls.ai.secrets import RedactingFilter
from agentls.fronts.acp.agent import AcpAgent
from agentls.fronts.lsp.framing import ANSWER_SECONDS, OutputWriter, max_unread_bytes, read_chunks
from agentls.json_depth import TooDeep, parse_body, valid_id
from agentls.mcp.config import McpConfigError, read_mcp_config
from agentls.protocol import InitializationOptions, ModelRef

logger = logging.getLogger(__name__)


def options_from(
    data_dir: str | None, faux_script: str | None, model: str | None, mcp_config: str | None
) -> InitializationOptions:
    """The session layer's options from the command line (the rest from the environment, as for serve).

    Raises ``ValueError`` saying what is wrong with ``model`` or ``mcp_config``.
    """
    values: dict[str, Any] = {"dataDir": data_dir, "fauxScript": faux_script}
    if model is not None:
        try:
            values["model"] = ModelRef.parse(model)
        except ValueError:
            raise ValueError(
                f"--model {model!r}: expected PROVIDER/ID, e.g. anthropic/claude-sonnet-4-5"
            ) from None
    if mcp_config is not None:
        try:
            values["mcpServers"] = read_mcp_config(Path(mcp_config))
        except McpConfigError as error:
            raise ValueError(f"--mcp-config {mcp_config}: {error}") from None
    return InitializationOptions.model_validate({k: v for k, v in values.items() if v is not None})


LINE_LIMIT = 64 * 1024 * 1024
"""The longest message line read (as ``agentls serve``'s 64 MiB)."""


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _screen(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """An input line as a message for the SDK, and an answer to send back instead, if any.

    The SDK logs and skips a line that is not JSON, so its sender never learns why no
    answer comes; a line that is JSON but not an object ends its receive loop; one
    nesting deeper than its parser's stack allows fails it. Too deep a line is answered
    from its top level (:mod:`agentls.json_depth`): a request with its id, an answer to
    one of the agent's requests becomes an error answer for the SDK (the request fails),
    a notification is dropped.
    """
    try:
        message = parse_body(line)
    except TooDeep as deep:
        msg_id = deep.fields.get("id") if valid_id(deep.fields.get("id")) else None
        if deep.kind == "notification":
            logger.warning("%s: ignored, %s", deep.fields["method"], deep)
            return None, None
        if deep.kind == "response" and msg_id is not None:
            return _error(msg_id, -32600, f"the client's answer {deep}"), None
        if deep.params_only and msg_id is not None:
            return None, _error(msg_id, -32602, f"Invalid params for {deep.fields['method']}: {deep}")
        return None, _error(msg_id, -32600, f"Invalid request: {deep}")
    except ValueError as error:
        return None, _error(None, -32700, f"Parse error: {error}")
    if not isinstance(message, dict):
        return None, _error(None, -32600, "Invalid request: a message is a JSON object (ACP has no batches)")
    return message, None


class StdioTransport:
    """The SDK's message transport (``acp.Transport``) on stdin and an :class:`OutputWriter` on stdout.

    The SDK's own stdio transport waits for the pipe to drain after each message, and its
    SIGTERM is the default one: the process died with its runs' processes still running.
    Here a thread writes; :meth:`end` (SIGTERM, or a client gone) ends the input at once, so
    the runs are aborted and their processes ended. At the end of the input the requests read
    before it are answered first, the runs aborted meanwhile (:meth:`AcpAgent.input_ended`), for up
    to :data:`~agentls.fronts.lsp.framing.ANSWER_SECONDS`: the SDK would cancel them unanswered, and a
    script lost its last answers.
    """

    def __init__(self, fd: int, agent: AcpAgent) -> None:
        self.output = OutputWriter(sys.stdout.fileno(), self.end, max_unread_bytes())
        self._messages: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._unanswered: set[str] = set()
        self._answered = asyncio.Event()
        self._agent = agent
        agent.output_written = self.output.written
        self._reading = asyncio.ensure_future(self._read(fd))

    def end(self) -> None:
        self._reading.cancel()

    async def send(self, message: dict[str, Any]) -> None:
        if "method" not in message and "id" in message:
            self._unanswered.discard(json.dumps(message["id"]))
            if not self._unanswered:
                self._answered.set()
        line = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        self.output.write(line, at_once="id" in message)  # an answer, or a request: the client waits for it

    async def receive(self) -> dict[str, Any] | None:
        return await self._messages.get()

    async def close(self) -> None:
        self.end()

    async def _read(self, fd: int) -> None:
        """The input's messages (:func:`_screen`), then ``None``: at its end once the requests read are
        answered, or when cancelled."""
        try:
            async for line in _lines(fd):
                if not line.strip():
                    continue
                message, answer = _screen(line)
                if message is not None:
                    if "method" in message and valid_id(message.get("id")):
                        self._unanswered.add(json.dumps(message["id"]))
                    self._messages.put_nowait(message)
                if answer is not None:
                    await self.send(answer)
            await self._drain()
        finally:
            self._messages.put_nowait(None)

    async def _drain(self) -> None:
        """Until every request read is answered and what they notify is sent, the runs aborted (for at
        most :data:`~agentls.fronts.lsp.framing.ANSWER_SECONDS`)."""

        async def drained() -> None:
            ending = asyncio.ensure_future(self._agent.input_ended())
            if self._unanswered:
                self._answered.clear()
                await self._answered.wait()
            await ending
            await self._agent.notified()

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drained(), ANSWER_SECONDS)


async def _lines(fd: int) -> AsyncIterator[bytes]:
    """The lines read from ``fd`` (the last one without its newline too). A line longer than
    :data:`LINE_LIMIT` comes as ``b"{"`` (answered as a parse error), the rest of it skipped.

    Read as ``agentls serve`` reads (:func:`~agentls.fronts.lsp.framing.read_chunks`, a thread),
    so the input may be a pipe, a socket, a file or ``/dev/null``.
    """
    pending = bytearray()
    skipping = False  # the rest of a line past the limit
    async for chunk in read_chunks(fd):
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            if skipping:
                skipping = False
                continue
            pending += piece
            yield bytes(pending)
            pending.clear()
        if not skipping:
            pending += rest
            if len(pending) > LINE_LIMIT:
                pending.clear()
                skipping = True
                yield b"{"
    if pending and not skipping:
        yield bytes(pending)


async def _serve(agent: AcpAgent) -> None:
    """Serve until the end of input, SIGTERM or a client gone, which all end the same way (runs aborted)."""
    loop = asyncio.get_running_loop()
    transport = StdioTransport(sys.stdin.fileno(), agent)
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows
        loop.add_signal_handler(signal.SIGTERM, transport.end)
    try:
        await run_agent(agent, transport, use_unstable_protocol=True)
    finally:
        await agent.close()
        await asyncio.to_thread(transport.output.close)


def serve_acp(options: InitializationOptions) -> int:
    """ACP over stdin and stdout (newline-delimited JSON-RPC); logs go to stderr."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="agentls acp: %(levelname)s %(message)s"
    )
    logging.getLogger().handlers[0].addFilter(RedactingFilter())
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(AcpAgent(options)))
    return 0
