"""One MCP server: its process or HTTP connection (the ``mcp`` SDK's client), its tools, its status.

The SDK's client is an anyio context that must be left by the task that entered it, so
each connection lives in a task of its own, from the start to the stop (or a failure);
calls come from the sessions' tool tasks. A server that fails is started again at its
next use, no sooner than its backoff allows (1, 2, 4 ... 60 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any, Literal

import mcp_types
from mcp import Client, MCPError
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agentls import __version__
from agentls.mcp.config import ServerConfig
from agentls.mcp.stdio import stdio_transport
from agentls.tools.sandbox import Sandbox

logger = logging.getLogger(__name__)

Status = Literal["starting", "ready", "failed", "needsTrust"]
Progress = Callable[[float, float | None, str | None], Awaitable[None]]

MAX_BACKOFF_SECONDS = 60.0
STDERR_TAIL_LINES = 12


class McpServerError(Exception):
    """A call could not be made or did not finish; the message names the server and says why."""


class McpConnection:
    """A configured server, started on demand."""

    def __init__(
        self,
        config: ServerConfig,
        log_dir: Path,
        on_change: Callable[[McpConnection], None],
        sandbox: Sandbox | None = None,
    ) -> None:
        self.config = config
        self.sandbox = sandbox
        """Confines a stdio server (``sandboxMcpServers``); ``None``: it runs unconfined."""
        self.log_path = log_dir / f"{config.name}.log"
        self._on_change = on_change
        self.status: Status = "needsTrust" if config.needs_trust else "starting"
        self.error: str | None = None
        self.tools: list[mcp_types.Tool] = []
        self.agent_tools: tuple[list[mcp_types.Tool], list[Any]] | None = None
        """The agent's tools made of ``tools`` (that very list), kept for the next turns."""
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        """Set when a start has ended: ready, or failed."""
        self._closing = asyncio.Event()
        self._failures = 0
        self._retry_at = 0.0
        self._refreshing: asyncio.Task[None] | None = None
        """Listing the tools again after ``notifications/tools/list_changed``."""

    # --- life -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Start the server in the background (nothing if it is running or starting)."""
        if self.running:
            return
        self._closing = asyncio.Event()
        self._settled = asyncio.Event()
        self._set("starting", None)
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp-{self.config.name}")

    def needs_trust(self) -> None:
        self._set("needsTrust", None)

    def start_if_due(self) -> None:
        """Start a server that is not running, unless it failed and its backoff has not passed."""
        if self.status == "needsTrust" or self.running:
            return
        if self.status == "failed" and time.monotonic() < self._retry_at:
            return
        self.start()

    async def stop(self) -> None:
        self._closing.set()
        task = self._task
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), 5)
            if not task.done():
                task.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await task

    async def restart(self) -> None:
        await self.stop()
        self._failures = 0
        self._retry_at = 0.0
        self.start()

    async def wait_started(self) -> None:
        """Until the current start has ended (ready or failed)."""
        await self._settled.wait()

    async def _run(self) -> None:
        with await asyncio.to_thread(self._open_log) as log:
            log.write(f"--- agentls starts {self.config.name}: {self.config.describe()}\n")
            log.flush()
            try:
                async with Client(
                    await self._transport(log),
                    mode="legacy",
                    message_handler=self._on_message,
                    client_info=mcp_types.Implementation(name="agentls", version=__version__),
                ) as client:
                    self._client = client
                    self.tools = await self._list_tools(client)
                    self._failures = 0
                    self._set("ready", None)
                    self._settled.set()
                    await self._closing.wait()
            except Exception as error:  # the SDK's errors, OSError for a missing command, ...
                if not self._closing.is_set():
                    self._failed(_describe(error))
            finally:
                self._client = None
                self._settled.set()
                if self.status == "ready":  # stopped on purpose
                    self.tools = []
                    self._set("starting", None)

    def _open_log(self) -> IO[str]:
        """The server's log, where its stderr goes (appended to: each start begins with a line of ours)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        return open(self.log_path, "a", encoding="utf-8", errors="replace")  # closed by _run

    async def _transport(self, log: IO[str]) -> Any:
        config = self.config
        if config.transport == "stdio":
            assert config.command is not None
            command, env = [config.command, *config.args], dict(config.env)
            if self.sandbox is not None:  # SandboxRefused: the start fails, saying why
                command, extra = await asyncio.to_thread(self.sandbox.command, command)
                env.update(extra)
            parameters = StdioServerParameters(
                command=command[0], args=command[1:], env=env or None, cwd=config.cwd
            )
            return stdio_transport(parameters, errlog=log)
        assert config.url is not None
        headers = dict(config.headers)
        if config.transport == "sse":
            return sse_client(config.url, headers=headers or None)
        return streamable_http_client(config.url, http_client=create_mcp_http_client(headers=headers or None))

    def _failed(self, reason: str) -> None:
        self._failures += 1
        delay = min(MAX_BACKOFF_SECONDS, 2.0 ** (self._failures - 1))
        self._retry_at = time.monotonic() + delay
        tail = self.stderr_tail()
        self._set("failed", f"{reason}" + (f"; its stderr ends with:\n{tail}" if tail else ""))
        self._closing.set()
        logger.warning("MCP server %s failed: %s (log: %s)", self.config.name, reason, self.log_path)

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr since it was last started."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        lines = text.rsplit("--- agentls starts", 1)[-1].splitlines()[1:]
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    def _set(self, status: Status, error: str | None) -> None:
        changed = (status, error) != (self.status, self.error)
        self.status, self.error = status, error
        if changed:
            self._on_change(self)

    # --- tools ----------------------------------------------------------------------------

    async def _list_tools(self, client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that never ends its listing gets cut off
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification) and self._client is not None:
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh_tools(self._client))

    async def tools_settled(self, seconds: float = 5.0) -> None:
        """Until a listing of the tools after a change notification is done (at most ``seconds``),
        so that the turn after a call that changed them sees the new ones."""
        refreshing = self._refreshing
        if refreshing is not None and not refreshing.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(refreshing), seconds)

    async def _refresh_tools(self, client: Client) -> None:
        try:
            tools = await self._list_tools(client)
        except Exception as error:
            logger.warning("MCP server %s: cannot list its tools again: %s", self.config.name, error)
            return
        if client is self._client:
            self.tools = tools
            self._on_change(self)

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: Progress | None
    ) -> mcp_types.CallToolResult:
        """Call a tool; a server that is down is started first (when its backoff allows).

        Raises :class:`McpServerError` when the server cannot be reached, fails during the
        call (it is then ``failed``) or does not answer within its ``timeout``. Cancelling
        the caller, or the timeout, cancels the call (the SDK sends MCP's cancellation).
        """
        client = await self._connected()
        timeout = self.config.timeout
        try:
            return await client.call_tool(
                tool, arguments, read_timeout_seconds=timeout, progress_callback=progress
            )
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if isinstance(error, MCPError) and error.code == mcp_types.REQUEST_TIMEOUT:
                raise McpServerError(
                    f"MCP server {self.config.name}: {tool} did not answer within {timeout:g} s, so the call "
                    "was cancelled; if it needs longer, the server's `timeout` setting can allow more"
                ) from error
            reason = _describe(error)
            if self._client is client and _connection_lost(error):
                self._failed(reason)
                raise McpServerError(self._failure_text()) from error
            raise McpServerError(f"MCP server {self.config.name}: {reason}") from error

    async def _connected(self) -> Client:
        if self.status == "needsTrust":
            raise McpServerError(
                f"MCP server {self.config.name} ({self.config.source}) is not trusted yet; the user can "
                "trust it when asked, or restart it"
            )
        if self.status == "failed" and time.monotonic() < self._retry_at:
            wait = self._retry_at - time.monotonic()
            raise McpServerError(
                f"{self._failure_text()}\n(It is started again in {wait:.0f} s, at its next use.)"
            )
        self.start_if_due()
        await self._settled.wait()
        if self._client is None:
            raise McpServerError(self._failure_text())
        return self._client

    def _failure_text(self) -> str:
        return f"MCP server {self.config.name} failed: {self.error or 'it stopped'}"


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in error.exceptions)
    text = str(error) or type(error).__name__
    if isinstance(error, FileNotFoundError):
        return f"cannot run it ({text})"
    return text


def _connection_lost(error: BaseException) -> bool:
    text = str(error).lower()
    return (
        "connection closed" in text or ("closed" in text and "stream" in text) or isinstance(error, OSError)
    )
