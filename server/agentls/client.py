"""An async Python client of the agentls protocol, for scripts and the command line.

    async with AgentClient() as client:                  # starts `agentls serve` on stdio
        session = await client.new_session(cwd=".")
        async with client.subscribe(session) as notes:    # agent/event, agent/queue, agent/settled
            settled = await client.prompt(session, "Summarise README.md", wait=True)
            async for note in notes: ...

Requests return the protocol's result models; failures raise :class:`AgentClientError`
with the server's ``data.kind`` (``busy``, ``unknownSession``, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, TypeVar, get_args

from pydantic import BaseModel

from agentls.client_rpc import ClientConnection, ConnectionClosed, RpcError
from agentls.protocol import (
    AbortResult,
    BudgetSettings,
    ChangesResult,
    CommandInfo,
    CompactionSettings,
    CompactResult,
    GetChangesParams,
    HunkRef,
    McpServerInfo,
    MessagesResult,
    ModelRef,
    NewSessionParams,
    PermissionOutcome,
    PromptResult,
    QueueState,
    RequestPermissionParams,
    RequestPermissionResult,
    RevertChangesParams,
    RevertChangesResult,
    RewindResult,
    SandboxSettings,
    SessionInfo,
    SessionParams,
    StateResult,
    StatsResult,
    TreeResult,
)
from agentls.protocol_methods import (
    NOTIFICATIONS,
    AbortBashResult,
    AttachParams,
    AttachResult,
    BashEndNotification,
    BashParams,
    BashResult,
    ClearQueueParams,
    CompactParams,
    DetachResult,
    GetMessagesParams,
    ListCommandsResult,
    ListMcpServersResult,
    ListModelsParams,
    ListSessionsParams,
    ListSessionsResult,
    LoadSessionParams,
    LoadSessionResult,
    ModelsResult,
    NewSessionResult,
    PromptParams,
    QueueItemResult,
    QueueParams,
    RewindParams,
    RunResult,
    SetBudgetParams,
    SetModelParams,
    SetPermissionPresetParams,
    SetQueueModesParams,
    SetThinkingLevelParams,
    SettledNotification,
    SwitchBranchParams,
)

R = TypeVar("R", bound=BaseModel)

NOTIFICATION_METHODS = tuple(NOTIFICATIONS)
"""Every notification the server sends (protocol_methods.py's list)."""


PermissionAnswer = str | RequestPermissionResult
"""What ``on_permission`` returns: an outcome, or the whole answer (with a rejection's reason)."""

CLIENT_LOG = logging.getLogger("agentls.client")
SERVER_LOG = logging.getLogger("agentls.client.server_log")
"""Where the server's ``window/logMessage`` lines go (retry warnings, damaged session files...)."""

_LOG_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}


def _log_server_message(message: Any) -> None:
    if isinstance(message, dict):
        SERVER_LOG.log(_LOG_LEVELS.get(message.get("type"), logging.INFO), "%s", message.get("message", ""))


class AgentClientError(Exception):
    """A request failed; ``kind`` is the server's ``data.kind`` (or ``"protocol"``/``"connection"``)."""

    def __init__(self, message: str, *, kind: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.code = code
        self.data = data


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any]

    @property
    def session_id(self) -> str | None:
        return self.params.get("sessionId")


_PYTHON_NAMES = (
    ("agent/steer", "steer()"),
    ("agent/followUp", "follow_up()"),
    ("agent/settled", "wait_settled()"),
    ("agent/compact", "compact()"),
    ("agent/loadSession", "load_session()"),
    ("agent/abort", "abort()"),
    ("whenBusy", "when_busy"),
)


def _python_names(message: str) -> str:
    """A server error's advice with the client's method names where it names wire methods.

    Messages about the params of a request keep the wire's field names, which they quote.
    """
    if message.startswith("Invalid params"):
        return message
    for wire, python in _PYTHON_NAMES:
        message = message.replace(wire, python)
    return message


def _ending(note: Notification) -> tuple[str, BaseModel] | None:
    """``(runId, settled)`` for an ``agent/settled``, ``(bashId, end)`` for an ``agent/bashEnd``."""
    if note.method == "agent/settled":
        settled = SettledNotification.model_validate(note.params)
        return settled.run_id, settled
    if note.method == "agent/bashEnd":
        end = BashEndNotification.model_validate(note.params)
        return end.bash_id, end
    return None


def default_server_command() -> list[str]:
    return [sys.executable, "-m", "agentls", "serve"]


def per_user_server_command(socket: str | None = None) -> list[str]:
    """The stdio bridge to the per-user server (``socket``: its path, else the default), started
    when none answers: the client's sessions outlive it (``protocol.md``, Live sessions)."""
    listen = ["--listen", f"unix:{socket}"] if socket else []
    return [*default_server_command(), "--attach", *listen]


class AgentClient:
    """A connection to an ``agentls serve`` subprocess."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        initialization_options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        on_permission: Callable[[RequestPermissionParams], Awaitable[PermissionAnswer] | PermissionAnswer]
        | None = None,
    ) -> None:
        """``on_permission`` answers the server's permission questions with ``allowOnce``,
        ``allowAlways`` or ``reject`` (or a :class:`RequestPermissionResult`, a rejection's
        ``reason`` with it); without it the server asks with ``window/showMessageRequest``,
        which this client answers with no choice (a rejection)."""
        self.command = list(command or default_server_command())
        self.initialization_options = initialization_options or {}
        self.env = env
        self.cwd = cwd
        self.server_capabilities: dict[str, Any] = {}
        self._rpc = ClientConnection(self._server_exited)
        self._exited = asyncio.Event()
        self._exit_reason = "the agentls server has exited"
        self._subscribers: list[asyncio.Queue[Notification | None]] = []
        self._ended: dict[str, BaseModel] = {}
        """The ``agent/settled`` of each run and the ``agent/bashEnd`` of each command, by their ids."""
        self._end_waiters: dict[str, list[asyncio.Future[BaseModel]]] = {}
        self._known: set[str] = set()
        """The run and command ids this client started or saw: the ones worth waiting for."""
        self._started = False
        for method in NOTIFICATION_METHODS:
            self._rpc.feature(method)(self._receiver(method))
        self.on_permission = on_permission
        if on_permission is not None:

            async def answer_permission(params: Any) -> dict[str, Any]:
                return await self._answer_permission(params)

            self._rpc.feature("agent/requestPermission")(answer_permission)
        self._rpc.feature("window/showMessageRequest")(lambda params: self._no_permission_handler(params))
        self._rpc.feature("window/logMessage")(_log_server_message)
        self._rejected_unasked: set[str] = set()

    def _no_permission_handler(self, params: Any) -> None:
        """The server's question without ``on_permission``: a rejection, said once per question."""
        message = str(params.get("message", ""))
        if message not in self._rejected_unasked:
            self._rejected_unasked.add(message)
            CLIENT_LOG.warning(
                "%s: rejected, as no on_permission handler answers (AgentClient(on_permission=...))", message
            )

    async def _answer_permission(self, params: Any) -> dict[str, Any]:
        assert self.on_permission is not None
        answer = self.on_permission(RequestPermissionParams.model_validate(params))
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, RequestPermissionResult):
            return answer.model_dump(mode="json", exclude_none=True)
        return {"outcome": answer if answer in get_args(PermissionOutcome) else "reject"}

    def _receiver(self, method: str) -> Any:
        def receive(params: Any) -> None:
            self._dispatch(Notification(method, params))

        return receive

    def _dispatch(self, note: Notification) -> None:
        for field in ("runId", "bashId"):
            if isinstance(known := note.params.get(field), str):
                self._known.add(known)
        if (ending := _ending(note)) is not None:
            key, end = ending
            self._ended[key] = end
            for waiter in self._end_waiters.pop(key, []):
                if not waiter.done():
                    waiter.set_result(end)
        for queue in self._subscribers:
            queue.put_nowait(note)

    def _server_exited(self, returncode: int | None) -> None:
        """The server is gone: fail what waits for it and end the subscriptions."""
        self._exit_reason = f"the agentls server exited (return code {returncode})"
        self._exited.set()
        for waiters in self._end_waiters.values():
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_exception(AgentClientError(self._exit_reason, kind="connection"))
        self._end_waiters.clear()
        for queue in self._subscribers:
            queue.put_nowait(None)

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> dict[str, Any]:
        """Start the server and do the ``initialize`` handshake; returns the server's agent capabilities."""
        env = {**os.environ, **(self.env or {})}
        try:
            await self._rpc.start_io(self.command[0], *self.command[1:], env=env, cwd=self.cwd)
        except OSError as error:
            raise AgentClientError(
                f"cannot start the agentls server {self.command!r}: {error}", kind="connection"
            ) from error
        self._started = True
        return await self._handshake()

    async def connect(self, reader: asyncio.StreamReader, writer: Any) -> dict[str, Any]:
        """Talk to a server that is already running, over its streams (e.g. a socket or pipes).

        ``reader`` carries the server's output, ``writer`` (with ``write``/``drain`` or
        ``write``/``flush``) its input. :meth:`close` shuts that server down but leaves the
        streams' owner to close them.
        """
        self._rpc.connect(reader, writer)
        self._started = True
        return await self._handshake()

    async def _handshake(self) -> dict[str, Any]:
        result = await self._call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {
                    "experimental": {"agent": {"requestPermission": self.on_permission is not None}}
                },
                "initializationOptions": self.initialization_options,
                "clientInfo": {"name": "agentls.client"},
            },
        )
        self._rpc.notify("initialized", {})
        capabilities = result.get("capabilities", {}) if result else {}
        self.server_capabilities = (capabilities.get("experimental") or {}).get("agent", {})
        return self.server_capabilities

    async def close(self) -> None:
        """Shut the server down cleanly (``shutdown``, ``exit``) and wait for it."""
        if not self._started:
            return
        with contextlib.suppress(Exception):  # refused (e.g. before a successful initialize): exit anyway
            await asyncio.wait_for(self._call("shutdown", None), 10)
        with contextlib.suppress(Exception):
            self._rpc.notify("exit", None)
        self._started = False
        server = self._rpc._server
        if server is not None:
            try:
                await asyncio.wait_for(server.wait(), 10)
            except TimeoutError:
                server.kill()
        with contextlib.suppress(Exception):
            await self._rpc.stop()
        for queue in self._subscribers:
            queue.put_nowait(None)

    async def __aenter__(self) -> AgentClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- requests ------------------------------------------------------------------------

    async def _call(self, method: str, params: Any) -> Any:
        if not self._started:
            raise AgentClientError(
                "the client is not started (use 'async with AgentClient()')", kind="connection"
            )
        if self._exited.is_set():
            raise AgentClientError(f"{self._exit_reason}; cannot send {method}", kind="connection")
        request = asyncio.ensure_future(self._rpc.send_request_async(method, params))
        exited = asyncio.ensure_future(self._exited.wait())
        try:
            await asyncio.wait({request, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
            if not request.done():
                request.cancel()
        if request.cancelled():
            raise AgentClientError(f"{self._exit_reason} before answering {method}", kind="connection")
        try:
            return request.result()
        except RpcError as error:
            data = error.data
            kind = data.get("kind", "protocol") if isinstance(data, dict) else "protocol"
            raise AgentClientError(
                _python_names(error.message), kind=kind, code=error.code, data=data
            ) from None
        except ConnectionClosed as error:  # the server exited, or closed its output
            raise AgentClientError(f"{error} before answering {method}", kind="connection") from None

    async def request(self, method: str, params: BaseModel | dict[str, Any], result: type[R]) -> R:
        """Send any ``agent/*`` request and parse its result."""
        wire = (
            params.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(params, BaseModel)
            else params
        )
        return result.model_validate(await self._call(method, wire))

    async def new_session(
        self,
        *,
        cwd: str | None = None,
        model: ModelRef | tuple[str, str] | None = None,
        thinking_level: str | None = None,
        system_prompt: str | None = None,
        append_system_prompt: str | None = None,
        context_files: bool | None = None,
        permissions: dict[str, str] | None = None,
        allow_outside_workspace: bool | None = None,
        compaction: CompactionSettings | None = None,
        mcp_servers: dict[str, Any] | list[Any] | None = None,
        permission_preset: str | None = None,
        sandbox: SandboxSettings | dict[str, Any] | None = None,
        budget: BudgetSettings | dict[str, Any] | None = None,
    ) -> str:
        """Create a session; ``permissions`` (``{tool: allow|ask|deny}``) is stored with it.

        ``sandbox`` (``{mode, network?, writableRoots?, fallback?}``) confines its ``bash``;
        ``budget`` (``{maxCostUsd?, maxTokens?, maxTurns?, session?}``) limits what its runs spend.

        ``mcp_servers`` (``{NAME: {command, args?, env?, cwd?} | {type, url, headers?}}``) adds MCP
        servers for this session.

        ``context_files=False`` leaves the project instructions (``AGENTS.md``) out of its prompt.
        """
        ref = ModelRef(provider=model[0], id=model[1]) if isinstance(model, tuple) else model
        params = NewSessionParams(
            cwd=cwd,
            model=ref,
            thinking_level=thinking_level,
            system_prompt=system_prompt,
            append_system_prompt=append_system_prompt,
            context_files=context_files,
            permissions=permissions,
            allow_outside_workspace=allow_outside_workspace,
            compaction=compaction,
            mcp_servers=mcp_servers,
            permission_preset=permission_preset,
            sandbox=SandboxSettings.model_validate(sandbox) if isinstance(sandbox, dict) else sandbox,
            budget=BudgetSettings.model_validate(budget) if isinstance(budget, dict) else budget,
        )  # type: ignore[arg-type]
        return (await self.request("agent/newSession", params, NewSessionResult)).session_id

    async def list_sessions(self, cwd: str | None = None) -> list[SessionInfo]:
        return (
            await self.request("agent/listSessions", ListSessionsParams(cwd=cwd), ListSessionsResult)
        ).sessions

    async def load_session(
        self,
        session_id: str,
        *,
        permissions: dict[str, str] | None = None,
        allow_outside_workspace: bool | None = None,
    ) -> LoadSessionResult:
        """Load a stored session; ``permissions`` and ``allow_outside_workspace`` (the user's word)
        apply over its file's policy, which may only narrow the server's."""
        params = LoadSessionParams(
            session_id=session_id, permissions=permissions, allow_outside_workspace=allow_outside_workspace
        )  # type: ignore[arg-type]
        return await self.request("agent/loadSession", params, LoadSessionResult)

    async def fork(self, session_id: str, entry_id: str) -> str:
        """A new session (loaded) whose history is this one's up to ``entry_id``; its id."""
        result = await self._call("agent/fork", {"sessionId": session_id, "entryId": entry_id})
        return str(result["sessionId"])

    async def list_mcp_servers(self, session_id: str | None = None) -> ListMcpServersResult:
        """The MCP servers of a session (or of the server) with their status and tools."""
        params = {"sessionId": session_id} if session_id is not None else {}
        return await self.request("agent/listMcpServers", params, ListMcpServersResult)

    async def restart_mcp_server(self, name: str, session_id: str | None = None) -> McpServerInfo:
        """Stop and start an MCP server again (one waiting for trust is asked again)."""
        params = {"name": name, **({"sessionId": session_id} if session_id is not None else {})}
        return await self.request("agent/restartMcpServer", params, McpServerInfo)

    async def get_tree(self, session_id: str) -> TreeResult:
        """The session's tree: its entries, its branches and where it is now."""
        return await self.request("agent/getTree", {"sessionId": session_id}, TreeResult)

    async def rewind(
        self,
        session_id: str,
        entry_id: str | None,
        *,
        files: bool = True,
        summarize: bool = False,
        instructions: str | None = None,
        force: bool = False,
    ) -> RewindResult:
        """Continue from ``entry_id`` of the current branch (``None``: from the start), reverting the
        files the tools changed after it unless ``files=False``.

        Files changed by someone else since raise :class:`AgentClientError` with ``kind ==
        "fileConflict"`` and ``data["files"]``; ``force=True`` reverts the others.
        """
        options = {"files": files, "summarize": summarize, "instructions": instructions, "force": force}
        return await self._move("agent/rewind", session_id, entry_id, options)

    async def switch_branch(
        self,
        session_id: str,
        entry_id: str,
        *,
        files: bool = False,
        summarize: bool = False,
        instructions: str | None = None,
        force: bool = False,
    ) -> RewindResult:
        """Go to another entry of the tree (a branch's ``leaf_id``); files follow with ``files=True``."""
        options = {"files": files, "summarize": summarize, "instructions": instructions, "force": force}
        return await self._move("agent/switchBranch", session_id, entry_id, options)

    async def _move(
        self, method: str, session_id: str, entry_id: str | None, options: dict[str, Any]
    ) -> RewindResult:
        model = RewindParams if method == "agent/rewind" else SwitchBranchParams
        params = model(session_id=session_id, entry_id=entry_id, **options)  # type: ignore[arg-type]
        wire = {**params.model_dump(mode="json", by_alias=True, exclude_none=True), "entryId": entry_id}
        return await self.request(method, wire, RewindResult)

    async def get_changes(
        self,
        session_id: str,
        *,
        run_id: str | None = None,
        from_entry_id: str | EllipsisType | None = ...,
        to_entry_id: str | None = None,
        text: bool = False,
    ) -> ChangesResult:
        """The net change of a run (``run_id``; neither it nor ``from_entry_id``: the last run) or
        of the entries after ``from_entry_id`` (``None``: from the start) up to ``to_entry_id``
        (default: the leaf): each file with its status, who changed it and its hunks.

        ``text=True`` adds each file's text before and after (``old_text``, ``new_text``).
        """
        span = self._changes_span(run_id, from_entry_id, to_entry_id)
        params = GetChangesParams(session_id=session_id, **span, **({"text": True} if text else {}))  # type: ignore[arg-type]
        wire = params.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return await self.request("agent/getChanges", wire, ChangesResult)

    async def revert_changes(
        self,
        session_id: str,
        *,
        run_id: str | None = None,
        from_entry_id: str | EllipsisType | None = ...,
        to_entry_id: str | None = None,
        files: Sequence[str] | None = None,
        hunks: Sequence[tuple[str, int] | HunkRef] | None = None,
        force: bool = False,
    ) -> RevertChangesResult:
        """Take back part of the net change :meth:`get_changes` reports for the same span: whole
        ``files`` (paths as it gives them), single ``hunks`` (``(path, index)``: an index into that
        file's hunks), or, with neither, everything.

        Files changed by someone else since raise :class:`AgentClientError` with ``kind ==
        "fileConflict"`` and ``data["files"]``; ``force=True`` reverts the others and lists those
        in ``skipped``.
        """
        span: dict[str, Any] = self._changes_span(run_id, from_entry_id, to_entry_id)
        if files is not None:
            span["files"] = list(files)
        if hunks is not None:
            span["hunks"] = [
                hunk if isinstance(hunk, HunkRef) else HunkRef(path=hunk[0], index=hunk[1]) for hunk in hunks
            ]
        if force:
            span["force"] = True
        params = RevertChangesParams(session_id=session_id, **span)
        wire = params.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return await self.request("agent/revertChanges", wire, RevertChangesResult)

    @staticmethod
    def _changes_span(
        run_id: str | None, from_entry_id: str | EllipsisType | None, to_entry_id: str | None
    ) -> dict[str, Any]:
        """The span fields given (``from_entry_id=None`` is given: from the start)."""
        span: dict[str, Any] = {}
        if run_id is not None:
            span["run_id"] = run_id
        if from_entry_id is not ...:
            span["from_entry_id"] = from_entry_id
        if to_entry_id is not None:
            span["to_entry_id"] = to_entry_id
        return span

    async def set_label(self, session_id: str, entry_id: str, label: str | None) -> str | None:
        """Put a bookmark on an entry (``None`` clears it); the label as stored."""
        params = {"sessionId": session_id, "entryId": entry_id, "label": label}
        return await self._call("agent/setLabel", params).get("label")

    async def rename_session(self, session_id: str, name: str) -> str | None:
        """Name the session (shown instead of its first prompt in lists); ``""`` clears the name."""
        result = await self._call("agent/renameSession", {"sessionId": session_id, "name": name})
        return result.get("name")

    async def delete_session(self, session_id: str) -> bool:
        result = await self._call("agent/deleteSession", {"sessionId": session_id})
        return bool(result.get("deleted"))

    async def prompt(
        self,
        session_id: str,
        text: str,
        *,
        when_busy: str | None = None,
        wait: bool = False,
        context: list[dict[str, Any]] | None = None,
    ) -> PromptResult | SettledNotification:
        """Send a prompt (``context``: its attachments); ``wait=True`` returns the run's ``agent/settled``."""
        params = PromptParams(session_id=session_id, text=text, when_busy=when_busy, context=context)  # type: ignore[arg-type]
        accepted = await self.request("agent/prompt", params, PromptResult)
        if accepted.run_id:
            self._known.add(accepted.run_id)
        if wait and accepted.run_id:
            return await self.wait_settled(accepted.run_id)
        return accepted

    async def steer(self, session_id: str, text: str, context: list[dict[str, Any]] | None = None) -> str:
        params = QueueParams(session_id=session_id, text=text, context=context)  # type: ignore[arg-type]
        return (await self.request("agent/steer", params, QueueItemResult)).item_id

    async def follow_up(self, session_id: str, text: str, context: list[dict[str, Any]] | None = None) -> str:
        params = QueueParams(session_id=session_id, text=text, context=context)  # type: ignore[arg-type]
        return (await self.request("agent/followUp", params, QueueItemResult)).item_id

    async def get_queue(self, session_id: str) -> QueueState:
        return await self.request("agent/getQueue", SessionParams(session_id=session_id), QueueState)

    async def clear_queue(self, session_id: str, kind: str = "all", item_id: str | None = None) -> QueueState:
        params = ClearQueueParams(session_id=session_id, kind=kind, item_id=item_id)  # type: ignore[arg-type]
        return await self.request("agent/clearQueue", params, QueueState)

    async def edit_queue_item(
        self, session_id: str, item_id: str, text: str, images: list[dict[str, Any]] | None = None
    ) -> QueueState:
        """Give a queued item new text (and images); it keeps its place in its queue."""
        params = {"sessionId": session_id, "itemId": item_id, "text": text}
        if images is not None:
            params["images"] = images
        return QueueState.model_validate(await self._call("agent/editQueueItem", params))

    async def move_queue_item(self, session_id: str, item_id: str, index: int) -> QueueState:
        """Move a queued item to ``index`` in its queue (0: delivered first)."""
        params = {"sessionId": session_id, "itemId": item_id, "index": index}
        return QueueState.model_validate(await self._call("agent/moveQueueItem", params))

    async def abort(self, session_id: str) -> AbortResult:
        return await self.request("agent/abort", SessionParams(session_id=session_id), AbortResult)

    async def continue_(self, session_id: str, *, wait: bool = False) -> RunResult | SettledNotification:
        run = await self.request("agent/continue", SessionParams(session_id=session_id), RunResult)
        self._known.add(run.run_id)
        return await self.wait_settled(run.run_id) if wait else run

    async def get_state(self, session_id: str) -> StateResult:
        return await self.request("agent/getState", SessionParams(session_id=session_id), StateResult)

    async def get_messages(self, session_id: str, since: int = 0) -> MessagesResult:
        return await self.request(
            "agent/getMessages", GetMessagesParams(session_id=session_id, since=since), MessagesResult
        )

    async def attach(self, session_id: str, since: int | None = None) -> AttachResult:
        """Attach to a live session: its notifications after ``since`` first, then the live ones
        (``gap``: some are gone; reload with :meth:`get_messages` and attach with its ``seq``)."""
        return await self.request(
            "agent/attach", AttachParams(session_id=session_id, since=since), AttachResult
        )

    async def detach(self, session_id: str) -> bool:
        """No more of the session's notifications or questions; its run goes on."""
        result = await self.request("agent/detach", SessionParams(session_id=session_id), DetachResult)
        return result.detached

    async def set_model(self, session_id: str, provider: str, model_id: str) -> StateResult:
        params = SetModelParams(session_id=session_id, provider=provider, id=model_id)
        return await self.request("agent/setModel", params, StateResult)

    async def list_models(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return (
            await self.request("agent/listModels", ListModelsParams(session_id=session_id), ModelsResult)
        ).models

    async def set_thinking_level(self, session_id: str, level: str) -> StateResult:
        params = SetThinkingLevelParams(session_id=session_id, level=level)  # type: ignore[arg-type]
        return await self.request("agent/setThinkingLevel", params, StateResult)

    async def set_permission_preset(self, session_id: str, preset: str) -> StateResult:
        """The session's permission preset (``ask``, ``acceptEdits``, ``plan``, ``bypass``)."""
        params = SetPermissionPresetParams(session_id=session_id, preset=preset)  # type: ignore[arg-type]
        return await self.request("agent/setPermissionPreset", params, StateResult)

    async def set_queue_modes(
        self, session_id: str, *, steering: str | None = None, follow_up: str | None = None
    ) -> StateResult:
        params = SetQueueModesParams(session_id=session_id, steering=steering, follow_up=follow_up)  # type: ignore[arg-type]
        return await self.request("agent/setQueueModes", params, StateResult)

    async def set_budget(self, session_id: str, budget: BudgetSettings | dict[str, Any]) -> StateResult:
        """The session's spending limits, from now on (``{}`` lifts them)."""
        limits = BudgetSettings.model_validate(budget) if isinstance(budget, dict) else budget
        return await self.request(
            "agent/setBudget", SetBudgetParams(session_id=session_id, budget=limits), StateResult
        )

    async def get_stats(self, session_id: str) -> StatsResult:
        return await self.request("agent/getStats", SessionParams(session_id=session_id), StatsResult)

    async def compact(self, session_id: str, instructions: str | None = None) -> CompactResult:
        """Compact the session's context now; returns when the summary is in (``compactionFailed`` if not)."""
        params = CompactParams(session_id=session_id, instructions=instructions)
        return await self.request("agent/compact", params, CompactResult)

    async def list_commands(self, session_id: str) -> list[CommandInfo]:
        """The prompt templates and skills a prompt can start with (``/name``, ``/skill:name``)."""
        params = SessionParams(session_id=session_id)
        return (await self.request("agent/listCommands", params, ListCommandsResult)).commands

    async def bash(
        self, session_id: str, command: str, *, exclude_from_context: bool = False, wait: bool = False
    ) -> BashResult | BashEndNotification:
        """Run the user's ``command`` (``!cmd``; ``!!cmd`` with ``exclude_from_context``).

        With ``wait=True`` return its ``agent/bashEnd`` (``message`` is the ``bashExecution``).
        """
        params = BashParams(session_id=session_id, command=command, exclude_from_context=exclude_from_context)
        started = await self.request("agent/bash", params, BashResult)
        self._known.add(started.bash_id)
        return await self.wait_bash_end(started.bash_id) if wait else started

    async def abort_bash(self, session_id: str) -> bool:
        """Stop the session's running command; whether one was running (answered after its bashEnd)."""
        params = SessionParams(session_id=session_id)
        return (await self.request("agent/abortBash", params, AbortBashResult)).aborted

    # --- notifications -------------------------------------------------------------------

    async def wait_settled(self, run_id: str) -> SettledNotification:
        """Wait for the ``agent/settled`` of ``run_id`` (returns at once if it already came)."""
        settled = await self._wait_end(run_id, f"run {run_id} will not settle")
        assert isinstance(settled, SettledNotification)
        return settled

    async def wait_bash_end(self, bash_id: str) -> BashEndNotification:
        """Wait for the ``agent/bashEnd`` of ``bash_id`` (returns at once if it already came)."""
        end = await self._wait_end(bash_id, f"command {bash_id} will not end")
        assert isinstance(end, BashEndNotification)
        return end

    async def _wait_end(self, key: str, never: str) -> BaseModel:
        if key in self._ended:
            return self._ended[key]
        if self._exited.is_set():
            raise AgentClientError(f"{self._exit_reason}; {never}", kind="connection")
        if key not in self._known:
            raise AgentClientError(
                f"{key!r} is not a run or command of this client: wait_settled() takes the run_id that "
                "prompt() or continue_() returned, wait_bash_end() the bash_id of bash()",
                kind="invalidParams",
            )
        waiter: asyncio.Future[BaseModel] = asyncio.get_running_loop().create_future()
        self._end_waiters.setdefault(key, []).append(waiter)
        return await waiter

    @contextlib.asynccontextmanager
    async def subscribe(self, session_id: str | None = None) -> AsyncIterator[AsyncIterator[Notification]]:
        """Receive notifications from now on (of one session, or all) while the context is open."""
        queue: asyncio.Queue[Notification | None] = asyncio.Queue()
        self._subscribers.append(queue)
        if self._exited.is_set():
            queue.put_nowait(None)

        async def iterate() -> AsyncIterator[Notification]:
            while (note := await queue.get()) is not None:
                if session_id is None or note.session_id == session_id:
                    yield note

        try:
            yield iterate()
        finally:
            self._subscribers.remove(queue)
