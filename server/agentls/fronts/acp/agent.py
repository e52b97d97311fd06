"""The ACP agent: ACP requests mapped onto agentls's session layer (see protocol.md, "The ACP front").

One :class:`SessionManager` as ``agentls serve`` has, created at ``initialize`` (when
the client's capabilities are known), with this agent as its :class:`SessionFront`: the
events of each session become ``session/update``s and its permission questions
``session/request_permission``. A prompt resolves when its run settles. A prompt sent
while the session runs waits for that run to settle, then runs (as Zed queues a message
sent while the agent works).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AuthEnvVar,
    AvailableCommand,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ConfigOptionUpdate,
    Cost,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    EnvVarAuthMethod,
    ForkSessionResponse,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
    ToolCallUpdate,
    UnstructuredCommandInput,
    UsageUpdate,
)

from agentls import __version__
from agentls.agent.types import AgentTool, MessageEndEvent
from agentls.fronts.acp.files import AcpWorkspace, ClientFiles
from agentls.fronts.acp.terminal import terminal_bash_tool
from agentls.fronts.acp.updates import EventTranslator, replay, tool_kind, tool_title
from agentls.protocol import (
    FileContext,
    ImageParam,
    InitializationOptions,
    NewSessionParams,
    RequestPermissionParams,
    RequestPermissionResult,
)
from agentls.session import SessionError, SessionManager
from agentls.session.events import KernelEvent, McpStatusChanged, SessionEvent
from agentls.session.policy.permission_presets import PRESETS
from agentls.session.policy.providers import WARM_UP_IDLE_SECONDS, warm_up
from agentls.session.session import AgentSession
from agentls.tools.editor_connection import EditorConnection
from agentls.tools.workspace import Workspace

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 1

STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "aborted": "cancelled", "toolUse": "end_turn"}

AUTH_METHODS = {
    "anthropic": ("Anthropic API key", "ANTHROPIC_API_KEY"),
    "openai": ("OpenAI API key", "OPENAI_API_KEY"),
}
"""``authenticate`` methods when no provider is configured: name and environment variable."""

OPTION_KINDS = {
    "allowOnce": "allow_once",
    "allowAlways": "allow_always",
    "allowAlwaysServer": "allow_always",
    "runUnsandboxed": "allow_once",
    "raiseBudget": "allow_once",
}
"""agentls's answers as ACP option kinds; ``reject`` is offered as both reject kinds."""


def _error(error: SessionError) -> RequestError:
    """A session error as a JSON-RPC error: bad input is ``invalid_params``, the rest internal."""
    if error.kind in ("invalidParams", "unknownSession", "unknownModel"):
        return RequestError.invalid_params({"kind": error.kind, "message": error.message})
    if error.kind == "noModel":
        return RequestError.auth_required({"kind": error.kind, "message": error.message})
    return RequestError(-32000, error.message, {"kind": error.kind})


class _SessionState:
    """What the front keeps per session: its translator, its prompts."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self.translator = EventTranslator(session.cwd, self._changes)
        self.prompting = asyncio.Lock()
        """Held by the prompt whose run is going: a second prompt waits for it."""

    def _changes(self, tool_call_id: str) -> list[Any]:
        return self.session.changes.peek(tool_call_id)


class AcpAgent:
    """The ``acp.Agent`` of ``agentls acp``."""

    def __init__(self, options: InitializationOptions) -> None:
        self.options = options
        self.connection: Any = None
        self.capabilities = ClientCapabilities()
        self._manager: SessionManager | None = None
        self._states: dict[str, _SessionState] = {}
        self._input_ended = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.output_written: Callable[[], Awaitable[None]] = _nothing_to_wait_for
        """Until what was sent so far is written out (the transport's; without one, nothing to wait for)."""
        self._warm_up_due = True

    def on_connect(self, connection: Any) -> None:
        self.connection = connection

    @property
    def manager(self) -> SessionManager:
        if self._manager is None:
            raise RequestError(-32002, "Not initialized: send initialize first")
        return self._manager

    # --- the session layer's front (SessionFront) ------------------------------------------

    def editor(self, session_id: str) -> EditorConnection | None:
        """No editor: the client's files and terminals are the workspace's and ``bash``'s."""
        return None

    def workspace(self, session_id: str, cwd: str, allow_outside: bool) -> Workspace | None:
        fs = self.capabilities.fs
        files = ClientFiles(
            self.connection, session_id, bool(fs and fs.read_text_file), bool(fs and fs.write_text_file)
        )
        return AcpWorkspace(cwd, files, allow_outside) if files.read or files.write else None

    def tools(self, session_id: str, cwd: str, tools: list[AgentTool]) -> list[AgentTool]:
        if not self.capabilities.terminal:
            return tools
        return [
            terminal_bash_tool(self.connection, session_id, cwd) if t.name == "bash" else t for t in tools
        ]

    def session_opened(self, session: AgentSession) -> None:
        self._track(session)

    def mcp_status_changed(self, event: McpStatusChanged) -> None:
        """ACP has no update for it: ``_agentls/mcpServers`` tells the servers' status."""

    def _on_event(self, state: _SessionState, event: SessionEvent) -> None:
        """A session's agent events as ``session/update``s (a prompt's answer tells how its run settled)."""
        if not isinstance(event, KernelEvent):
            return
        updates = state.translator.updates(event.event)
        if isinstance(event.event, MessageEndEvent) and event.event.message.role == "assistant":
            updates.append(self._usage(state.session))
        for update in updates:
            self._send(state.session.session_id, update)

    def _send(self, session_id: str, update: Any) -> None:
        """Send a ``session/update`` in order (the SDK queues what is sent; the task only awaits it)."""
        self._spawn(self.connection.session_update(session_id=session_id, update=update))

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("sending to the ACP client failed: %s", task.exception())

    async def ask(self, request: RequestPermissionParams) -> RequestPermissionResult:
        """The policy's question as ``session/request_permission``; the answer in agentls's terms."""
        options = [
            PermissionOption(
                option_id=option.id, name=option.label, kind=OPTION_KINDS.get(option.id, "reject_once")
            )  # type: ignore[arg-type]
            for option in request.options
            if option.id != "reject"
        ]
        options += [
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            PermissionOption(
                option_id="rejectAlways", name="Reject always (this session)", kind="reject_always"
            ),
        ]
        if request.tool_name == "mcp":
            options = [o for o in options if o.option_id in ("allowAlways", "reject")]
        call = ToolCallUpdate(
            tool_call_id=request.tool_call_id,
            title=request.title,
            kind=tool_kind(request.tool_name),  # type: ignore[arg-type]
            status="pending",
            raw_input=request.args,
        )
        answer = await self.connection.request_permission(
            session_id=request.session_id, tool_call=call, options=options
        )
        outcome = answer.outcome
        chosen = "reject"  # also when cancelled: the prompt was cancelled meanwhile
        if isinstance(outcome, AllowedOutcome) and outcome.option_id == "rejectAlways":
            state = self._states.get(request.session_id)
            if state is not None:  # denied for the rest of the session, in every mode
                state.session.permissions.deny_for_session([request.tool_name])
        elif isinstance(outcome, AllowedOutcome) and outcome.option_id in OPTION_KINDS:
            chosen = outcome.option_id
        return RequestPermissionResult(outcome=chosen)  # type: ignore[arg-type]

    # --- initialize and sessions ------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: ClientCapabilities | None = None, **_: Any
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        if self._manager is None:
            self._manager = SessionManager(self.options, self)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True, audio=False),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    fork=SessionForkCapabilities(),
                    resume=SessionResumeCapabilities(),
                ),
            ),
            auth_methods=self._auth_methods(),
            agent_info=Implementation(name="agentls", title="agentls", version=__version__),
        )

    def _auth_methods(self) -> list[EnvVarAuthMethod]:
        """None when a provider is configured; else how to configure one."""
        if self.manager.list_models():
            return []
        return [
            EnvVarAuthMethod(
                type="env_var",
                id=method,
                name=name,
                description=f"Set {variable} where agentls acp starts (or define a provider in models.json)",
                vars=[AuthEnvVar(name=variable)],
            )
            for method, (name, variable) in AUTH_METHODS.items()
        ]

    async def authenticate(self, method_id: str, **_: Any) -> None:
        if self.manager.list_models():
            return None
        variable = AUTH_METHODS[method_id][1] if method_id in AUTH_METHODS else None
        if variable is None:
            raise RequestError.invalid_params({"message": f"Unknown authentication method {method_id!r}"})
        if not os.environ.get(variable):
            raise RequestError.auth_required(
                {
                    "message": f"{variable} is not set: set it where agentls acp starts, "
                    "or define a provider in models.json"
                }
            )
        return None

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        params = NewSessionParams(cwd=cwd, mcp_servers=_mcp_list(mcp_servers))
        session = await self._call(self.manager.new_session(params))
        state = self._track(session)
        self._spawn(self._announce(state))
        return NewSessionResponse(
            session_id=session.session_id, modes=self._modes(state), config_options=self._config(state)
        )

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        state = await self._load(session_id)
        messages = state.session.transcript.messages()
        for update in replay(messages, state.session.cwd):
            await self.connection.session_update(session_id=session_id, update=update)
        self._spawn(self._announce(state))
        return LoadSessionResponse(modes=self._modes(state), config_options=self._config(state))

    async def resume_session(self, cwd: str, session_id: str, **_: Any) -> ResumeSessionResponse:
        state = await self._load(session_id)
        self._spawn(self._announce(state))
        return ResumeSessionResponse(modes=self._modes(state), config_options=self._config(state))

    async def fork_session(self, session_id: str, cwd: str, **_: Any) -> ForkSessionResponse:
        state = await self._load(session_id)
        leaf = state.session.tree.leaf_id
        if leaf is None:
            raise RequestError.invalid_params({"message": f"Session {session_id} is empty: nothing to fork"})
        forked = await self._call(self.manager.fork_session(session_id, leaf))
        new = self._track(self.manager.get(forked))
        self._spawn(self._announce(new))
        return ForkSessionResponse(
            session_id=forked, modes=self._modes(new), config_options=self._config(new)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        infos = await self._call(self.manager.list_sessions(cwd))
        sessions = [
            SessionInfo(
                session_id=info.session_id,
                cwd=info.cwd,
                title=info.title,
                updated_at=_iso(info.updated_at),
            )
            for info in infos
        ]
        return ListSessionsResponse(sessions=sessions)

    async def _load(self, session_id: str) -> _SessionState:
        if session_id in self._states:
            return self._states[session_id]
        session = await self._call(self.manager.load_session(session_id))
        return self._track(session)

    def _track(self, session: AgentSession) -> _SessionState:
        state = self._states.get(session.session_id)
        if state is None:
            state = self._states[session.session_id] = _SessionState(session)
            session.subscribe(partial(self._on_event, state))
        return state

    async def _announce(self, state: _SessionState) -> None:
        """What a client shows once it has the session: its commands and its usage, once the answer that
        gave the session is written (spawned first, this held the answer back ~10 ms: the first use of
        these updates' models builds their validators)."""
        await self.output_written()
        session = state.session
        commands = await session.list_commands()
        available = [
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=UnstructuredCommandInput(hint=command.argument_hint) if command.argument_hint else None,
            )
            for command in commands
        ]
        await self.connection.session_update(
            session_id=session.session_id,
            update=AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=available
            ),
        )
        await self.connection.session_update(session_id=session.session_id, update=self._usage(session))
        if self._warm_up_due:
            asyncio.get_running_loop().call_later(WARM_UP_IDLE_SECONDS, self._warm_up_if_idle)

    def _warm_up_if_idle(self) -> None:
        """Import what a first model request needs (``httpx``, its TLS stack, the providers) in the
        background once a session is announced and nothing has run for :data:`WARM_UP_IDLE_SECONDS`, as
        ``agentls serve`` does: a first prompt typed meanwhile does not wait ~50 ms for them (one sent
        at once imports them itself)."""
        if self._warm_up_due and all(state.session.run is None for state in self._states.values()):
            self._warm_up_due = False
            warm_up(self.manager.providers)

    def _usage(self, session: AgentSession) -> UsageUpdate:
        stats = session.stats()
        return UsageUpdate(
            session_update="usage_update",
            used=stats.context.tokens,
            size=stats.context.context_window,
            cost=Cost(amount=stats.cost, currency="USD"),
        )

    def _session(self, session_id: str) -> _SessionState:
        state = self._states.get(session_id)
        if state is None:
            raise RequestError.invalid_params(
                {
                    "message": f"Unknown session {session_id!r}: create it with session/new "
                    "or load it with session/load"
                }
            )
        return state

    @staticmethod
    async def _call(work: Any) -> Any:
        try:
            return await work
        except SessionError as error:
            raise _error(error) from None

    # --- modes and options ------------------------------------------------------------------

    def _modes(self, state: _SessionState) -> SessionModeState:
        """The session's permission presets as ACP's session modes."""
        return SessionModeState(
            current_mode_id=state.session.permissions.preset,
            available_modes=[
                SessionMode(id=preset.id, name=preset.name, description=preset.description)
                for preset in PRESETS.values()
            ],
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        state = self._session(session_id)
        try:
            state.session.permissions.use_preset(mode_id)
        except SessionError as error:
            raise _error(error) from None
        self._send(
            session_id, CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        )
        return SetSessionModeResponse()

    def _config(self, state: _SessionState) -> list[SessionConfigOptionSelect]:
        """The model (``PROVIDER/ID`` of the session's models) and the levels the model supports."""
        session = state.session
        model = session.agent.state.model
        models = [
            SessionConfigSelectOption(
                value=f"{m.provider}/{m.id}", name=m.name or m.id, description=m.provider
            )
            for m in session.models.get_models()
        ]
        return [
            SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                current_value=f"{model.provider}/{model.id}",
                options=models,
            ),
            SessionConfigOptionSelect(
                type="select",
                id="thinking",
                name="Thinking",
                category="thought_level",
                current_value=session.thinking_level_in_effect(),
                options=[
                    SessionConfigSelectOption(value=level, name=level)
                    for level in session.available_thinking_levels()
                ],
            ),
        ]

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> SetSessionConfigOptionResponse:
        state = self._session(session_id)
        session = state.session
        if config_id == "model" and isinstance(value, str):
            provider, _, model_id = value.partition("/")
            await self._call(session.select_model(provider, model_id))
        elif config_id == "thinking" and isinstance(value, str):
            levels = session.available_thinking_levels()
            if value not in levels:
                model = session.agent.state.model
                raise RequestError.invalid_params(
                    {
                        "message": f"{model.provider}/{model.id} has no thinking level {value!r}: "
                        f"use one of the option's values ({', '.join(levels)})"
                    }
                )
            await self._call(session.set_thinking_level(value))
        else:
            raise RequestError.invalid_params({"message": f"Unknown option {config_id!r} (model, thinking)"})
        options = self._config(state)
        self._send(
            session_id, ConfigOptionUpdate(session_update="config_option_update", config_options=options)
        )
        return SetSessionConfigOptionResponse(config_options=options)

    # --- prompts ----------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        state = self._session(session_id)
        text, images, context = self._prompt_parts(state.session, prompt)
        async with state.prompting:
            await state.session.wait_for_settled()  # a run started by another front, or a queued continuation
            result = await self._call(state.session.prompt(text, images, None, context or None))
            run = state.session.run  # the prompt's: a run settles in a task, after the prompt is answered
            assert run is not None and run.run_id == result.run_id
            if self._input_ended:  # read before the end of input, started after it: aborted as the others
                await state.session.abort()
            outcome = await run.outcome()
        if outcome.stop_reason == "error":
            raise RequestError.internal_error({"message": outcome.error_message or "The run failed"})
        return PromptResponse(stop_reason=STOP_REASONS.get(outcome.stop_reason, "end_turn"))  # type: ignore[arg-type]

    def _prompt_parts(
        self, session: AgentSession, blocks: list[Any]
    ) -> tuple[str, list[ImageParam], list[FileContext]]:
        """ACP content as agentls's prompt: the text, the images, and files as editor context."""
        texts: list[str] = []
        images: list[ImageParam] = []
        context: list[FileContext] = []
        for index, block in enumerate(blocks):
            if isinstance(block, TextContentBlock):
                texts.append(block.text)
            elif isinstance(block, ImageContentBlock):
                images.append(ImageParam(data=block.data, mime_type=block.mime_type))
            elif isinstance(block, ResourceContentBlock):
                if block.uri.startswith("file://"):
                    context.append(FileContext(type="file", uri=block.uri))
                else:
                    texts.append(f"[{block.name}]({block.uri})")
            elif isinstance(block, EmbeddedResourceContentBlock):
                resource = block.resource
                text = getattr(resource, "text", None)
                if text is None:
                    raise RequestError.invalid_params(
                        {
                            "message": f"prompt[{index}]: a binary resource ({resource.uri}) "
                            "cannot be sent to the model"
                        }
                    )
                if resource.uri.startswith("file://"):
                    context.append(FileContext(type="file", uri=resource.uri, text=text))
                else:
                    texts.append(f'<resource uri="{resource.uri}">\n{text}\n</resource>')
            else:
                kind = getattr(block, "type", type(block).__name__)
                raise RequestError.invalid_params(
                    {
                        "message": f"prompt[{index}]: {kind} content is not supported "
                        "(text, image, resource, resource_link)"
                    }
                )
        return "\n\n".join(texts), images, context

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """agentls's own requests (``_agentls/...``): ``_agentls/mcpServers {sessionId, wait?}`` lists the
        session's MCP servers (as ``agent/listMcpServers``); with ``wait``, once none is still starting."""
        if method != "agentls/mcpServers":
            raise RequestError.method_not_found(f"_{method}")
        state = self._session(str(params.get("sessionId")))
        mcp = state.session.mcp
        if mcp is None:
            return {"servers": [], "problems": []}
        if params.get("wait"):
            starting = [c for c in mcp.connections if c.status == "starting"]
            await asyncio.gather(*(c.wait_started() for c in starting))
        return {"servers": [info.wire() for info in mcp.infos()], "problems": mcp.problems}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def cancel(self, session_id: str, **_: Any) -> None:
        state = self._states.get(session_id)
        if state is not None:
            await state.session.abort()

    async def input_ended(self) -> None:
        """The client closed its end: the runs are aborted (their prompts answered ``cancelled``), and so
        is any run a prompt read before the end starts later; other requests read before it are answered."""
        self._input_ended = True
        await asyncio.gather(*(state.session.abort() for state in list(self._states.values())))

    async def notified(self) -> None:
        """Until the notifications being sent (session updates, announcements) are sent."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def close(self) -> None:
        if self._manager is not None:
            await self._manager.close()
        for task in list(self._tasks):
            task.cancel()


def _mcp_list(servers: list[Any] | None) -> list[dict[str, Any]] | None:
    """ACP's MCP servers as agentls's list form (``mcpServers`` of ``agent/newSession``)."""
    if not servers:
        return None
    return [server.model_dump(mode="json", by_alias=True, exclude_none=True) for server in servers]


def _iso(milliseconds: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC).isoformat().replace("+00:00", "Z")


async def _nothing_to_wait_for() -> None:
    return None


__all__ = ["AcpAgent", "tool_title"]
