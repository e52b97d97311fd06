"""``agentls acp``: run the ACP agent on stdio until the client closes its end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from typing import Any

from acp import run_agent, stdio_streams

from agentls.acp.agent import AcpAgent
from agentls.ai.local_files import read_json_file
from agentls.ai.secrets import RedactingFilter
from agentls.protocol import InitializationOptions, ModelRef


def options_from(
    data_dir: str | None, faux_script: str | None, model: str | None, mcp_config: str | None
) -> InitializationOptions:
    """The session layer's options from the command line (the rest from the environment, as for serve).

    Raises ``ValueError`` saying what is wrong with ``model`` or ``mcp_config``.
    """
    values: dict[str, Any] = {"dataDir": data_dir, "fauxScript": faux_script}
    if model is not None:
        provider, _, model_id = model.partition("/")
        if not model_id:
            raise ValueError(f"--model {model!r}: expected PROVIDER/ID, e.g. anthropic/claude-sonnet-4-5")
        values["model"] = ModelRef(provider=provider, id=model_id)
    if mcp_config is not None:
        try:
            values["mcpServers"] = read_json_file(mcp_config)
        except (OSError, ValueError) as error:
            raise ValueError(f"--mcp-config {mcp_config}: {error}") from None
    return InitializationOptions.model_validate({k: v for k, v in values.items() if v is not None})


LINE_LIMIT = 64 * 1024 * 1024
"""The longest message line read (as ``agentls serve``'s 64 MiB)."""


def _problem(line: bytes) -> tuple[int, str] | None:
    """What is wrong with an input line the SDK would drop without an answer (or crash on)."""
    try:
        message = json.loads(line)
    except ValueError as error:
        return -32700, f"Parse error: {error}"
    if not isinstance(message, dict):
        return -32600, "Invalid request: a message is a JSON object (ACP has no batches)"
    return None


async def _checked(source: asyncio.StreamReader, writer: asyncio.StreamWriter) -> asyncio.StreamReader:
    """The input lines that are JSON objects, for the SDK; the others are answered here.

    The SDK logs and skips a line that is not JSON, so its sender never learns why no
    answer comes, and a line that is JSON but not an object ends its receive loop.
    """
    checked = asyncio.StreamReader(limit=LINE_LIMIT)

    async def pump() -> None:
        while True:
            try:
                line = await source.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                line = end.partial
            except asyncio.LimitOverrunError as error:
                await source.readexactly(error.consumed)
                line = b"{"  # too long: answered as a parse error
            if not line:
                checked.feed_eof()
                return
            if not line.strip():
                continue
            problem = _problem(line)
            if problem is None:
                checked.feed_data(line if line.endswith(b"\n") else line + b"\n")
                continue
            code, message = problem
            answer = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
            writer.write((json.dumps(answer) + "\n").encode())

    task = asyncio.ensure_future(pump())
    checked._agentls_pump = task  # type: ignore[attr-defined]  # kept alive with the reader
    return checked


async def _serve(agent: AcpAgent) -> None:
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    try:
        await run_agent(agent, writer, await _checked(reader, writer), use_unstable_protocol=True)
    finally:
        await agent.close()


def serve_acp(options: InitializationOptions) -> int:
    """ACP over stdin and stdout (newline-delimited JSON-RPC); logs go to stderr."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="agentls acp: %(levelname)s %(message)s"
    )
    logging.getLogger().handlers[0].addFilter(RedactingFilter())
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(AcpAgent(options)))
    return 0
