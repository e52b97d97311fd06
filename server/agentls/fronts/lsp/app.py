"""The JSON-RPC server: ``agent/*`` requests mapped onto sessions, nothing more.

Each handler parses its params with the protocol model, calls the session layer
and returns the result model's wire form. Errors become JSON-RPC errors: invalid
params are ``-32602`` with a message naming the field; agent errors are
``-32000`` with ``data.kind`` (see ``protocol.md``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel, ValidationError

from agentls.ai.secrets import RedactingFilter
from agentls.fronts.lsp.boot import Boot
from agentls.fronts.lsp.documents import DocumentError, TextDocuments
from agentls.fronts.lsp.editor import LspEditor
from agentls.fronts.lsp.framing import (
    ANSWER_SECONDS,
    DEFAULT_MAX_MESSAGE_BYTES,
    Frame,
    FrameParser,
    FramingError,
    OutputWriter,
    max_unread_bytes,
    read_frames,
)
from agentls.fronts.lsp.host import SessionHost, opening
from agentls.fronts.lsp.initialize import (
    ClientCapabilities,
    InitializeRefused,
    read_initialize,
    validation_problems,
)
from agentls.fronts.lsp.logs import ClientLogHandler
from agentls.fronts.lsp.progress import ToolProgress
from agentls.fronts.lsp.rpc import (
    EXIT,
    INITIALIZE,
    INVALID_REQUEST,
    PARSE_ERROR,
    SHUTDOWN,
    Connection,
    RpcError,
    invalid_params,
)
from agentls.protocol import (
    AGENT_ERROR,
    INVALID_PARAMS,
    ChangesResult,
    GetChangesParams,
    InitializationOptions,
    McpServerInfo,
    NewSessionParams,
    RevertChangesParams,
    RevertChangesResult,
    RewindResult,
    SessionParams,
    TreeResult,
)
from agentls.protocol_methods import (
    AbortBashResult,
    AttachParams,
    AttachResult,
    BashParams,
    BashResult,
    ClearQueueParams,
    ClientAgentCapabilities,
    CompactParams,
    DeleteSessionResult,
    DetachResult,
    EditQueueItemParams,
    ForkParams,
    GetMessagesParams,
    ListCommandsResult,
    ListMcpServersParams,
    ListMcpServersResult,
    ListModelsParams,
    ListPermissionRulesParams,
    ListSessionsParams,
    ListSessionsResult,
    LoadSessionParams,
    LoadSessionResult,
    ModelsResult,
    MoveQueueItemParams,
    NewSessionResult,
    PermissionRulesResult,
    PromptParams,
    QueueItemResult,
    QueueParams,
    RenameSessionParams,
    RenameSessionResult,
    RestartMcpServerParams,
    RevokePermissionRuleParams,
    RevokeResult,
    RewindParams,
    RunResult,
    SetBudgetParams,
    SetLabelParams,
    SetLabelResult,
    SetModelParams,
    SetPermissionPresetParams,
    SetQueueModesParams,
    SetThinkingLevelParams,
    SwitchBranchParams,
)
from agentls.session import AgentSession, SessionError, SessionManager
from agentls.session.history.store import finish_writing
from agentls.session.policy.providers import WARM_UP_IDLE_SECONDS, model_listing, warm_up

logger = logging.getLogger(__name__)

WARNING = 2
"""LSP's ``MessageType.Warning``."""

M = TypeVar("M", bound=BaseModel)

CLOSE_SECONDS = 10
"""How long the runs of a closing server may take to abort and save."""


class AgentServer:
    """One client's server: its connection, what it said at ``initialize`` and its documents; its
    sessions are its :class:`~agentls.fronts.lsp.host.SessionHost`'s (its own under stdio, the
    per-user server's shared one under ``--listen``)."""

    def __init__(self, host: SessionHost | None = None) -> None:
        self.host = host if host is not None else SessionHost(shared=False)
        self.connection = Connection()
        self.options = InitializationOptions()
        self.client_agent = ClientAgentCapabilities()
        self.client_capabilities = ClientCapabilities()
        self.documents = TextDocuments()
        self.tool_progress = ToolProgress(self)
        self.editor = LspEditor(self)
        self._reading: asyncio.Task[None] | None = None
        self.exit_code: int | None = None
        """Set by ``exit``: 0 after ``shutdown``, else 1 (as LSP says)."""
        self.warms_up = True
        """Whether the providers are warmed up once the server is first idle (:meth:`_when_idle`)."""
        self._warm_up_due = False
        """``initialize`` was handled and the providers are not warmed up yet (:meth:`_when_idle`)."""
        self._handled = 0
        """Messages (and framing errors) handled so far."""
        self.connection.settled = self._when_idle

    @property
    def manager(self) -> SessionManager:
        """The manager of the sessions this client opens (by its initialization options)."""
        return self.host.manager_for(self)

    def session(self, session_id: str) -> AgentSession:
        """The live session of that id, whichever client opened it (``unknownSession`` if none)."""
        found = self.host.live(session_id)
        return found[1] if found is not None else self.manager.get(session_id)

    def session_manager(self, session_id: str) -> SessionManager:
        """The manager of the live session of that id, else this client's."""
        found = self.host.live(session_id)
        return found[0] if found is not None else self.manager

    # --- the connection ------------------------------------------------------------------

    def serve_stdio(self, started: Boot) -> int:
        """Serve on stdin and stdout until ``exit`` or the end of input; the exit code.

        ``started``: what :func:`~agentls.fronts.lsp.boot.boot` read (and answered) before.
        """
        writer = OutputWriter(sys.stdout.fileno(), self.connection_lost, max_unread_bytes())
        self.connection.writer = writer
        self.connection.answered_early = started.answered
        try:
            asyncio.run(self._serve(sys.stdin.buffer.fileno(), started, writer))
        finally:
            writer.close()
        return self.exit_code or 0

    async def serve_pipes(self, in_fd: int, out_fd: int, *, warm_up: bool) -> int:
        """Serve a client of this process over two pipes, in its event loop, until ``exit`` or the
        end of input; the exit code. For the command line, which runs its server in-process
        (:mod:`agentls.cli.in_process`): the process stays the caller's, who sets up its logging
        and its signals and ends it (:func:`end_process`). ``warm_up``: warm the providers up once
        idle (:meth:`_when_idle`), for ``chat``'s first prompt; ``run``'s one prompt sends its
        request at once and a listing sends none (a warm-up beside them only added to
        ``agentls run -p``'s CPU)."""
        self.warms_up = warm_up
        writer = OutputWriter(out_fd, self.connection_lost, max_unread_bytes())
        self.connection.writer = writer
        try:
            await self._serve(in_fd, Boot(FrameParser(DEFAULT_MAX_MESSAGE_BYTES)), writer, own_process=False)
        finally:
            writer.close()
        return self.exit_code or 0

    async def serve_socket(self, connection: socket.socket, max_message_bytes: int) -> None:
        """Serve a client of the per-user server on its connection, until ``exit`` or the end of input
        (:mod:`agentls.fronts.lsp.listen`); its log records go to it as ``window/logMessage``."""
        fd = connection.fileno()
        writer = OutputWriter(fd, self.connection_lost, max_unread_bytes())
        self.connection.writer = writer
        logs = ClientLogHandler(self)
        logging.getLogger("agentls").addHandler(logs)
        try:
            await self._serve(fd, Boot(FrameParser(max_message_bytes)), writer, own_process=False)
        finally:
            logging.getLogger("agentls").removeHandler(logs)
            await asyncio.to_thread(writer.close)

    async def _serve(self, fd: int, started: Boot, writer: OutputWriter, *, own_process: bool = True) -> None:
        writer.attach(asyncio.get_running_loop())  # log records of other threads are written through it
        self.host.connected(self)
        self._reading = asyncio.create_task(self._read(fd, started))
        if own_process:
            with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on Windows
                # An editor closing may terminate the server: end as at the end of input.
                asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.connection_lost)
        ended = False  # the end of the input (not a client gone, nor SIGTERM, nor exit)
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
            ended = True
        if ended and not self.host.shared:
            await self._answer_what_was_read()
        self.connection.cancel_running()
        self.host.disconnected(self)
        await self.close_sessions()

    async def _answer_what_was_read(self) -> None:
        """At the end of the input: the requests read before it answered (for at most
        :data:`~agentls.fronts.lsp.framing.ANSWER_SECONDS`), where stopping at once would cancel them
        unanswered, and every run aborted (those they started too), its ``agent/settled`` sent while the
        client is still connected."""
        await self._abort_runs()
        await self.connection.answered(ANSWER_SECONDS)
        await self._abort_runs()

    async def _abort_runs(self) -> None:
        await asyncio.gather(*(session.abort() for session in self.host.sessions()))

    async def _read(self, fd: int, started: Boot) -> None:
        for item in started.read:
            await self._handle(item)
        async for item in read_frames(fd, started.parser, waiting=self._when_idle):
            await self._handle(item)

    def _when_idle(self) -> None:
        """Warm the providers up once the server first has had nothing to do for :data:`WARM_UP_IDLE_SECONDS`:
        all the client sent answered, nothing more read, no run going on. Called when the reader
        waits for input and when the last request is answered; a message handled before the time is
        up cancels it. Done at ``initialize``, the warm-up's imports (httpx, its TLS stack, the SSL
        context: 0.1 s of one core) held back the client's first session; a first request made
        before it imports them itself."""
        if self._warm_up_due and not self._busy():
            asyncio.get_running_loop().call_later(WARM_UP_IDLE_SECONDS, self._warm_up_if_idle, self._handled)

    def _warm_up_if_idle(self, handled: int) -> None:
        if self._warm_up_due and self._handled == handled and not self._busy():
            self._warm_up_due = False
            warm_up(self.manager.providers)

    def _busy(self) -> bool:
        """A request of the client's is being answered, or a session runs (its first request imports
        what the warm-up would, and a thread beside it only slows it down)."""
        return self.connection.answering or any(s.run is not None for s in self.host.sessions())

    async def _handle(self, item: Frame | FramingError) -> None:
        self._handled += 1
        if isinstance(item, Frame):
            try:
                self.connection.handle_body(item.body)
            except Exception:  # a bug must cost one message, not the connection
                logger.exception("a message could not be handled")
        else:
            code = INVALID_REQUEST if item.too_large else PARSE_ERROR
            self.connection.reply_error(None, code, item.message)
        await asyncio.sleep(0)  # let the handlers just started run before the next message

    def connection_lost(self) -> None:
        """The client is gone (closed its end, stopped reading), or SIGTERM: end as at the end of input."""
        if self._reading is not None:
            self._reading.cancel()

    async def close_sessions(self) -> None:
        """Abort the runs (their partial messages are saved as aborted) and close the sessions; not
        under the per-user server, whose sessions outlive their clients."""
        if not self.host.shared:
            await close_host(self.host)

    # --- LSP's lifecycle and documents ---------------------------------------------------

    async def initialize(self, params: Any) -> dict[str, Any]:
        try:
            read = read_initialize(params)
        except InitializeRefused as refused:
            raise invalid_params(INITIALIZE, refused.problems) from None
        for warning in read.warnings:
            logger.warning("%s", warning)
        self.options, self.client_agent = read.options, read.client_agent
        self.client_capabilities = read.capabilities
        self.documents.encoding = read.position_encoding  # type: ignore[assignment]
        self._warm_up_due = self.warms_up
        return read.result

    async def shutdown(self, params: Any) -> None:
        await self.close_sessions()

    async def exit(self, params: Any) -> None:
        """End the server: 0 after ``shutdown``, else 1; a client that skipped ``shutdown`` loses nothing."""
        await self.close_sessions()
        self.exit_code = 0 if self.connection.shut_down else 1
        self.connection_lost()

    @contextlib.contextmanager
    def opening(self) -> Iterator[None]:
        """While a session is opened for this client: its editor's abilities become the session's."""
        token = opening.set(self)
        try:
            yield
        finally:
            opening.reset(token)

    def starting(self, session_id: str) -> AgentSession:
        """The session, for a request that may start a run: this client's editor gets its edits first."""
        session = self.session(session_id)
        if session.run is None:
            self.host.started_by(self, session_id)
        return session

    def document_notification(self, method: str, change: Callable[[Any], str]) -> Callable[[Any], None]:
        """A ``textDocument/did*`` handler: apply it, then wake the tools waiting for the change."""

        def handle(params: Any) -> None:
            try:
                uri = change(params)
            except DocumentError as error:
                logger.warning("%s ignored: %s", method, error)
                return
            self.editor.document_changed(uri)

        return handle


async def close_host(host: SessionHost) -> None:
    """Abort every run of ``host`` (saved as aborted) and close its sessions (:data:`CLOSE_SECONDS`)."""
    try:
        await asyncio.wait_for(host.close(), CLOSE_SECONDS)
    except TimeoutError:
        logger.warning("sessions did not close within %d s", CLOSE_SECONDS)


def parse(method: str, model: type[M], params: Any) -> M:
    if params is None or params == []:  # Lua's JSON encoder writes an empty table as []
        params = {}
    if not isinstance(params, dict):
        message = f"Invalid params for {method}: params must be an object"
        raise RpcError(INVALID_PARAMS, message, {"kind": "invalidParams"})
    try:
        return model.model_validate(params)
    except ValidationError as error:
        raise invalid_params(method, validation_problems(error)) from None


def agent_error(error: SessionError) -> RpcError:
    return RpcError(AGENT_ERROR, error.message, {"kind": error.kind, **error.data})


Handler = Callable[[AgentServer, Any], Awaitable[Any]]


def create_server(host: SessionHost | None = None) -> AgentServer:
    """A client's server with every handler registered (``host``: the per-user server's, else its own)."""
    server = AgentServer(host)

    def request(
        method: str, model: type[M]
    ) -> Callable[[Callable[[AgentServer, M], Awaitable[Any]]], Handler]:
        """Register ``handler(server, parsed_params)`` for ``method``, mapping errors to JSON-RPC."""

        def register(handler: Callable[[AgentServer, M], Awaitable[Any]]) -> Handler:
            async def run(params: Any) -> Any:
                parsed = parse(method, model, params)
                try:
                    result = await handler(server, parsed)
                except SessionError as error:
                    raise agent_error(error) from None
                return result.wire() if hasattr(result, "wire") else result

            server.connection.requests[method] = run
            return handler

        return register

    connection = server.connection
    connection.requests.update({INITIALIZE: server.initialize, SHUTDOWN: server.shutdown})
    documents = server.documents
    connection.notifications.update(
        {
            EXIT: server.exit,
            "textDocument/didOpen": server.document_notification("textDocument/didOpen", documents.did_open),
            "textDocument/didChange": server.document_notification(
                "textDocument/didChange", documents.did_change
            ),
            "textDocument/didClose": server.document_notification(
                "textDocument/didClose", documents.did_close
            ),
        }
    )

    @request("agent/newSession", NewSessionParams)
    async def new_session(ls: AgentServer, p: NewSessionParams) -> NewSessionResult:
        with ls.opening():  # attached as it opens
            session = await ls.manager.new_session(p)
        return NewSessionResult(session_id=session.session_id)

    @request("agent/listSessions", ListSessionsParams)
    async def list_sessions(ls: AgentServer, p: ListSessionsParams) -> ListSessionsResult:
        sessions = await ls.manager.list_sessions(p.cwd)
        for info in sessions:
            live = ls.host.live(info.session_id)
            info.loaded = live is not None
            info.running = live is not None and live[1].run is not None
            info.clients = ls.host.client_count(info.session_id)
        return ListSessionsResult(sessions=sessions)

    @request("agent/loadSession", LoadSessionParams)
    async def load_session(ls: AgentServer, p: LoadSessionParams) -> LoadSessionResult:
        live = ls.host.live(p.session_id)
        if live is not None:  # live in the server: this client joins it
            session = live[1]
            ls.host.attach(ls, session.session_id)
        else:
            with ls.opening():
                session = await ls.manager.load_session(
                    p.session_id, p.permissions, p.allow_outside_workspace
                )
        return LoadSessionResult(
            session_id=session.session_id,
            message_count=len(session.transcript),
            warnings=session.load_warnings or None,
        )

    @request("agent/fork", ForkParams)
    async def fork(ls: AgentServer, p: ForkParams) -> NewSessionResult:
        with ls.opening():
            session_id = await ls.session_manager(p.session_id).fork_session(p.session_id, p.entry_id)
        return NewSessionResult(session_id=session_id)

    @request("agent/getTree", SessionParams)
    async def get_tree(ls: AgentServer, p: SessionParams) -> TreeResult:
        return ls.session(p.session_id).get_tree()

    async def move(ls: AgentServer, p: RewindParams | SwitchBranchParams) -> RewindResult:
        return await ls.session(p.session_id).move(
            p.entry_id,
            files=p.files,
            summarize=p.summarize,
            instructions=p.instructions,
            force=p.force,
            off_branch=isinstance(p, SwitchBranchParams),
        )

    request("agent/rewind", RewindParams)(move)
    request("agent/switchBranch", SwitchBranchParams)(move)

    @request("agent/getChanges", GetChangesParams)
    async def get_changes(ls: AgentServer, p: GetChangesParams) -> ChangesResult:
        return await ls.session(p.session_id).get_changes(p)

    @request("agent/revertChanges", RevertChangesParams)
    async def revert_changes(ls: AgentServer, p: RevertChangesParams) -> RevertChangesResult:
        return await ls.session(p.session_id).revert_changes(p)

    @request("agent/setLabel", SetLabelParams)
    async def set_label(ls: AgentServer, p: SetLabelParams) -> SetLabelResult:
        return SetLabelResult(label=await ls.session(p.session_id).set_label(p.entry_id, p.label))

    @request("agent/listMcpServers", ListMcpServersParams)
    async def list_mcp_servers(ls: AgentServer, p: ListMcpServersParams) -> ListMcpServersResult:
        manager = ls.session_manager(p.session_id) if p.session_id else ls.manager
        servers, problems = manager.mcp_servers(p.session_id)
        return ListMcpServersResult(servers=servers, problems=problems)

    @request("agent/restartMcpServer", RestartMcpServerParams)
    async def restart_mcp_server(ls: AgentServer, p: RestartMcpServerParams) -> McpServerInfo:
        manager = ls.session_manager(p.session_id) if p.session_id else ls.manager
        return await manager.restart_mcp_server(p.name, p.session_id)

    @request("agent/renameSession", RenameSessionParams)
    async def rename_session(ls: AgentServer, p: RenameSessionParams) -> RenameSessionResult:
        manager = ls.session_manager(p.session_id)
        with ls.opening():  # a stored session it loads is attached to this client
            name = await manager.rename_session(p.session_id, p.name)
        return RenameSessionResult(name=name)

    @request("agent/deleteSession", SessionParams)
    async def delete_session(ls: AgentServer, p: SessionParams) -> DeleteSessionResult:
        deleted = await ls.session_manager(p.session_id).delete_session(p.session_id)
        ls.host.forget(p.session_id)
        return DeleteSessionResult(deleted=deleted)

    @request("agent/prompt", PromptParams)
    async def prompt(ls: AgentServer, p: PromptParams) -> Any:
        session = ls.starting(p.session_id)
        return await session.prompt(p.text, p.images, p.when_busy, p.context)

    @request("agent/steer", QueueParams)
    async def steer(ls: AgentServer, p: QueueParams) -> QueueItemResult:
        session = ls.session(p.session_id)
        return QueueItemResult(item_id=await session.enqueue("steer", p.text, p.images, p.context))

    @request("agent/followUp", QueueParams)
    async def follow_up(ls: AgentServer, p: QueueParams) -> QueueItemResult:
        session = ls.session(p.session_id)
        return QueueItemResult(item_id=await session.enqueue("followUp", p.text, p.images, p.context))

    @request("agent/getQueue", SessionParams)
    async def get_queue(ls: AgentServer, p: SessionParams) -> Any:
        return ls.session(p.session_id).queue()

    @request("agent/clearQueue", ClearQueueParams)
    async def clear_queue(ls: AgentServer, p: ClearQueueParams) -> Any:
        return ls.session(p.session_id).clear_queue(p.kind, p.item_id)

    @request("agent/editQueueItem", EditQueueItemParams)
    async def edit_queue_item(ls: AgentServer, p: EditQueueItemParams) -> Any:
        return await ls.session(p.session_id).edit_queue_item(p.item_id, p.text, p.images)

    @request("agent/moveQueueItem", MoveQueueItemParams)
    async def move_queue_item(ls: AgentServer, p: MoveQueueItemParams) -> Any:
        return ls.session(p.session_id).move_queue_item(p.item_id, p.index)

    @request("agent/abort", SessionParams)
    async def abort(ls: AgentServer, p: SessionParams) -> Any:
        return await ls.session(p.session_id).abort()

    @request("agent/continue", SessionParams)
    async def continue_(ls: AgentServer, p: SessionParams) -> RunResult:
        return RunResult(run_id=await ls.starting(p.session_id).continue_())

    @request("agent/getState", SessionParams)
    async def get_state(ls: AgentServer, p: SessionParams) -> Any:
        return ls.session(p.session_id).state()

    @request("agent/getMessages", GetMessagesParams)
    async def get_messages(ls: AgentServer, p: GetMessagesParams) -> Any:
        return ls.session(p.session_id).messages(p.since)

    @request("agent/setModel", SetModelParams)
    async def set_model(ls: AgentServer, p: SetModelParams) -> Any:
        session = ls.session(p.session_id)
        await session.select_model(p.provider, p.id)
        return session.state()

    @request("agent/listModels", ListModelsParams)
    async def list_models(ls: AgentServer, p: ListModelsParams) -> ModelsResult:
        models = ls.session(p.session_id).models.get_models() if p.session_id else ls.manager.list_models()
        return ModelsResult(models=model_listing(models))

    @request("agent/setThinkingLevel", SetThinkingLevelParams)
    async def set_thinking_level(ls: AgentServer, p: SetThinkingLevelParams) -> Any:
        session = ls.session(p.session_id)
        await session.set_thinking_level(p.level)
        return session.state()

    @request("agent/setPermissionPreset", SetPermissionPresetParams)
    async def set_permission_preset(ls: AgentServer, p: SetPermissionPresetParams) -> Any:
        session = ls.session(p.session_id)
        session.permissions.use_preset(p.preset)
        return session.state()

    @request("agent/setQueueModes", SetQueueModesParams)
    async def set_queue_modes(ls: AgentServer, p: SetQueueModesParams) -> Any:
        session = ls.session(p.session_id)
        session.set_queue_modes(p.steering, p.follow_up)
        return session.state()

    @request("agent/setBudget", SetBudgetParams)
    async def set_budget(ls: AgentServer, p: SetBudgetParams) -> Any:
        session = ls.manager.get(p.session_id)
        session.budget.set_limits(p.budget)
        return session.state()

    @request("agent/listPermissionRules", ListPermissionRulesParams)
    async def list_permission_rules(ls: AgentServer, p: ListPermissionRulesParams) -> PermissionRulesResult:
        return PermissionRulesResult(rules=ls.manager.list_permission_rules(p.cwd))

    @request("agent/revokePermissionRule", RevokePermissionRuleParams)
    async def revoke_permission_rule(ls: AgentServer, p: RevokePermissionRuleParams) -> RevokeResult:
        return RevokeResult(revoked=await ls.manager.permission_rules.revoke(p.workspace, p.tool_name))

    @request("agent/getStats", SessionParams)
    async def get_stats(ls: AgentServer, p: SessionParams) -> Any:
        return ls.session(p.session_id).stats()

    @request("agent/compact", CompactParams)
    async def compact(ls: AgentServer, p: CompactParams) -> Any:
        return await ls.session(p.session_id).compact(p.instructions)

    @request("agent/listCommands", SessionParams)
    async def list_commands(ls: AgentServer, p: SessionParams) -> ListCommandsResult:
        return ListCommandsResult(commands=await ls.session(p.session_id).list_commands())

    @request("agent/attach", AttachParams)
    async def attach(ls: AgentServer, p: AttachParams) -> AttachResult:
        replayed, gap = ls.host.attach(ls, p.session_id, p.since)
        return AttachResult(replayed=replayed, gap=gap, seq=ls.session(p.session_id).seq)

    @request("agent/detach", SessionParams)
    async def detach(ls: AgentServer, p: SessionParams) -> DetachResult:
        ls.session(p.session_id)  # unknownSession when there is none
        return DetachResult(detached=ls.host.detach(ls, p.session_id))

    @request("agent/bash", BashParams)
    async def bash(ls: AgentServer, p: BashParams) -> BashResult:
        user_bash = ls.session(p.session_id).user_bash
        return BashResult(bash_id=await user_bash.start(p.command, p.exclude_from_context))

    @request("agent/abortBash", SessionParams)
    async def abort_bash(ls: AgentServer, p: SessionParams) -> AbortBashResult:
        return AbortBashResult(aborted=await ls.session(p.session_id).user_bash.abort())

    return server


def serve(max_message_bytes: int | None = None, started: Boot | None = None) -> NoReturn:
    """Run the server on stdio until ``exit`` or the end of input (running work is aborted then).

    ``started``: what :func:`~agentls.fronts.lsp.boot.boot` read before (default: nothing yet).
    """
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="agentls: %(levelname)s %(message)s")
    # On the handler, not a logger: a handler sees the records of every logger.
    logging.getLogger().handlers[0].addFilter(RedactingFilter())
    server = create_server()
    logging.getLogger("agentls").addHandler(ClientLogHandler(server))
    code = 0
    with contextlib.suppress(KeyboardInterrupt):
        code = server.serve_stdio(
            started or Boot(FrameParser(max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES))
        )
    end_process(code)


def end_process(code: int) -> NoReturn:
    """Exit without the interpreter's teardown of its modules, which took 0.35 s after ``exit``.

    What a normal exit would still do is done first: the session files' last lines
    written and closed, the ``atexit`` handlers run (logging's, and the one that ends
    what ``bash`` left running), the standard streams flushed.
    """
    finish_writing()
    atexit._run_exitfuncs()  # CPython's, what a normal exit calls
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
