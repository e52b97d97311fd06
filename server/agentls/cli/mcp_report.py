"""The MCP servers of a run or chat on the terminal: one line for each that fails or waits for trust."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

STDERR_MARK = "; its stderr ends with:\n"
"""How the server joins a failed MCP server's reason and the tail of its stderr."""


def mcp_status_line(server: dict[str, Any]) -> str | None:
    """An MCP server that failed or waits for trust (an ``agent/mcpStatus`` or a server of
    ``agent/listMcpServers``), as one line; ``None`` for the other statuses."""
    name, status = server.get("name"), server.get("status")
    if status == "failed":
        error = str(server.get("error") or "it stopped")
        reason, _, tail = error.partition(STDERR_MARK)
        last = [line.strip() for line in tail.splitlines() if line.strip()][-1:]
        reason = " ".join(reason.split())
        return f"! MCP server {name} failed: {reason}" + (f" (its stderr: {last[0]})" if last else "")
    if status == "needsTrust":
        source = str(server.get("source") or "")
        return f"! MCP server {name} ({source.rsplit('/', 1)[-1]}) is not started: it waits for your trust"
    return None


def mcp_problem_line(problem: str) -> str:
    """A mistake in the MCP configuration (``problems`` of ``agent/listMcpServers``), as one line."""
    return "! MCP configuration: " + " ".join(problem.split())


class McpReport:
    """The MCP servers of a run or chat: a line for each server that fails or waits for trust
    (``agent/mcpStatus``), the configuration's problems once, and the servers still starting."""

    def __init__(self, show: Any, data_dir: Path | None = None, *, show_ready: Any = None) -> None:
        self.show = show
        """``show(text)``: one line to the user."""
        self.show_ready = show_ready
        """``show_ready(text)``, if given: a line when a server becomes ready (``agentls chat``)."""
        self.data_dir = data_dir
        """The server's data folder, where a failed server's log is."""
        self.status: dict[tuple[str, str], str] = {}
        self._shown: dict[tuple[str, str], str] = {}
        self._changed = asyncio.Event()

    def __call__(self, server: dict[str, Any]) -> None:
        """One server's status (an ``agent/mcpStatus``, or an entry of ``agent/listMcpServers``)."""
        key = (str(server.get("name")), str(server.get("cwd")))
        self.status[key] = str(server.get("status"))
        self._changed.set()
        line = mcp_status_line(server)
        if line is not None and server.get("status") == "failed" and self.data_dir is not None:
            line += f" · log: {self.data_dir / 'mcp-logs' / (str(server.get('name')) + '.log')}"
        if line is None and server.get("status") == "ready" and self.show_ready is not None:
            if self._shown.get(key) != "ready":
                self._shown[key] = "ready"
                tools = len(server.get("tools") or [])
                self.show_ready(
                    f"✓ MCP server {server.get('name')} is ready: {tools} tool{'s' * (tools != 1)}"
                )
        elif line is None:
            self._shown.pop(key, None)
        elif self._shown.get(key) != line:
            self._shown[key] = line
            self.show(line)

    async def follow(self, notes: Any) -> None:
        async for note in notes:
            if note.method == "agent/mcpStatus":
                self(note.params)

    async def session(self, client: Any, session_id: str) -> list[tuple[str, str]]:
        """A new session's servers and problems (shown); returns its servers' keys."""
        listing = await client.list_mcp_servers(session_id)
        for problem in listing.problems:
            self.show(mcp_problem_line(problem))
        keys = []
        for server in listing.servers:
            info = server.model_dump(mode="json", by_alias=True, exclude_none=True)
            key = (server.name, server.cwd)
            keys.append(key)
            if key not in self.status:  # a notification since may be newer
                self(info)
        return keys

    async def started(self, keys: list[tuple[str, str]], within: float) -> None:
        """Until none of the servers ``keys`` is starting (at most ``within`` seconds)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                while any(self.status.get(key) == "starting" for key in keys):
                    self._changed.clear()
                    await self._changed.wait()
