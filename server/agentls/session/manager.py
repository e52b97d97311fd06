"""The sessions of one server: creating, loading, listing and deleting them."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from agentls.agent import AgentTool
from agentls.ai import THINKING_LEVELS, Model, Models, now_ms
from agentls.data import DEMO_SCRIPT
from agentls.data_dir import default_data_dir
from agentls.mcp.hub import McpHub, McpStatusChanged, SessionMcp
from agentls.protocol import (
    BudgetSettings,
    CompactionSettings,
    InitializationOptions,
    McpServerInfo,
    ModelRef,
    NewSessionParams,
    PermissionMode,
    PermissionRule,
    RequestPermissionParams,
    RequestPermissionResult,
    SandboxSettings,
    SessionInfo,
)
from agentls.session.editor_context import EditorContext
from agentls.session.errors import SessionError
from agentls.session.history.checkpoints import Checkpoints
from agentls.session.history.file_changes import ChangeLog, remove_stale_temp_files
from agentls.session.history.rewind import interrupted_report
from agentls.session.history.store import (
    LoadedSession,
    SessionHeader,
    SessionNotFound,
    SessionStore,
    SessionStoreError,
    SessionWriter,
    UnknownEntry,
    new_session_id,
)
from agentls.session.instructions.instructions import (
    PromptSettings,
    SessionInstructions,
)
from agentls.session.policy.permissions import (
    PermissionRules,
    loaded_policy,
    permission_hook,
    sandbox_escalation,
)
from agentls.session.policy.project_trust import FolderTrust
from agentls.session.policy.providers import (
    MODELS_FILE,
    ProviderSettings,
    catalog,
    resolve_model,
    session_models,
)
from agentls.session.policy.stored_limits import stored_limits
from agentls.session.session import AgentSession
from agentls.tools import (
    DiskWorkspace,
    Escalate,
    ProcessTracker,
    Sandbox,
    Workspace,
    coding_tools,
    keeper_spawner,
)
from agentls.tools.bounds import OutputFiles, with_outputs
from agentls.tools.diagnostics import diagnostics_tool
from agentls.tools.editor_connection import EditorConnection
from agentls.tools.environment import ToolEnvironment
from agentls.tools.review import EditReviews

logger = logging.getLogger(__name__)


def _client_path(path: str) -> Path:
    """A folder path a client sent, absolute and resolved; unusable ones are ``invalidParams``."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError) as error:  # a NUL byte, a symlink loop, ~nobody
        raise SessionError("invalidParams", f"cwd {path!r} is not a usable path ({error})") from None


def _workspace_folder(cwd: str | None) -> str:
    path = _client_path(cwd or os.getcwd())
    if not path.is_dir():
        raise SessionError("invalidParams", f"cwd {path} is not a folder")
    return str(path)


def _prompt_settings(loaded: LoadedSession) -> PromptSettings:
    """How a stored session's system prompt is made: as when it was created (or last changed)."""
    return PromptSettings(
        system_prompt=loaded.system_prompt or None,
        append_system_prompt=loaded.header.append_system_prompt,
        context_files=loaded.header.context_files,
    )


class SessionFront(Protocol):
    """How a front plugs into the sessions it creates: their files, tools and questions, and their events.

    The LSP front gives the editor (its buffers, edits, diagnostics and reviews); the ACP
    front its client's files and terminals. Each translates the events to its own wire.
    """

    def editor(self, session_id: str) -> EditorConnection | None:
        """The session's editor: the one its tools use for diagnostics and edit reviews, and whose
        position encoding editor context is in (``None``: no editor)."""
        ...

    def workspace(self, session_id: str, cwd: str, allow_outside: bool) -> Workspace | None:
        """The session's files (``None``: the disk's)."""
        ...

    def tools(self, session_id: str, cwd: str, tools: list[AgentTool]) -> list[AgentTool]:
        """The session's tools, some maybe replaced (``bash`` running in the client's terminal)."""
        ...

    async def ask(self, request: RequestPermissionParams) -> RequestPermissionResult:
        """Ask the user a permission question; the outcome chosen (``reject`` when there is none)."""
        ...

    def session_opened(self, session: AgentSession) -> None:
        """A session was created or loaded, before it runs: the front subscribes to its events here."""
        ...

    def mcp_status_changed(self, event: McpStatusChanged) -> None:
        """An MCP server's status changed (the sessions of a folder share their servers)."""
        ...


class SessionManager:
    """Every :class:`AgentSession` of a server, by id, backed by a :class:`SessionStore`."""

    def __init__(self, options: InitializationOptions, front: SessionFront) -> None:
        self.options = options
        self.front = front
        self.store = SessionStore(Path(options.data_dir) if options.data_dir else default_data_dir())
        self.providers = ProviderSettings(
            faux_script=options.faux_script or (str(DEMO_SCRIPT) if options.demo else None),
            models_file=self.store.root / MODELS_FILE,
        )
        self.sessions: dict[str, AgentSession] = {}
        self._policies: dict[str, tuple[dict[str, PermissionMode] | None, bool]] = {}
        """Each loaded session's own modes and ``allowOutsideWorkspace`` as applied (a fork keeps them)."""
        self.permission_rules = PermissionRules(self.store.root / "permissions.json")
        self.trust = FolderTrust(self.permission_rules, options.project_trust)
        """Whether the user trusts a folder's project files (asked with its MCP servers)."""
        confine_mcp = options.sandbox if options.sandbox_mcp_servers and options.sandbox else None
        self.mcp = McpHub(
            self.store.root,
            front.mcp_status_changed,
            front.ask,
            self.permission_rules,
            self.trust,
            confine_mcp,
        )
        """The MCP servers of every session, shared by the sessions of a folder."""
        self._refreshing: set[asyncio.Task[None]] = set()

    def get(self, session_id: str) -> AgentSession:
        session = self.sessions.get(session_id)
        if session is None:
            hint = " (it is stored: load it with agent/loadSession)" if self._stored(session_id) else ""
            raise SessionError("unknownSession", f"No session {session_id} in this server{hint}")
        return session

    def _stored(self, session_id: str) -> bool:
        try:
            return self.store.exists(session_id)
        except SessionNotFound:
            return False

    def _open(
        self,
        header: SessionHeader,
        models: Models,
        model: Model,
        level: str,
        writer: SessionWriter,
        mcp: SessionMcp,
        permissions: dict[str, PermissionMode] | None,
        instructions: SessionInstructions,
        sandbox_settings: SandboxSettings | None = None,
        budget: BudgetSettings | None = None,
    ) -> AgentSession:
        """A session with its tools, workspace and policy, registered, its MCP servers started.

        ``sandbox_settings`` and ``budget``: the session's own (``agent/newSession``'s), else the server's.
        """
        session_id, cwd, allow_outside = header.id, header.cwd, header.allow_outside_workspace
        sandbox = Sandbox(sandbox_settings or self.options.sandbox or SandboxSettings(), cwd)

        async def record(kind: str, data: Any) -> None:
            await writer.append_custom(kind, data, data)

        escalate = sandbox_escalation(session_id=session_id, ask=self.front.ask, record=record)
        processes = ProcessTracker(ToolEnvironment.of(self.providers.models_file, self.options.pass_keys))
        keeper_spawner.start_soon()  # its bash and agent/bash commands do not wait for the spawner's start
        workspace = self._workspace(session_id, cwd, allow_outside)
        editor = self.front.editor(session_id)
        reviews = self._reviews(session_id, editor)
        changes = ChangeLog()
        modes = {**(self.options.permissions or {}), **(permissions or {})}
        outputs = OutputFiles(processes.outputs)  # beside bash's cut outputs
        tools = self._tools(
            with_outputs(workspace, outputs), processes, reviews, changes, editor, sandbox, escalate
        )
        tools = self.front.tools(session_id, cwd, tools)
        session = AgentSession(
            session_id=session_id,
            cwd=cwd,
            models=models,
            model=model,
            thinking_level=level,
            system_prompt="",
            workspace=workspace,
            changes=changes,
            tools=tools,
            editor_context=self._editor_context(workspace, editor),
            processes=processes,
            writer=writer,
            before_tool_call=permission_hook(
                session_id=session_id,
                workspace=cwd,
                modes=modes,
                rules=self.permission_rules,
                ask=self.front.ask,
                allow_outside=allow_outside,
                reviews=reviews,
            ),
            permission_modes=modes,
            instructions=instructions,
            compaction=self._compaction(header.compaction),
            coalesce_deltas=self.options.coalesce_deltas,
            mcp=mcp,
            outputs=outputs,
            checkpoints=Checkpoints.of(self.store.root, cwd, self.options.checkpoints, workspace.protected),
            sandbox=sandbox,
            budget=budget or self.options.budget,
            ask=self.front.ask,
        )
        self.sessions[session_id] = session
        self._policies[session_id] = (permissions, allow_outside)
        self.front.session_opened(session)
        return session

    def _activate(self, session: AgentSession) -> None:
        """After the first refresh: start the session's MCP servers and ask about the folder's trust
        with them when its project files wait for it (the answer refreshes the session); snapshot the
        folder in the background."""
        instructions, mcp = session.instructions, session.mcp
        assert instructions is not None and mcp is not None
        session.prepare_checkpoints()
        self.mcp.activate(mcp, instructions.opened())
        answer = instructions.trust_pending()
        if answer is not None:
            answer.add_done_callback(lambda _: self._refresh_later(session))

    def _refresh_later(self, session: AgentSession) -> None:
        task = asyncio.get_running_loop().create_task(session.refresh_instructions())
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    def _reviews(self, session_id: str, editor: EditorConnection | None) -> EditReviews | None:
        """The session's edit reviews, when the editor can show one (``review`` asks otherwise)."""
        if editor is None or not editor.answers_review:
            return None
        return EditReviews(session_id, editor.review_edit)

    def _workspace(self, session_id: str, cwd: str, allow_outside: bool) -> Workspace:
        """A session's files: through the front when it has them (the editor's, the client's), else on disk.

        The data folder is off limits to the tools in every one (see :meth:`Workspace.protect`).
        """
        workspace = self.front.workspace(session_id, cwd, allow_outside) or DiskWorkspace(cwd, allow_outside)
        workspace.protect(self.store.root)
        return workspace

    @staticmethod
    def _tools(
        workspace: Workspace,
        processes: ProcessTracker,
        reviews: EditReviews | None,
        changes: ChangeLog,
        editor: EditorConnection | None,
        sandbox: Sandbox,
        escalate: Escalate,
    ) -> list[AgentTool]:
        """The coding tools over ``workspace``, and ``diagnostics`` when the editor answers for it."""
        tools = coding_tools(workspace, processes, reviews, changes.record, sandbox, escalate)
        if editor is not None and editor.answers_diagnostics:
            tools.append(diagnostics_tool(workspace, editor.diagnostics))
        return tools

    @staticmethod
    def _editor_context(workspace: Workspace, editor: EditorConnection | None) -> EditorContext:
        if editor is None:
            return EditorContext(workspace, "utf-16", None)
        return EditorContext(
            workspace, editor.position_encoding, editor.diagnostics if editor.answers_diagnostics else None
        )

    def _compaction(self, own: dict[str, Any] | None) -> CompactionSettings:
        """A session's compaction settings: its own (as stored) if it set any, else the server's."""
        if own is not None:
            return CompactionSettings.model_validate(own)
        return self.options.compaction or CompactionSettings()

    def list_permission_rules(self, cwd: str | None) -> list[PermissionRule]:
        return self.permission_rules.list(str(_client_path(cwd)) if cwd else None)

    def list_models(self) -> list[Model]:
        return catalog(self.providers)

    async def new_session(self, params: NewSessionParams) -> AgentSession:
        cwd = _workspace_folder(params.cwd)
        models = session_models(self.providers)
        ref = params.model or self.options.model
        model = resolve_model(models, ref.provider if ref else None, ref.id if ref else None)
        level = params.thinking_level or self.options.thinking_level or "off"
        prompt = PromptSettings(
            system_prompt=params.system_prompt or self.options.system_prompt,
            append_system_prompt=params.append_system_prompt or self.options.append_system_prompt,
            context_files=params.context_files is not False,
        )
        session_id = new_session_id()
        allow_outside = params.allow_outside_workspace
        if allow_outside is None:
            allow_outside = bool(self.options.allow_outside_workspace)
        header = SessionHeader(
            id=session_id,
            cwd=cwd,
            created_at=int(time.time() * 1000),
            system_prompt=prompt.system_prompt or "",
            model=(model.provider, model.id),
            thinking_level=level,
            permissions=dict(params.permissions) if params.permissions else None,
            allow_outside_workspace=allow_outside,
            append_system_prompt=prompt.append_system_prompt,
            context_files=prompt.context_files,
            compaction=params.compaction.model_dump(by_alias=True) if params.compaction else None,
            mcp_servers=params.mcp_servers or None,
            sandbox=params.sandbox.wire() if params.sandbox else None,
            budget=params.budget.wire() if params.budget else None,
        )
        mcp = await self.mcp.for_session(session_id, cwd, self.options.mcp_servers, header.mcp_servers)
        try:
            writer = self.store.create(header)
        except SessionStoreError as error:
            raise SessionError("storage", str(error)) from error
        session = self._open(
            header,
            models,
            model,
            level,
            writer,
            mcp,
            params.permissions,
            SessionInstructions(cwd, self.store.root, prompt, self.trust),
            params.sandbox,
            params.budget,
        )
        if params.permission_preset is not None:
            session.permissions.use_preset(params.permission_preset)
        await remove_stale_temp_files(session.cwd, (node.data for node in session.tree))
        await session.refresh_instructions()
        self._activate(session)
        return session

    async def load_session(
        self,
        session_id: str,
        permissions: dict[str, PermissionMode] | None = None,
        allow_outside: bool | None = None,
    ) -> AgentSession:
        """A stored session, loaded once; its file's policy may only narrow this server's
        (:func:`~agentls.session.policy.permissions.loaded_policy`), ``permissions`` and
        ``allow_outside`` (the user's word) apply as given; what was not applied is in its
        ``load_warnings``."""
        if session_id in self.sessions:
            return self.sessions[session_id]
        try:
            loaded, writer = await asyncio.to_thread(self.store.load_for_append, session_id)
        except SessionNotFound as error:
            raise SessionError("unknownSession", str(error)) from error
        except SessionStoreError as error:
            raise SessionError("storage", str(error)) from error
        mcp = await self.mcp.for_session(
            session_id,
            loaded.header.cwd,
            self.options.mcp_servers,
            loaded.header.mcp_servers,
            stored_in=self.store.folder / f"{session_id}.jsonl",
        )
        if session_id in self.sessions:  # a concurrent loadSession got there first: one session, one writer
            writer.close()
            return self.sessions[session_id]
        models = session_models(self.providers)
        provider, model_id = loaded.model if loaded.model else (None, None)
        try:
            model = resolve_model(models, provider, model_id)
        except SessionError:
            if not models.get_models():
                raise
            model = resolve_model(models, None, None)
        level = loaded.thinking_level if loaded.thinking_level in THINKING_LEVELS else "off"
        instructions = SessionInstructions(
            loaded.header.cwd, self.store.root, _prompt_settings(loaded), self.trust
        )
        policy = loaded_policy(
            loaded.header.permissions,
            loaded.header.allow_outside_workspace,
            server=self.options.permissions or {},
            server_outside=bool(self.options.allow_outside_workspace),
            asked=permissions,
            asked_outside=allow_outside,
        )
        header = replace(loaded.header, allow_outside_workspace=policy.allow_outside)
        sandbox, budget, limit_warnings = stored_limits(
            header.sandbox,
            header.budget,
            server_sandbox=self.options.sandbox or SandboxSettings(),
            server_budget=self.options.budget or BudgetSettings(),
            cwd=header.cwd,
        )
        session = self._open(
            header, models, model, level, writer, mcp, policy.permissions, instructions, sandbox, budget
        )
        await remove_stale_temp_files(session.cwd, (node.data for node in session.tree))
        session.load_warnings = [
            *policy.warnings,
            *limit_warnings,
            *await interrupted_report(loaded.tree, session.workspace),
        ]
        if session.load_warnings:
            logger.warning("session %s: %s", session_id, " ".join(session.load_warnings))
        await session.refresh_instructions()
        self._activate(session)
        return session

    async def list_sessions(self, cwd: str | None) -> list[SessionInfo]:
        """The stored sessions, newest first; the files are read in a thread (the loop goes on)."""
        resolved = str(_client_path(cwd)) if cwd else None
        infos = []
        for summary in await asyncio.to_thread(self.store.list, resolved):
            infos.append(
                SessionInfo(
                    session_id=summary.session_id,
                    cwd=summary.cwd,
                    title=summary.title,
                    created_at=summary.created_at,
                    updated_at=summary.updated_at,
                    message_count=summary.message_count,
                    model=ModelRef(provider=summary.model[0], id=summary.model[1]) if summary.model else None,
                    loaded=summary.session_id in self.sessions,
                )
            )
        return infos

    async def fork_session(self, session_id: str, entry_id: str) -> str:
        """A new session whose history is ``session_id``'s up to ``entry_id``; the original is untouched."""
        new_id = new_session_id()
        try:
            await asyncio.to_thread(self.store.fork, session_id, entry_id, new_id, now_ms())
        except UnknownEntry as error:
            raise SessionError("invalidParams", f"{error} (agent/getMessages lists the entry ids)") from None
        except SessionNotFound as error:
            raise SessionError("unknownSession", str(error)) from None
        except SessionStoreError as error:
            raise SessionError("storage", str(error)) from error
        await self.load_session(new_id, *self._policies.get(session_id, (None, None)))
        return new_id

    def mcp_servers(self, session_id: str | None) -> tuple[list[McpServerInfo], list[str]]:
        """The MCP servers of a session and its configuration's mistakes, or every server this one knows."""
        if session_id is not None:
            mcp = self.get(session_id).mcp
            return (mcp.infos(), mcp.problems) if mcp is not None else ([], [])
        return [self.mcp.info(connection) for connection in self.mcp.all()], []

    async def restart_mcp_server(self, name: str, session_id: str | None) -> McpServerInfo:
        """Restart the servers of that name (of the session, or all); the first one's entry."""
        if session_id is not None:
            mcp = self.get(session_id).mcp
            candidates = mcp.connections if mcp is not None else []
        else:
            candidates = self.mcp.all()
        found = [connection for connection in candidates if connection.config.name == name]
        if not found:
            known = sorted({c.config.name for c in candidates})
            raise SessionError(
                "invalidParams",
                f"No MCP server {name!r}"
                + (f" in session {session_id}" if session_id else "")
                + (f"; the servers are: {', '.join(known)}" if known else "; there are none"),
            )
        for connection in found:
            await self.mcp.restart(connection, session_id or "")
        return self.mcp.info(found[0])

    async def rename_session(self, session_id: str, name: str) -> str | None:
        """Store the session's display name (Pi's ``session_info``); a stored session is loaded first."""
        session = self.sessions.get(session_id) or await self.load_session(session_id)
        stored = " ".join(name.split())
        await session.writer.append_session_info(stored)
        return stored or None

    async def delete_session(self, session_id: str) -> bool:
        session = self.sessions.pop(session_id, None)
        self._policies.pop(session_id, None)
        if session is not None:
            await session.close()
        try:
            return self.store.delete(session_id)
        except SessionNotFound:
            return session is not None
        except SessionStoreError as error:  # e.g. a folder where the session file should be
            raise SessionError("storage", str(error)) from error

    async def close(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        await self.mcp.close()
