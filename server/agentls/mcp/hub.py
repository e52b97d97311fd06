"""The MCP servers of one agentls server: shared by the sessions of a folder, trusted, reported.

A server is one :class:`McpConnection` per folder and configuration, whichever session
asked for it first; it starts when a session that uses it starts and runs for the
server's life. A project's ``.mcp.json`` servers (and those of a loaded session's file)
wait for the user's trust: a permission question (``toolName: "mcp"``), remembered as an
"allow always" rule per folder and configuration. The same question asks whether to
trust the folder's project files (the session's question, seen through
:class:`~agentls.mcp.ports.FolderTrustQuestion`) when that is not decided yet: one answer
for both. It shows everything that changes what a server runs, secrets masked
(:mod:`agentls.mcp.display`), and what changed since the user last trusted that server in
that folder (:mod:`agentls.mcp.trusted`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.agent.types import AgentTool
from agentls.ai.secrets import redact
from agentls.mcp.config import ServerConfig, session_servers
from agentls.mcp.display import changes
from agentls.mcp.ports import FolderTrustQuestion, TrustRules
from agentls.mcp.trusted import TrustedForms
from agentls.protocol import Ask, McpServerInfo, PermissionOption, RequestPermissionParams, SandboxSettings
from agentls.tools.sandbox import Sandbox

if TYPE_CHECKING:
    from agentls.mcp.connection import McpConnection

START_WAIT_SECONDS = 15.0
"""How long a prompt's first turn waits for the MCP servers a trust answer starts."""

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class McpStatusChanged:
    """An MCP server started, failed, became ready, or waits for the user's trust."""

    server: McpServerInfo


Notify = Callable[[McpStatusChanged], None]
"""Told of every change of a server's status."""

TRUST_OPTIONS = [
    PermissionOption(id="allowAlways", label="Trust"),
    PermissionOption(id="reject", label="Reject"),
]


def trust_rule(config: ServerConfig) -> str:
    return f"mcp:trust:{config.name}:{config.fingerprint}"


class SessionMcp:
    """The MCP servers one session uses."""

    def __init__(
        self, hub: McpHub, session_id: str, cwd: str, connections: list[McpConnection], problems: list[str]
    ) -> None:
        self.hub = hub
        self.session_id = session_id
        self.cwd = cwd
        self.connections = connections
        self.problems = problems
        """The mistakes in the session's MCP configuration, one line each (source and field)."""

    async def tools_settled(self) -> None:
        """Until tool lists being fetched again after a change are in."""
        await asyncio.gather(*(connection.tools_settled() for connection in self.connections))

    def tools(self) -> list[AgentTool]:
        """The tools of the servers that are ready now (a later turn sees the ones that are ready then)."""
        return [tool for connection in self.connections for tool in self.hub.agent_tools(connection)]

    def infos(self) -> list[McpServerInfo]:
        return [self.hub.info(connection) for connection in self.connections]

    def trust_open(self) -> bool:
        """Whether the folder's trust question is open."""
        return self.hub.trust_question(self.cwd) is not None

    async def trusted_ready(self) -> None:
        """Until the folder's open trust question is answered and the servers the answer starts are
        ready or failed (at most :data:`START_WAIT_SECONDS` for those), so that a prompt's first turn
        sees the tools the user trusts. A server that was starting anyway never holds a prompt."""
        asking = self.hub.trust_question(self.cwd)
        if asking is None:
            return
        before = {id(c) for c in self.connections if c.status == "starting"}
        await asyncio.shield(asking)
        started = [c for c in self.connections if c.status == "starting" and id(c) not in before]
        waits = [asyncio.ensure_future(connection.wait_started()) for connection in started]
        if waits:
            try:
                await asyncio.wait(waits, timeout=START_WAIT_SECONDS)
            finally:
                for wait in waits:
                    wait.cancel()


class McpHub:
    def __init__(
        self,
        data_dir: Path,
        notify: Notify,
        ask: Ask,
        rules: TrustRules,
        trust: FolderTrustQuestion,
        sandbox: SandboxSettings | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._sandbox = sandbox
        """Confines the stdio servers (each in its folder's sandbox); ``None``: they run unconfined."""
        self._notify = notify
        self._ask = ask
        self._rules = rules
        self._trust = trust
        self._trusted_forms = TrustedForms(data_dir)
        self._connections: dict[tuple[str, ServerConfig], McpConnection] = {}
        self._folders: dict[int, str] = {}
        """The folder of each connection (by id)."""
        self._asking: dict[str, asyncio.Task[None]] = {}
        """The trust question being asked for a folder."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._sdk: Any = None
        """:mod:`agentls.mcp.tools` (and the SDK), once a session has a server."""

    # --- sessions -------------------------------------------------------------------------

    async def for_session(
        self, session_id: str, cwd: str, option: Any, requested: Any, stored_in: Path | None = None
    ) -> SessionMcp:
        """A session's servers (created, not started), from every source; mistakes are logged.

        ``stored_in``: ``requested`` comes from this session file (a loaded session's header),
        so its servers need the user's trust as a project's do.
        """
        result = await asyncio.to_thread(session_servers, self.data_dir, cwd, option, requested, stored_in)
        for problem in result.problems:
            logger.warning("MCP configuration: %s", problem)
        if result.servers and self._sdk is None:
            self._sdk = await asyncio.to_thread(importlib.import_module, "agentls.mcp.tools")
        connections = []
        for config in result.servers.values():
            key = (cwd, config)
            connection = self._connections.get(key)
            if connection is None:
                assert self._sdk is not None
                sandbox = Sandbox(self._sandbox, cwd) if self._sandbox is not None else None
                connection = self._sdk.McpConnection(
                    config, self.data_dir / "mcp-logs", self._changed, sandbox
                )
                self._connections[key] = connection
                self._folders[id(connection)] = cwd
            connections.append(connection)
        return SessionMcp(self, session_id, cwd, connections, result.problems)

    def activate(self, servers: SessionMcp, project_files: Sequence[str] = ()) -> None:
        """Start a session's servers in the background: the trusted ones at once, the others once trusted.

        ``project_files``: the folder's files that wait for its trust; when the folder is not
        decided about, the question asks about them too (one answer for both).
        """
        untrusted = []
        for connection in servers.connections:
            config = connection.config
            if config.needs_trust and not self._rules.allows(servers.cwd, trust_rule(config)):
                if connection.status != "needsTrust" or not connection.running:
                    untrusted.append(connection)
                continue
            if connection.status == "needsTrust":  # trusted before (a rule from an earlier run)
                connection.start()
            else:
                connection.start_if_due()
        waiting = [c for c in untrusted if c.status == "needsTrust"]
        files = list(project_files) if self._trust.decision(servers.cwd) is None else []
        if (waiting or files) and servers.cwd not in self._asking:
            if files:
                self._trust.asking(servers.cwd)  # from now on a run waits for the answer
            self._spawn(self._ask_trust(servers.session_id, servers.cwd, waiting, files), servers.cwd)

    def trust_question(self, folder: str) -> asyncio.Future[None] | None:
        """The open trust question of a folder (done once answered and its servers started)."""
        return self._asking.get(folder)

    def _spawn(self, work: Awaitable[None], folder: str) -> None:
        task = asyncio.ensure_future(work)
        self._asking[folder] = task  # type: ignore[assignment]
        self._tasks.add(task)  # type: ignore[arg-type]
        task.add_done_callback(lambda done: (self._tasks.discard(done), self._asking.pop(folder, None)))

    async def _ask_trust(
        self, session_id: str, cwd: str, connections: list[McpConnection], project_files: list[str]
    ) -> None:
        """Ask whether to trust the servers (and the folder's ``project_files``); start them if so."""
        trusted: bool | None = None
        try:
            request = await self._trust_question(session_id, cwd, connections, project_files)
            answer = await self._ask(request)
            trusted = answer.outcome == "allowAlways"
        except Exception as error:  # the client failed to answer: they stay untrusted
            logger.warning("the trust question for %s failed: %s", cwd, error)
        finally:
            if project_files:
                await self._trust.answered(cwd, trusted)
        if not trusted:
            return
        for connection in connections:
            await self._rules.add(cwd, trust_rule(connection.config))
            await self._trusted_forms.put(cwd, connection.config.name, connection.config.shown)
            connection.start()

    async def _trust_question(
        self, session_id: str, cwd: str, connections: list[McpConnection], project_files: list[str]
    ) -> RequestPermissionParams:
        """The question: the folder's files, then each server with all it runs and what changed.

        The title is one line (clients show its control characters escaped).
        """
        sources = sorted({c.config.source for c in connections})
        servers = []
        said = []
        if project_files:
            shown = ", ".join(_relative(path, cwd) for path in project_files)
            said.append(f"Trust the folder {cwd}? Only then do its project files reach the agent: {shown}.")
        if connections:
            said.append(f"Start the MCP servers of {', '.join(sources)}? They run:")
        for connection in connections:
            config = connection.config
            before = await self._trusted_forms.get(cwd, config.name)
            changed = changes(before, config.shown) if before is not None else []
            if before is not None and not changed:
                changed = ["a value that is not shown (a secret, or a variable's value) changed"]
            since = (
                f"changed since you trusted it: {'; '.join(changed)}"
                if changed
                else "new: not trusted in this folder before"
            )
            said.append(f"[{config.name} ({config.transport}): {config.describe()} ({since})]")
            runs = [line.text() for line in config.shown]
            servers.append({**self.info(connection).wire(), "runs": runs, "changed": changed})
        return RequestPermissionParams(
            session_id=session_id,
            tool_call_id=f"mcp-trust-{uuid.uuid4().hex[:12]}",
            tool_name="mcp",
            args={"folder": cwd, "files": sources, "projectFiles": project_files, "servers": servers},
            title=" ".join(said),
            options=TRUST_OPTIONS,
        )

    # --- requests -------------------------------------------------------------------------

    def info(self, connection: McpConnection) -> McpServerInfo:
        config = connection.config
        return McpServerInfo(
            name=config.name,
            source=config.source,
            transport=config.transport,
            status=connection.status,
            error=redact(connection.error) if connection.error else None,
            tools=[tool.name for tool in self.agent_tools(connection)]
            if connection.status == "ready"
            else [],
            cwd=self._folders.get(id(connection), ""),
        )

    def agent_tools(self, connection: McpConnection) -> list[AgentTool]:
        return self._sdk.agent_tools(connection) if self._sdk is not None else []

    def all(self) -> list[McpConnection]:
        return list(self._connections.values())

    async def restart(self, connection: McpConnection, session_id: str) -> None:
        """Stop and start again; one waiting for trust is asked again."""
        cwd = self._folders.get(id(connection), "")
        if connection.config.needs_trust and not self._rules.allows(cwd, trust_rule(connection.config)):
            connection.needs_trust()
            if cwd not in self._asking:
                self._spawn(self._ask_trust(session_id, cwd, [connection], []), cwd)
            return
        await connection.restart()

    def _changed(self, connection: McpConnection) -> None:
        self._notify(McpStatusChanged(self.info(connection)))

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await asyncio.gather(*(c.stop() for c in self._connections.values()), return_exceptions=True)


def _relative(path: str, folder: str) -> str:
    """``path`` as shown in the question: relative to the folder when inside it."""
    try:
        return str(Path(path).relative_to(folder))
    except ValueError:
        return path
