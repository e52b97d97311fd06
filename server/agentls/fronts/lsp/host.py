"""The sessions of a server process and the clients attached to them.

Under ``agentls serve`` on stdio a host has one client, and the sessions end with it. Under the
per-user server (``agentls serve --listen``, :mod:`agentls.fronts.lsp.listen`) a host has any
number of clients: a session's notifications go to the clients attached to it
(:mod:`agentls.fronts.lsp.attachments`), its questions to those that can answer
(:mod:`agentls.fronts.lsp.questions`), its edits to the editor that has the document open
(:mod:`agentls.fronts.lsp.session_editor`), and a run goes on when its client goes away.

Each client's initialization options apply to the sessions it opens: clients with the same
options share one :class:`SessionManager`; a session live in any of them is found by id.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable

from pydantic import ValidationError

from agentls.agent import AgentTool
from agentls.fronts.lsp.attachments import REPLAY_BYTES, REPLAY_COUNT, Attachments
from agentls.fronts.lsp.notifications import AGENT_EVENT, notification
from agentls.fronts.lsp.peer import Peer
from agentls.fronts.lsp.questions import DEFAULT_QUESTION_SECONDS, Questions
from agentls.fronts.lsp.rpc import CancelledByClient, notification_frame
from agentls.fronts.lsp.session_editor import SessionEditor
from agentls.protocol import RequestPermissionParams, RequestPermissionResult
from agentls.session import AgentSession, SessionError, SessionManager
from agentls.session.events import BashEnded, McpStatusChanged, RunSettled, SessionEvent
from agentls.tools.editor import EditorWorkspace

logger = logging.getLogger(__name__)

WARNING = 2
"""LSP's ``MessageType.Warning``."""

opening: contextvars.ContextVar[Peer | None] = contextvars.ContextVar("opening", default=None)
"""The client whose request opens a session (its editor's abilities become the session's)."""


class HostFront:
    """The LSP front as one manager's sessions see it (a :class:`~agentls.session.SessionFront`)."""

    def __init__(self, host: SessionHost, owner: Peer) -> None:
        self.host = host
        self.owner = owner
        """The client that made the manager: the opener when none is known."""

    def _opener(self) -> Peer:
        return opening.get() or self.owner

    def editor(self, session_id: str) -> SessionEditor:
        return self.host.editor(session_id, self._opener())

    def workspace(self, session_id: str, cwd: str, allow_outside: bool) -> EditorWorkspace:
        return EditorWorkspace(cwd, self.editor(session_id), allow_outside)

    def tools(self, session_id: str, cwd: str, tools: list[AgentTool]) -> list[AgentTool]:
        return tools

    def session_opened(self, session: AgentSession) -> None:
        """A session was created or loaded: the client whose request opened it is attached at once,
        before the session asks anything (the folder's trust question comes as it opens)."""
        self.host.opened(session)
        opener = opening.get()
        if opener is not None:
            self.host.attach(opener, session.session_id)

    def mcp_status_changed(self, event: McpStatusChanged) -> None:
        method, params = notification(event)
        for client in self.host.clients:
            client.connection.notify(method, params)

    async def ask(self, request: RequestPermissionParams) -> RequestPermissionResult:
        return await self.host.ask_permission(request)


class SessionHost:
    """Every session of the process, its managers and its clients (module doc)."""

    def __init__(self, *, shared: bool, question_timeout: float = DEFAULT_QUESTION_SECONDS) -> None:
        self.shared = shared
        """The per-user server: runs go on when their client goes away."""
        self.clients: list[Peer] = []
        """The connected clients, in the order they connected."""
        self.managers: dict[str, SessionManager] = {}
        """By the initialization options (as JSON) of the clients that use them."""
        self._attachments: dict[str, Attachments[Peer]] = {}
        self._editors: dict[str, SessionEditor] = {}
        self.questions = Questions(self.attachments, question_timeout)
        self.changed: Callable[[], None] = lambda: None
        """Called when a client comes or leaves or a run or command ends (the per-user server's idle
        check)."""

    # --- managers and sessions -----------------------------------------------------------

    def manager_for(self, client: Peer) -> SessionManager:
        key = client.options.model_dump_json()
        manager = self.managers.get(key)
        if manager is None:
            manager = self.managers[key] = SessionManager(client.options, HostFront(self, client))
        return manager

    def live(self, session_id: str) -> tuple[SessionManager, AgentSession] | None:
        """The live session of that id and its manager, whichever client opened it."""
        for manager in self.managers.values():
            session = manager.sessions.get(session_id)
            if session is not None:
                return manager, session
        return None

    def sessions(self) -> list[AgentSession]:
        return [session for manager in self.managers.values() for session in manager.sessions.values()]

    def running(self) -> bool:
        """A run or a user's command of some session goes on."""
        return any(s.run is not None or s.user_bash.running for s in self.sessions())

    def editor(self, session_id: str, opener: Peer) -> SessionEditor:
        editor = self._editors.get(session_id)
        if editor is None:
            editor = SessionEditor(session_id, opener, self.attached, self.questions)
            self._editors[session_id] = editor
        return editor

    async def close(self) -> None:
        """Abort the runs (their partial messages are saved as aborted) and close the sessions."""
        for manager in list(self.managers.values()):
            await manager.close()

    # --- attachments ---------------------------------------------------------------------

    def attachments(self, session_id: str) -> Attachments[Peer]:
        attachments = self._attachments.get(session_id)
        if attachments is None:
            # Only a client of the per-user server can come back after its connection ended: under
            # stdio a session keeps no more than what follows getMessages' seq (a big run's frames
            # kept for nobody cost a fifth of big-context's memory).
            bounds = (REPLAY_COUNT, REPLAY_BYTES) if self.shared else (0, 0)
            attachments = self._attachments[session_id] = Attachments(*bounds)
        return attachments

    def attached(self, session_id: str) -> list[Peer]:
        """The clients attached to the session, the run's starter first."""
        attachments = self._attachments.get(session_id)
        return attachments.preferred() if attachments is not None else []

    def opened(self, session: AgentSession) -> None:
        """A session was created or loaded: its events go to its clients from now on."""
        attachments = self.attachments(session.session_id)

        def publish(event: SessionEvent) -> None:
            self._publish(session, attachments, event)

        session.subscribe(publish)

    def attach(self, client: Peer, session_id: str, since: int | None = None) -> tuple[int, bool]:
        """Attach ``client``, after sending it again what followed ``since``; ``(replayed, gap)``."""
        found = self.live(session_id)
        if found is None:
            raise SessionError("unknownSession", f"No live session {session_id} in this server")
        session = found[1]
        attachments = self.attachments(session_id)
        replayed, gap = 0, False
        if since is not None:
            replay = attachments.replay.since(since, session.seq)
            gap = replay.gap
            for frame in replay.frames:
                client.connection.write(frame)
            replayed = len(replay.frames)
        attachments.attach(client)
        return replayed, gap

    def detach(self, client: Peer, session_id: str) -> bool:
        attachments = self._attachments.get(session_id)
        return attachments is not None and attachments.detach(client)

    def started_by(self, client: Peer, session_id: str) -> None:
        """``client`` starts a run of the session: its editor gets the run's edits first."""
        self.attachments(session_id).starter = client

    def client_count(self, session_id: str) -> int:
        attachments = self._attachments.get(session_id)
        return len(attachments.clients) if attachments is not None else 0

    def connected(self, client: Peer) -> None:
        self.clients.append(client)
        self.changed()

    def disconnected(self, client: Peer) -> None:
        """The client is gone: it is detached from every session."""
        if client in self.clients:
            self.clients.remove(client)
        for attachments in self._attachments.values():
            attachments.detach(client)
        self.changed()

    def forget(self, session_id: str) -> None:
        """The session was deleted."""
        self._attachments.pop(session_id, None)
        self._editors.pop(session_id, None)

    def _publish(self, session: AgentSession, attachments: Attachments[Peer], event: SessionEvent) -> None:
        method, params = notification(event)
        clients = attachments.clients
        frame = notification_frame(method, params)
        if frame is not None:
            attachments.replay.keep(event.seq, frame, session.reflected_seq())
            for client in clients:
                client.connection.write(frame)
                if method == AGENT_EVENT and client.tool_progress.enabled():
                    client.tool_progress.on_event(params)
        if isinstance(event, RunSettled | BashEnded):
            self.changed()

    # --- questions -----------------------------------------------------------------------

    async def ask_permission(self, request: RequestPermissionParams) -> RequestPermissionResult:
        """Every attached client that answers ``agent/requestPermission`` is asked; when none does, the
        first attached client is asked with ``window/showMessageRequest``. The first answer wins."""
        session_id = request.session_id

        def can_answer(client: Peer) -> bool:
            if client.client_agent.request_permission:
                return True
            clients = self.attached(session_id)
            return not any(other.client_agent.request_permission for other in clients) and (
                bool(clients) and clients[0] is client
            )

        async def ask(client: Peer) -> RequestPermissionResult:
            return await ask_client(client, request)

        def unanswered(reason: str) -> RequestPermissionResult:
            return RequestPermissionResult(outcome="reject", reason=reason)

        return await self.questions.ask(session_id, can_answer, ask, unanswered)


async def ask_client(client: Peer, request: RequestPermissionParams) -> RequestPermissionResult:
    """Ask one client: ``agent/requestPermission`` if advertised, else ``window/showMessageRequest``.

    Anything but a valid choice (no answer, a malformed one, the client cancelling the
    question) is a rejection; a client that goes away raises :class:`~agentls.fronts.lsp.rpc.ClientGone`.
    """
    rejected = RequestPermissionResult(outcome="reject")
    connection = client.connection
    if client.client_agent.request_permission:
        params = request.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            answer = await connection.request_client("agent/requestPermission", params)
        except CancelledByClient:
            return rejected
        try:
            return RequestPermissionResult.model_validate(answer)
        except ValidationError:
            logger.warning("agent/requestPermission: the answer %.200r is not an outcome; rejected", answer)
            return rejected
    labels = {option.label: option.id for option in request.options}
    question = {
        "type": WARNING,
        "message": f"agentls: {request.title}",
        "actions": [{"title": label} for label in labels],
    }
    try:
        chosen = await connection.request_client("window/showMessageRequest", question)
    except CancelledByClient:
        return rejected
    title = chosen.get("title") if isinstance(chosen, dict) else None
    if isinstance(title, str) and title in labels:
        return RequestPermissionResult(outcome=labels[title])  # type: ignore[arg-type]
    return rejected
