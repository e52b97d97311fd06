"""``AgentSession``: one conversation, its agent, its runs, its queue items and its file.

Product policy on top of the kernel lives here, not in the server: run ids,
queued continuations (a run lasts until nothing queued is left to do), queue
items with ids that clients can show and remove, persistence of every finished
message, and what the session tells its subscribers (typed events,
:mod:`agentls.session.events`; each front puts them on its wire). The transcript keeps
every message; the agent holds the context, which a
:class:`~agentls.session.compaction.Compactor` keeps inside the model's window.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from asyncio import FIRST_COMPLETED
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from agentls.agent import (
    Agent,
    AgentBusyError,
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    AgentState,
    AgentTool,
    BeforeToolCall,
    ContinueError,
    MessageEndEvent,
    MessageStartEvent,
    PendingMessageQueue,
    TurnContext,
    TurnEndEvent,
    TurnUpdate,
)
from agentls.ai import (
    THINKING_LEVELS,
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    Models,
    StreamFn,
    StreamOptions,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    to_wire,
)
from agentls.ai.abort import AbortController
from agentls.ai.models import clamp_thinking_level, supported_thinking_levels
from agentls.mcp.hub import SessionMcp
from agentls.protocol import (
    AbortResult,
    Ask,
    BudgetSettings,
    BudgetUsage,
    ChangesResult,
    ChangesSpan,
    CommandInfo,
    CompactionSettings,
    CompactResult,
    ContextAttachment,
    ContextStats,
    GetChangesParams,
    ImageParam,
    MessagesResult,
    ModelRef,
    PermissionMode,
    PromptResult,
    QueueItem,
    QueueState,
    RevertChangesParams,
    RevertChangesResult,
    RevertedChange,
    RewindResult,
    SkippedFile,
    StateResult,
    StatsResult,
    TokenStats,
    TreeResult,
    WhenBusy,
)
from agentls.session.compaction import CompactionFailed, Compactor, Summarizer, SummaryAborted, SummaryError
from agentls.session.compaction.branch_summary import summarize_branch
from agentls.session.compaction.tokens import estimate_messages_tokens
from agentls.session.editor_context import EditorContext
from agentls.session.errors import SessionError
from agentls.session.events import (
    BranchMoved,
    KernelEvent,
    QueueChanged,
    RunSettled,
    SessionEvent,
    SessionListener,
)
from agentls.session.history.changes import (
    REVERT,
    NetChange,
    RevertError,
    describe,
    net_changes,
    revert_plans,
)
from agentls.session.history.checkpoints import FILE_TOOLS, Checkpoints, WorkspaceChanges, actor, tool_names
from agentls.session.history.file_changes import ChangeLog, FileChange, FileChanges, Snapshot, recordable
from agentls.session.history.rewind import (
    FilePlan,
    FileProblem,
    apply_plans,
    display,
    find_conflicts,
    plan_files,
    rename_pairs,
    whole_renames,
)
from agentls.session.history.store import SessionWriter
from agentls.session.history.transcript import BranchSummary, TranscriptEntry
from agentls.session.history.tree import (
    FILE_CHANGES,
    REWIND,
    REWIND_DONE,
    RUN,
    WORKSPACE_CHANGES,
    Node,
    SessionTree,
    settings_on,
)
from agentls.session.history.tree_view import shown_leaf, tree_view
from agentls.session.instructions.instructions import (
    SessionInstructions,
)
from agentls.session.messages import branch_summary_message, convert_to_llm, custom_message
from agentls.session.policy.budget import SessionBudget, Spent
from agentls.session.policy.permission_presets import PRESET_INFOS, SessionPermissions
from agentls.session.policy.permissions import ask_budget
from agentls.session.policy.providers import WARM_UP_IDLE_SECONDS, resolve_model
from agentls.session.user_bash import UserBash
from agentls.tools.bounds import OutputFiles, bound_results
from agentls.tools.hunks import hunk_list
from agentls.tools.processes import ProcessTracker
from agentls.tools.sandbox import Sandbox
from agentls.tools.workspace import Workspace

TRUST_WAIT_SECONDS = 300.0
"""How long a prompt's first turn waits for the folder's trust answer and the MCP servers it starts."""

logger = logging.getLogger(__name__)


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _user_message(text: str, images: list[ImageParam] | None) -> UserMessage:
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    content.extend(ImageContent(data=i.data, mime_type=i.mime_type) for i in images or [])
    return UserMessage(content=content)


def _continue_advice(reason: str) -> str:
    """The kernel's reason (Pi's words) with what the user can do about it."""
    if "role: assistant" in reason:
        return (
            f"{reason}: the agent has already answered (or the run was aborted) and nothing is queued. "
            "Send a new prompt, or queue a steering or follow-up message and continue."
        )
    if "No messages" in reason:
        return f"{reason}: the session is empty. Send a prompt first."
    return reason


def _coalescing(stream_fn: StreamFn) -> StreamFn:
    """``stream_fn`` asking providers to push the deltas that arrive together as one event."""

    def stream(model: Model, context: Context, options: StreamOptions | None = None) -> Any:
        coalescing = dataclasses.replace(options or StreamOptions(), coalesce_deltas=True)
        return stream_fn(model, context, coalescing)

    return stream


@dataclass
class Run:
    """One run of a session: from a prompt (or ``continue``) until nothing it queued is left to do."""

    run_id: str
    aborted: bool = False
    settled: asyncio.Future[RunSettled] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    """Done, with the :class:`RunSettled` event told to the subscribers, once the run is over."""
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by an abort (ends what the run waits for before its kernel starts)."""
    marked: bool = False
    """Its ``agentls/run`` entry (with the snapshot of the folder at its start) is written."""

    async def outcome(self) -> RunSettled:
        """How the run ended, once it has (a waiter cancelled does not cancel the run)."""
        return await asyncio.shield(self.settled)


@dataclass
class _TakingSnapshot:
    """A snapshot of the session's folder being taken beside a model request."""

    task: asyncio.Task[str | None]
    pair: WorkspaceChanges | None
    """The batch whose end it is (its entry is written once it is done), or ``None`` at a run's start."""
    current: bool = True
    """Still the folder's state as far as the session knows (nothing changed it since it started)."""


class AgentSession:
    """One session: an :class:`Agent`, the runs it makes, its queue items and its session file."""

    def __init__(
        self,
        *,
        session_id: str,
        cwd: str,
        models: Models,
        model: Model,
        thinking_level: str,
        system_prompt: str,
        writer: SessionWriter,
        workspace: Workspace,
        tools: list[AgentTool],
        changes: ChangeLog | None = None,
        before_tool_call: BeforeToolCall | None = None,
        processes: ProcessTracker | None = None,
        instructions: SessionInstructions | None = None,
        compaction: CompactionSettings | None = None,
        coalesce_deltas: bool = False,
        editor_context: EditorContext | None = None,
        mcp: SessionMcp | None = None,
        permission_modes: dict[str, PermissionMode] | None = None,
        outputs: OutputFiles | None = None,
        checkpoints: Checkpoints | None = None,
        sandbox: Sandbox | None = None,
        budget: BudgetSettings | None = None,
        ask: Ask | None = None,
    ) -> None:
        self.session_id = session_id
        self.sandbox = sandbox
        """The sandbox of the session's ``bash`` (reported by :meth:`state`; the tool applies it)."""
        self._ask = ask
        """Asks the user (the budget's question); ``None``: no one to ask, a limit reached stops the run."""
        self.checkpoints = checkpoints or Checkpoints(None, "off", None)
        """Snapshots of the folder around what else than write and edit can change it (bash, MCP tools)."""
        self._last_tree: str | None = None
        """The newest snapshot, while nothing the session knows of changed the folder since."""
        self._taking: _TakingSnapshot | None = None
        """The snapshot being taken beside a model request: the run's start, or the end of a batch."""
        self._preparing: asyncio.Task[str | None] | None = None
        """The snapshot :meth:`prepare_checkpoints` took once the new session was idle."""
        self._batch: WorkspaceChanges | None = None
        """The tool batch running between two snapshots (its ``after`` still to take)."""
        self.outputs = outputs or OutputFiles()
        """Where results beyond the bounds keep their full text (removed when the session closes)."""
        self.mcp = mcp
        """The session's MCP servers: their tools join the session's own before each model call."""
        self.permission_modes = permission_modes if permission_modes is not None else {}
        """The policy's modes by tool, as its hook reads them at each call (changed by ``permissions``)."""
        self.permissions = SessionPermissions(self.permission_modes)
        """Presets over the session's own modes (ACP's session modes), and tools denied for the session."""
        self._own_tools = list(tools)
        self.editor_context = editor_context
        """Turns the ``context`` of prompts into their ``editorContext`` message."""
        self.instructions = instructions
        """Rebuilds the system prompt before each turn; without it the prompt stays as given."""
        self.processes = processes
        """What the session's ``bash`` calls started: ended when each run ends, before ``agent/settled``."""
        self.cwd = cwd
        self.models = models
        self.writer = writer
        self.tree: SessionTree = writer.tree
        """Every entry of the session; the writer adds to it and moves its leaf."""
        self.workspace = workspace
        """The session's files, as its tools see them: rewinds put them back through it."""
        self.changes = changes or ChangeLog()
        """What the tools' writes changed: each change is in the session file before it is on disk."""
        self.changes.store = self._store_changes
        self.load_warnings: list[str] = []
        """What loading the session found to report (a rewind that was cut short)."""
        transcript = self.tree.transcript(self.tree.leaf_id)
        spent = Spent()
        for entry in transcript.entries:
            if isinstance(entry.message, AssistantMessage):
                spent.add(entry.message)
        self.budget = SessionBudget(budget, spent)
        """The session's spending limits and what it spent (checked between turns, :meth:`_budget_stop`)."""
        self._budget_stopped: BudgetUsage | None = None
        """The limit that stopped the run going on."""
        self._listeners: tuple[SessionListener, ...] = ()
        self._seq = 0
        """The last event's number (:meth:`_publish`)."""
        self._message_seq = 0
        """The number of the last ``message_end`` (or ``agent_start``): what :meth:`messages` reflects
        while a run goes on."""
        self._run: Run | None = None
        self._items: dict[str, QueueItem] = {}
        """The queue items still in the kernel's queues, by id (the kernel holds their messages)."""
        self._last_queue: QueueState | None = None
        self._emitting = asyncio.Lock()
        """Held while an event is persisted and sent, so that a bash message joining the transcript
        between runs is sent whole before the next run's first event."""
        self._waiting_bash: list[tuple[AgentMessage, WorkspaceChanges | None]] = []
        """Bash messages that ended during a run: they join the transcript when it ends, as in Pi."""
        self.user_bash = UserBash(
            session_id=session_id,
            cwd=cwd,
            emit=self._publish,
            record=self._record_bash,
            snapshot=self.checkpoints.snapshot,
            environment=processes.environment if processes is not None else None,
            outputs=self.outputs.folder,
        )
        """``agent/bash`` and ``agent/abortBash``: the user's own commands."""
        self.agent = Agent(
            initial_state=AgentState(
                system_prompt=system_prompt,
                model=model,
                thinking_level=thinking_level,  # type: ignore[arg-type]
                messages=transcript.context(),
                tools=tools,
            ),
            stream_fn=_coalescing(models.stream_simple) if coalesce_deltas else models.stream_simple,
            convert_to_llm=convert_to_llm,
            session_id=session_id,
            before_tool_call=before_tool_call,
            after_tool_call=bound_results(self.outputs),
            prepare_next_turn_with_context=self._prepare_next_turn,
            should_stop_after_turn=self._budget_stop,
        )
        self.agent.subscribe(self._on_event)
        self.transcript = transcript
        """Every message, compactions in place (``agent/getMessages``); the agent holds the context."""
        self.compactor = Compactor(
            session_id=session_id,
            agent=self.agent,
            transcript=transcript,
            settings=compaction or CompactionSettings(),
            writer=writer,
            emit=self._publish,
            run_id=lambda: self.run_id,
            announce=self._announce,
        )
        self._compacting: asyncio.Future[None] | None = None
        """Set while ``agent/compact`` runs: the session is busy as during a run."""
        self._moving: tuple[asyncio.Future[None], AbortController] | None = None
        """Set while a rewind or branch switch summarises and puts files back: busy, and abortable."""

    # --- events --------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Tell ``listener`` every event from now on, after the listeners before it (Pi's
        ``AgentSession.subscribe``); the function returned unsubscribes it."""
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            self._listeners = tuple(other for other in self._listeners if other is not listener)

        return unsubscribe

    def _publish(self, event: SessionEvent) -> None:
        """Number ``event`` in the session (:attr:`KernelEvent.seq`) and tell every listener."""
        self._seq += 1
        event.seq = self._seq
        if type(event) is KernelEvent and isinstance(event.event, MessageEndEvent | AgentStartEvent):
            self._message_seq = self._seq
        # A listener that unsubscribes meanwhile changes self._listeners, not the tuple iterated.
        for listener in self._listeners:
            listener(event)

    async def _on_event(self, event: AgentEvent, signal: AbortSignal) -> None:
        async with self._emitting:
            if isinstance(event, AgentStartEvent):
                await self._mark_run()
            elif isinstance(event, MessageEndEvent):
                if isinstance(event.message, AssistantMessage):
                    await self._snapshot_taken()  # before its tools run
                    await self._before_batch(event.message)
                elif self._taking is not None and self._taking.pair is not None:
                    await self._snapshot_taken()  # the batch's entry goes before this message
            if isinstance(event, TurnEndEvent) and isinstance(event.message, AssistantMessage):
                self.budget.add(event.message)
            await self._emit(event)
            if isinstance(event, TurnEndEvent | AgentEndEvent) and self._batch is not None:
                await self._after_batch()

    async def _store_changes(self, changes: FileChanges) -> None:
        """A tool is about to write a file: its record goes to the session file first."""
        self._forget_tree()
        await self.writer.append_custom(FILE_CHANGES, changes, changes.wire())

    # --- checkpoints ---------------------------------------------------------------------

    async def _mark_run(self) -> None:
        """A run's first kernel start: its ``agentls/run`` entry, and a snapshot of the folder
        (:meth:`_take_snapshot`: the state the run's first batch starts from)."""
        run = self._run
        if run is None or run.marked:
            return
        run.marked = True
        self._forget_tree()
        self._take_snapshot(None)
        data = {"runId": run.run_id}
        await self.writer.append_custom(RUN, data, data)

    def prepare_checkpoints(self) -> None:
        """Snapshot the folder in the background once the new session has been idle for
        :data:`WARM_UP_IDLE_SECONDS`: the shadow repository is made and its index filled then, so the
        snapshot a run starts with looks only for what changed since (a first snapshot of a folder of
        600 files takes 0.6 s, the next ones 15 ms), and a prompt typed meanwhile does not have its
        first tool batch wait for it. A prompt sent at once takes the first snapshot itself, as before
        (done beside it, this one slowed the answer and the run down)."""
        if self.checkpoints.state == "on":
            asyncio.get_running_loop().call_later(WARM_UP_IDLE_SECONDS, self._prepare_if_idle)

    def _prepare_if_idle(self) -> None:
        started = self._preparing is not None or self._taking is not None or self._last_tree is not None
        if not (started or self._run is not None or self.writer.closed):
            self._preparing = asyncio.ensure_future(self.checkpoints.snapshot())

    def _take_snapshot(self, pair: WorkspaceChanges | None) -> None:
        """Start a snapshot of the folder (at a run's start, or as the end of ``pair``'s batch).

        A snapshot is git over the whole folder: tens of milliseconds, more in a large one. It is
        taken beside the next model request, which waited for it before, and is done (``pair``
        recorded) before the next message is stored or any tool runs (:meth:`_snapshot_taken`).
        """
        assert self._taking is None, "the snapshot before is done first: its batch's entry is not dropped"
        preparing = self._preparing
        if pair is None and preparing is not None and not preparing.done():
            task = preparing  # a run started as the session opened: the snapshot being taken is its start
        else:
            task = asyncio.ensure_future(self.checkpoints.snapshot())
        self._taking = _TakingSnapshot(task, pair)

    async def _snapshot_taken(self) -> None:
        """The snapshot being taken, once done: the state the next batch starts from (unless the folder
        changed meanwhile), and the entry of the batch it ends when that batch changed something."""
        taking, self._taking = self._taking, None
        if taking is None:
            return
        tree = await taking.task
        if taking.current:
            self._last_tree = tree
        pair = taking.pair
        if pair is not None and tree is not None and tree != pair.before:
            done = dataclasses.replace(pair, after=tree)
            await self.writer.append_custom(WORKSPACE_CHANGES, done, done.wire())

    def _forget_tree(self) -> None:
        """The folder changed since the last snapshot (or may have: a run starts)."""
        self._last_tree = None
        if self._taking is not None:
            self._taking.current = False  # its tree is still the end of its batch, not the folder now

    async def _before_batch(self, message: AssistantMessage) -> None:
        """Before a batch that runs a tool whose changes no record holds: the snapshot it starts from."""
        calls = [block for block in message.content if isinstance(block, ToolCall)]
        others = [call.name for call in calls if call.name not in FILE_TOOLS]
        if not others or message.stop_reason in ("error", "aborted", "length"):
            return
        before = self._last_tree or await self.checkpoints.snapshot()
        if before is not None:
            by = tuple(dict.fromkeys(actor(name) for name in others))
            self._batch = WorkspaceChanges(before, before, by, tuple(call.id for call in calls))

    async def _after_batch(self) -> None:
        batch, self._batch = self._batch, None
        assert batch is not None
        await self._snapshot_taken()
        self._last_tree = None
        self._take_snapshot(batch)

    async def _emit(self, event: AgentEvent) -> None:
        """Persist a finished message, then send the event (``runId`` null between runs)."""
        if isinstance(event, MessageEndEvent):
            message = event.message
            changes = (
                self.changes.take(message.tool_call_id) if isinstance(message, ToolResultMessage) else None
            )
            if changes is not None:
                await self.writer.append_custom(FILE_CHANGES, changes, changes.wire())
            entry_id = await self.writer.append_message(message)
            self.transcript.append(TranscriptEntry(entry_id, message))
        self.compactor.observe(event)
        self._send(event)

    def _send(self, event: AgentEvent) -> None:
        run_id = self._run.run_id if self._run else None
        self._publish(KernelEvent(self.session_id, run_id, 0, event))
        if isinstance(event, MessageStartEvent) and self._forget_delivered():
            self._publish_queue()

    async def _announce(self, message: AgentMessage) -> None:
        """Send the events of a message the session itself put in the transcript (a compaction's summary)."""
        async with self._emitting:
            self._send(MessageStartEvent(message=message))
            self._send(MessageEndEvent(message=message))

    def _queue_state(self) -> QueueState:
        def items(queue: PendingMessageQueue) -> list[QueueItem]:
            return [self._items[queued.id] for queued in queue.items if queued.id in self._items]

        return QueueState(
            steering=items(self.agent.steering_queue), follow_up=items(self.agent.follow_up_queue)
        )

    def _forget_delivered(self) -> bool:
        """Forget the items the loop has taken from the kernel's queues; whether there were any."""
        queues = (self.agent.steering_queue, self.agent.follow_up_queue)
        delivered = [item_id for item_id in self._items if not any(item_id in queue for queue in queues)]
        for item_id in delivered:
            del self._items[item_id]
        return bool(delivered)

    def _publish_queue(self) -> None:
        state = self._queue_state()
        if state != self._last_queue:
            self._last_queue = state
            self._publish(QueueChanged(self.session_id, state))

    # --- runs ----------------------------------------------------------------------------

    @property
    def run(self) -> Run | None:
        """The run going on, if any."""
        return self._run

    @property
    def run_id(self) -> str | None:
        return self._run.run_id if self._run else None

    def _busy(self) -> str | None:
        """What keeps the session busy (a run, or ``agent/compact``), if anything."""
        if self._run is not None:
            return f"Session {self.session_id} is running {self._run.run_id}"
        if self._compacting is not None:
            return f"Session {self.session_id} is compacting"
        if self._moving is not None:
            return f"Session {self.session_id} is moving to another branch"
        return None

    def _start(self, start: Callable[[], asyncio.Task[None]], *, prompt: bool = False) -> str:
        """Start a run; a ``prompt`` run's kernel starts after the check for compaction, as in Pi."""
        if busy := self._busy():
            raise SessionError("busy", busy)
        run = Run(_new_id("run"))
        self._run = run
        self.budget.start_run()
        self._budget_stopped = None
        task = None
        if not prompt:
            try:
                task = start()
            except AgentBusyError as error:
                self._run = None
                raise SessionError("busy", str(error)) from error
            except ContinueError as error:
                self._run = None
                raise SessionError("cannotContinue", _continue_advice(str(error))) from error
        self._publish_queue()
        asyncio.get_running_loop().create_task(self._drive(run, task or self._prompt_after_check(run, start)))
        return run.run_id

    async def _prompt_after_check(self, run: Run, start: Callable[[], asyncio.Task[None]]) -> None:
        """Compact first if the context needs it, then prompt; an abort meanwhile aborts the prompt's run
        (the prompt is kept, answered as aborted)."""
        await self._trust_answered(run)
        await self.compactor.before_prompt()
        task = start()
        if run.aborted:
            self.agent.abort()
        await task

    async def _drive(self, run: Run, task: Awaitable[None]) -> None:
        """Await the kernel run, then compact, retry or run what is queued as Pi does, then settle.

        The run holds the session while it winds down (its processes ended, the user's commands
        joined), so a steering or follow-up message can still be queued then: the run goes on
        with it. The last look at the queue and the session's release are one step.
        """
        failure: str | None = None
        try:
            while True:
                try:
                    await task
                    await self._go_on(run)
                finally:  # while the run still holds the session: no new call can start
                    if self.processes is not None:
                        await self.processes.terminate_all()
                    await self._snapshot_taken()  # the last batch's end, or the start of a run without answer
                    await self._join_waiting_bash()
                if run.aborted or self._budget_stopped or not self._can_continue_queued():
                    break
                task = self._continue_kernel(run)
        except Exception as error:  # a listener or the store failed: the run ends, the server lives
            logger.exception("run %s of session %s failed", run.run_id, self.session_id)
            failure = str(error)
        finally:
            self._run = None
            # from the transcript: a response that overflowed left the context, not the transcript
            messages = (entry.message for entry in reversed(self.transcript.entries))
            last = next((m for m in messages if isinstance(m, AssistantMessage)), None)
            stop_reason = "error" if failure else (last.stop_reason if last else "stop")
            error_message = failure or (last.error_message if last else None)
            settled = RunSettled(
                self.session_id,
                run.run_id,
                stop_reason,
                error_message if error_message and stop_reason in ("error", "aborted") else None,
                self._budget_stopped,
            )
            self._publish_queue()
            self._publish(settled)
            if not run.settled.done():
                run.settled.set_result(settled)

    async def _go_on(self, run: Run) -> None:
        """After a kernel run: an overflow retry, or what is queued, until the agent would stop."""
        while not run.aborted:
            proceed = await self.compactor.after_run()
            if run.aborted or self._budget_stopped or not (proceed or self._can_continue_queued()):
                return
            await self._continue_kernel(run)

    async def _continue_kernel(self, run: Run) -> None:
        """Another kernel run from the transcript as it is (Pi's ``continue``), instructions read again;
        none if the run was aborted meanwhile (there was no kernel run for the abort to stop)."""
        await self.refresh_instructions()
        if not run.aborted:
            await self.agent.continue_()

    async def _budget_stop(self, turn: TurnContext, signal: AbortSignal | None) -> bool:
        """The kernel's ``should_stop_after_turn``: stop before another turn once a limit is reached,
        unless the user lets the run go on with the limit raised."""
        run = self._run
        while (reached := self.budget.reached()) is not None and run is not None:
            calls = any(isinstance(block, ToolCall) for block in turn.message.content)
            if not (calls and turn.message.stop_reason == "toolUse") and not self.agent.has_queued_messages():
                return False  # no other turn would start: the run ends by itself
            raised = self.budget.raised(reached)
            if self._ask is None or not await ask_budget(
                self._ask, self.session_id, run.run_id, reached, raised, signal
            ):
                self._budget_stopped = reached
                return True
            self.budget.raise_limit(reached)
        return False

    def _can_continue_queued(self) -> bool:
        if not self.agent.has_queued_messages():
            return False
        last = self.agent.state.messages[-1] if self.agent.state.messages else None
        return not (isinstance(last, AssistantMessage) and last.stop_reason in ("error", "aborted"))

    # --- the user's commands (agent/bash, through self.user_bash) ------------------------

    async def _record_bash(self, message: AgentMessage, pair: WorkspaceChanges | None) -> None:
        """Pi's ``recordBashResult``: into the transcript at once, or after the running run.

        A message added during a run could land between a tool call and its result, so
        it waits for the run's end, after any queued continuation, before :class:`RunSettled`.
        ``pair``: the snapshots before and after the command, recorded after its message.
        """
        if pair is not None:
            self._forget_tree()
        if self._run is not None:
            self._waiting_bash.append((message, pair))
        else:
            await self._join(message, pair)

    async def _join(self, message: AgentMessage, pair: WorkspaceChanges | None = None) -> None:
        """Add a message the kernel did not make: in the state at once, then persisted and sent."""
        self.agent.state.messages.append(message)
        async with self._emitting:
            await self._emit(MessageStartEvent(message=message))
            await self._emit(MessageEndEvent(message=message))
            if pair is not None and pair.before != pair.after:
                await self.writer.append_custom(WORKSPACE_CHANGES, pair, pair.wire())

    async def _join_waiting_bash(self) -> None:
        """Join what waited for the run, and what ends meanwhile, while the run still holds the session."""
        while self._waiting_bash:
            try:
                await self._join(*self._waiting_bash.pop(0))
            except Exception:  # the store failed: the run must still settle
                logger.exception("a bash message of session %s could not be recorded", self.session_id)

    async def wait_for_settled(self) -> RunSettled | None:
        """Until the run going on (if any) is over; how it ended."""
        return await self._run.outcome() if self._run is not None else None

    # --- the system prompt and the user's commands ---------------------------------------

    async def refresh_instructions(self) -> None:
        """Look at the project's instructions, skills and templates again; rebuild the system prompt
        and the tool list (the session's own tools, then those of its MCP servers that are ready).

        Runs before each run and, through :meth:`_prepare_next_turn`, before each later
        turn, so the model always gets the prompt for the files and tools of the moment.
        """
        if self.mcp is not None:
            await self.mcp.tools_settled()
            self.agent.state.tools = [*self._own_tools, *self.mcp.tools()]
        if self.instructions is None:
            return
        await self.instructions.refresh()
        tools = [tool.name for tool in self.agent.state.tools]
        self.agent.state.system_prompt = self.instructions.system_prompt(tools)

    async def _prepare_next_turn(self, turn: TurnContext, signal: AbortSignal | None) -> TurnUpdate:
        """Pi's next-turn refresh: every turn runs on the live session's prompt, tools, model and thinking.

        So ``agent/setModel``, ``agent/setThinkingLevel`` and an edited ``AGENTS.md`` take
        effect at the next turn of a running run, not at the next run.
        """
        context = await self.compactor.before_next_turn(turn.context, signal)
        await self.refresh_instructions()
        state = self.agent.state
        context = dataclasses.replace(context, system_prompt=state.system_prompt, tools=list(state.tools))
        return TurnUpdate(context=context, model=state.model, thinking_level=state.thinking_level)

    async def _trust_answered(self, run: Run) -> None:
        """While the question whether to trust the folder (its files, its MCP servers) is open, the
        first turn waits for the answer and for the servers it starts (at most
        :data:`TRUST_WAIT_SECONDS`; an abort ends the wait), so that it sees what the user trusts."""
        waits: list[Awaitable[Any]] = []
        if self.instructions is not None and (answer := self.instructions.trust_pending()) is not None:
            waits.append(asyncio.shield(answer))  # the folder's answer outlives this wait
        if self.mcp is not None and self.mcp.trust_open():
            waits.append(self.mcp.trusted_ready())
        if not waits:
            return
        ready = asyncio.ensure_future(asyncio.gather(*waits, return_exceptions=True))
        stopped = asyncio.ensure_future(run.stopped.wait())
        try:
            await asyncio.wait([ready, stopped], timeout=TRUST_WAIT_SECONDS, return_when=FIRST_COMPLETED)
        finally:
            ready.cancel()
            stopped.cancel()
        await self.refresh_instructions()

    async def _expand(self, text: str) -> str:
        """The text of a prompt with a ``/template`` or ``/skill:name`` command at its start expanded."""
        await self.refresh_instructions()
        return self.instructions.expand(text) if self.instructions is not None else text

    async def list_commands(self) -> list[CommandInfo]:
        await self.refresh_instructions()
        return self.instructions.commands() if self.instructions is not None else []

    # --- requests ------------------------------------------------------------------------

    async def prompt(
        self,
        text: str,
        images: list[ImageParam] | None,
        when_busy: WhenBusy | None,
        context: list[ContextAttachment] | None = None,
    ) -> PromptResult:
        text = await self._expand(text)
        attached = await self._attached(context)
        if busy := self._busy():
            if when_busy in ("steer", "followUp"):
                return PromptResult(queued=self._queue(when_busy, text, images, context, attached))
            raise SessionError(
                "busy",
                f"{busy}: send it with agent/steer or agent/followUp, pass whenBusy, "
                "or wait for agent/settled (agent/compact's answer).",
            )
        message = _user_message(text, images)
        messages = [attached, message] if attached is not None else [message]
        return PromptResult(run_id=self._start(lambda: self.agent.prompt(messages), prompt=True))

    async def enqueue(
        self,
        kind: str,
        text: str,
        images: list[ImageParam] | None,
        context: list[ContextAttachment] | None = None,
    ) -> str:
        """Queue a steering (``steer``) or follow-up message, its command expanded; the item id."""
        text = await self._expand(text)
        return self._queue(kind, text, images, context, await self._attached(context))

    async def _attached(self, context: list[ContextAttachment] | None) -> AgentMessage | None:
        """The ``editorContext`` message of a request's attachments (``None`` without any)."""
        if not context:
            return None
        if self.editor_context is None:
            raise SessionError("invalidParams", "This session cannot take editor context")
        return await self.editor_context.message(context)

    def _queue(
        self,
        kind: str,
        text: str,
        images: list[ImageParam] | None,
        context: list[ContextAttachment] | None = None,
        attached: AgentMessage | None = None,
    ) -> str:
        message = _user_message(text, images)
        item = QueueItem(
            id=_new_id("item"),
            kind="steering" if kind == "steer" else "followUp",
            text=text,
            images=[i.wire() for i in images] if images else None,
            context=[a.wire() for a in context] if context and attached is not None else None,
        )
        queue = self.agent.steering_queue if item.kind == "steering" else self.agent.follow_up_queue
        # an item with editor context is two messages, delivered together
        queue.enqueue(*(attached, message) if attached is not None else (message,), item_id=item.id)
        self._items[item.id] = item
        self._publish_queue()
        return item.id

    def queue(self) -> QueueState:
        return self._queue_state()

    def clear_queue(self, kind: str, item_id: str | None) -> QueueState:
        """Remove queued items (all, one kind, or one item) and return what was removed."""
        removed = QueueState(steering=[], follow_up=[])
        queues = {
            "steering": (self.agent.steering_queue, removed.steering),
            "followUp": (self.agent.follow_up_queue, removed.follow_up),
        }
        found = False
        for name, (queue, out) in queues.items():
            if kind not in ("all", name):
                continue
            for queued in queue.items:
                if queued.id in self._items and item_id in (None, queued.id):
                    queue.remove(queued.id)
                    out.append(self._items.pop(queued.id))
                    found = True
        if item_id is not None and not found:
            raise self._unknown_item(item_id)
        self._publish_queue()
        return removed

    def _find_item(self, item_id: str) -> PendingMessageQueue:
        """The kernel's queue holding a queue item."""
        for queue in (self.agent.steering_queue, self.agent.follow_up_queue):
            if item_id in queue and item_id in self._items:
                return queue
        raise self._unknown_item(item_id)

    def _unknown_item(self, item_id: str) -> SessionError:
        return SessionError("unknownQueueItem", f"No queued item {item_id} in session {self.session_id}")

    async def edit_queue_item(self, item_id: str, text: str, images: list[ImageParam] | None) -> QueueState:
        """Give a queued item new text (its command expanded) and, if given, new images; it stays put."""
        self._find_item(item_id)  # an unknown item is refused before its text is expanded
        item = self._items[item_id]
        kept = images if images is not None else [ImageParam.model_validate(i) for i in item.images or []]
        text = await self._expand(text)
        message = _user_message(text, kept)
        edited = item.model_copy(update={"text": text, "images": [i.wire() for i in kept] or None})
        queue = self._find_item(item_id)  # the loop may have taken it while the text was expanded
        context = queue.item(item_id).messages[:-1]  # the user's message is last, after its context
        queue.replace(item_id, *context, message)
        self._items[item_id] = edited
        self._publish_queue()
        return self._queue_state()

    def move_queue_item(self, item_id: str, index: int) -> QueueState:
        """Move a queued item to ``index`` in its queue (with its context message)."""
        self._find_item(item_id).move(item_id, index)
        self._publish_queue()
        return self._queue_state()

    async def abort(self) -> AbortResult:
        if self._compacting is not None:  # agent/compact: it answers that it was cancelled
            self.compactor.abort()
            await asyncio.shield(self._compacting)
            return AbortResult(aborted=True, queue=self._queue_state())
        if self._moving is not None:  # a rewind's summary: the rewind fails, nothing changed
            moving, controller = self._moving
            controller.abort()
            await asyncio.shield(moving)
            return AbortResult(aborted=True, queue=self._queue_state())
        run = self._run
        if run is None:
            return AbortResult(aborted=False, queue=self._queue_state())
        run.aborted = True
        run.stopped.set()
        self.compactor.abort()
        self.agent.abort()
        await run.outcome()
        return AbortResult(aborted=True, run_id=run.run_id, queue=self._queue_state())

    async def continue_(self) -> str:
        await self.refresh_instructions()
        return self._start(self.agent.continue_)

    async def compact(self, instructions: str | None) -> CompactResult:
        """``agent/compact``: summarise the context now (busy while a run is going, as runs are).

        Prompts queued with ``whenBusy`` meanwhile run once it has succeeded; a compaction
        that failed or was aborted leaves them queued, as a failed run does.
        """
        if busy := self._busy():
            raise SessionError("busy", f"{busy}: abort it or wait for agent/settled, then compact")
        done = self._compacting = asyncio.get_running_loop().create_future()
        try:
            result = await self.compactor.compact_now(instructions)
        except CompactionFailed as error:
            raise SessionError("compactionFailed", str(error)) from error
        finally:
            self._compacting = None
            done.set_result(None)
        if self._can_continue_queued():
            await self.continue_()
        return result

    # --- the tree --------------------------------------------------------------------------

    def get_tree(self) -> TreeResult:
        return tree_view(self.tree, self.workspace.root)

    async def set_label(self, entry_id: str, label: str | None) -> str | None:
        if entry_id not in self.tree:
            raise SessionError("invalidParams", f"Session {self.session_id} has no entry {entry_id!r}")
        label = " ".join(label.split()) if label else None
        await self.writer.append_label(entry_id, label or None)
        return label or None

    async def move(
        self,
        entry_id: str | None,
        *,
        files: bool,
        summarize: bool,
        instructions: str | None,
        force: bool,
        off_branch: bool,
    ) -> RewindResult:
        """``agent/rewind`` (``off_branch=False``: to an entry of the current branch) and
        ``agent/switchBranch``: continue from ``entry_id``, files and summary as asked.

        Checks everything that can refuse the request before anything changes; the summary
        (which can fail or be aborted) comes next, then the marker entry, then the files.
        """
        if busy := self._busy():
            raise SessionError("busy", f"{busy}: abort it or wait for agent/settled, then try again")
        tree, old_leaf = self.tree, self.tree.leaf_id
        self._check_target(entry_id, off_branch)
        plans = []
        if files:
            names = tool_names(tree)
            undo = await self.checkpoints.steps(tree.left_behind(old_leaf, entry_id), names)
            again = (
                await self.checkpoints.steps(tree.left_behind(entry_id, old_leaf), names)
                if off_branch
                else []
            )
            plans = await self._filled(plan_files([s.change for s in undo], [s.change for s in again]))
        conflicts = await find_conflicts(self.workspace, plans)
        problems = whole_renames(conflicts, rename_pairs(plans), self._shown)
        if problems and not force:
            self._refuse(problems, "or files: false to leave all files as they are")
        refused = {p.path for p in problems}
        plans = [plan for plan in plans if plan.path not in refused]
        moving: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        controller = AbortController()
        self._moving = (moving, controller)
        try:
            summary = None
            if summarize:
                summary = await self._branch_summary(old_leaf, entry_id, instructions, controller)
            self.writer.move_leaf(entry_id)
            if summary is not None:
                await self.writer.append_branch_summary(*summary)
            marker = {"fromId": old_leaf, "toId": entry_id, "files": [plan.wire() for plan in plans]}
            await self.writer.append_custom(REWIND, marker, marker)
            done, failed = await apply_plans(self.workspace, plans)
            if plans:
                report = {"done": [p.path for p in done], "failed": [[p.path, p.reason] for p in failed]}
                await self.writer.append_custom(REWIND_DONE, report, report)
        finally:
            self._moving = None
            moving.set_result(None)
        self.load_warnings = []
        self.transcript.reset(self.tree.transcript(self.tree.leaf_id).entries)
        self.agent.state.messages = self.transcript.context()
        self._take_branch_settings()
        if self._can_continue_queued():  # what was queued meanwhile runs, as after agent/compact
            await self.continue_()
        result = RewindResult(
            leaf_id=shown_leaf(self.tree),
            message_count=len(self.transcript),
            reverted=[{"path": self._shown(p.path), "action": p.action} for p in done],
            skipped=[{"path": self._shown(p.path), "reason": p.reason} for p in [*problems, *failed]],
            summary=getattr(summary[0], "summary", None) if summary is not None else None,
        )
        self._publish(BranchMoved(self.session_id, result.leaf_id, result.message_count))
        return result

    def _shown(self, path: str) -> str:
        return display(self.workspace.root, path)

    def _refuse(self, problems: list[FileProblem], otherwise: str) -> NoReturn:
        listed = [{"path": self._shown(p.path), "reason": p.reason} for p in problems]
        raise SessionError(
            "fileConflict",
            "Nothing was changed: these files cannot be put back: "
            + "; ".join(f"{item['path']}: {item['reason']}" for item in listed)
            + f". Send force: true to put back the others and leave these as they are, {otherwise}.",
            {"files": listed},
        )

    async def _filled(self, plans: list[FilePlan]) -> list[FilePlan]:
        """``plans`` with the content of their snapshot targets read (a pruned one stays unread)."""
        targets = await self.checkpoints.filled([plan.target for plan in plans])
        return [dataclasses.replace(plan, target=target) for plan, target in zip(plans, targets, strict=True)]

    # --- changes -------------------------------------------------------------------------

    def _span(self, span: ChangesSpan) -> tuple[str | None, str | None, str | None, list[Node]]:
        """``(runId, fromEntryId, toEntryId, entries)`` of a span of the current branch."""
        branch = self.tree.branch()
        index = {node.id: i for i, node in enumerate(branch)}
        if span.by_entries:
            if span.run_id is not None:
                raise SessionError("invalidParams", "Give runId or fromEntryId/toEntryId, not both")
            for entry_id in (span.from_entry_id, span.to_entry_id):
                if entry_id is not None and entry_id not in index:
                    raise SessionError(
                        "invalidParams",
                        f"Entry {entry_id} is not on session {self.session_id}'s current branch "
                        "(use an id from agent/getTree or the entryIds of agent/getMessages)",
                    )
            start = index[span.from_entry_id] + 1 if span.from_entry_id is not None else 0
            stop = index[span.to_entry_id] + 1 if span.to_entry_id is not None else len(branch)
            to_id = span.to_entry_id or (branch[-1].id if branch else None)
            return None, span.from_entry_id, to_id, branch[start:stop]
        runs = [i for i, node in enumerate(branch) if node.custom_type == RUN and isinstance(node.data, dict)]
        if span.run_id is not None:
            runs = [i for i in runs if branch[i].data.get("runId") == span.run_id]
            if not runs:
                raise SessionError(
                    "invalidParams",
                    f"Session {self.session_id} has no run {span.run_id} on its current branch",
                )
        if not runs:
            return None, None, None, []
        start = runs[-1]
        following = [i for i in (i for i, node in enumerate(branch) if node.custom_type == RUN) if i > start]
        stop = following[0] if following else len(branch)
        return (
            branch[start].data.get("runId"),
            branch[start].id,
            branch[stop - 1].id,
            branch[start + 1 : stop],
        )

    async def _net(self, nodes: list[Node]) -> list[NetChange]:
        """The net change of ``nodes``, every snapshot side read."""
        changes = net_changes(await self.checkpoints.steps(nodes, tool_names(self.tree)))
        read = await self.checkpoints.read([side for c in changes for side in (c.before, c.after)])

        def filled(side: Snapshot | None) -> Snapshot | None:
            return read.get(side.blob, side) if side is not None and side.blob is not None else side

        return [dataclasses.replace(c, before=filled(c.before), after=filled(c.after)) for c in changes]

    async def get_changes(self, span: GetChangesParams) -> ChangesResult:
        """``agent/getChanges``: the net change of a run or of a span of entries, with who made it."""
        run_id, from_id, to_id, nodes = self._span(span)
        files = await describe(await self._net(nodes), self.workspace.root, span.text)
        return ChangesResult(
            run_id=run_id,
            from_entry_id=from_id,
            to_entry_id=to_id,
            files=files,
            checkpoints=self.checkpoints.state,
        )

    async def revert_changes(self, params: RevertChangesParams) -> RevertChangesResult:
        """``agent/revertChanges``: take back files or hunks of a span's net change, and tell the model."""
        if busy := self._busy():
            raise SessionError("busy", f"{busy}: abort it or wait for agent/settled, then try again")
        _, _, _, nodes = self._span(params)
        changes = await self._net(nodes)
        hunks: dict[str, set[int]] = {}
        for ref in params.hunks or []:
            hunks.setdefault(ref.path, set()).add(ref.index)
        try:
            plan = revert_plans(changes, self.workspace.root, params.files, hunks)
        except RevertError as error:
            raise SessionError("invalidParams", str(error)) from None
        plans, taken = plan.plans, plan.taken
        problems = whole_renames(await find_conflicts(self.workspace, plans), plan.renames, self._shown)
        if problems and not params.force:
            self._refuse(problems, "or leave out the files named")
        refused = {p.path for p in problems}
        done, failed = await apply_plans(self.workspace, [p for p in plans if p.path not in refused])
        if done:
            await self._record_revert(done, taken)
        return RevertChangesResult(
            reverted=[
                RevertedChange(path=self._shown(p.path), action=p.action, hunks=taken.get(p.path))
                for p in done
            ],
            skipped=[SkippedFile(path=self._shown(p.path), reason=p.reason) for p in [*problems, *failed]],
        )

    async def _record_revert(self, done: list[FilePlan], taken: dict[str, list[int]]) -> None:
        """What a revert changed, as the user's ``fileChanges``, and a message telling the model."""
        revert_id = _new_id("revert")
        records = tuple(
            FileChange(plan.path, recordable(plan.expected), recordable(plan.target)) for plan in done
        )
        changes = FileChanges(revert_id, records, by="user")
        self._forget_tree()
        await self.writer.append_custom(FILE_CHANGES, changes, changes.wire())
        parts = []
        for plan in done:
            hunk_indexes = taken.get(plan.path)
            if hunk_indexes is None:
                parts.append(f"{self._shown(plan.path)} (the whole file: {plan.action})")
            else:
                parts.append(f"{self._shown(plan.path)}: {hunk_list(hunk_indexes)}")
        text = (
            "The user reverted some of your changes: "
            + "; ".join(parts)
            + ". The files now hold what they held before those changes. Do not redo them unless asked."
        )
        await self._join(
            custom_message(REVERT, text, display=True, details={"files": [p.wire() for p in done]})
        )

    def _take_branch_settings(self) -> None:
        """The model and thinking level of the branch the leaf is now on, as loading the session gives.

        A model no longer available leaves the current one in place (with a warning in the log).
        """
        settings = settings_on(self.tree.branch(), self.writer.start)
        state = self.agent.state
        if settings.model is not None and settings.model != (state.model.provider, state.model.id):
            model = self.models.get_model(*settings.model)
            if model is not None:
                state.model = model
            else:
                logger.warning(
                    "session %s: the branch's model %s/%s is not available; keeping %s/%s",
                    self.session_id,
                    *settings.model,
                    state.model.provider,
                    state.model.id,
                )
        if settings.thinking_level in THINKING_LEVELS:
            state.thinking_level = settings.thinking_level  # type: ignore[assignment]

    def _check_target(self, entry_id: str | None, off_branch: bool) -> None:
        if entry_id is None:
            return
        if entry_id not in self.tree:
            raise SessionError(
                "invalidParams",
                f"Session {self.session_id} has no entry {entry_id!r}: use an id from agent/getTree "
                "or the entryIds of agent/getMessages",
            )
        if not off_branch and all(node.id != entry_id for node in self.tree.branch()):
            raise SessionError(
                "invalidParams",
                f"Entry {entry_id} is not on the session's current branch: agent/rewind goes back along the "
                "branch; use agent/switchBranch to go to another one",
            )

    async def _branch_summary(
        self,
        old_leaf: str | None,
        entry_id: str | None,
        instructions: str | None,
        controller: AbortController,
    ) -> tuple[AgentMessage, BranchSummary] | None:
        """The ``branchSummary`` message (and its entry's details) of the branch left behind."""
        left = self.tree.left_behind(old_leaf, entry_id)
        if not any(node.message is not None for node in left):
            return None  # nothing is left behind (the position is already there)
        try:
            result = await summarize_branch(left, Summarizer.of(self.agent, controller.signal), instructions)
        except (SummaryError, SummaryAborted) as error:
            raise SessionError("summaryFailed", f"{error}; nothing was changed") from error
        if controller.signal.aborted:
            raise SessionError("summaryFailed", "Branch summarization was aborted; nothing was changed")
        return branch_summary_message(result.text, old_leaf or "root"), result.info

    # --- state ---------------------------------------------------------------------------

    def model_ref(self) -> ModelRef:
        model = self.agent.state.model
        return ModelRef(provider=model.provider, id=model.id)

    def state(self) -> StateResult:
        state = self.agent.state
        return StateResult(
            session_id=self.session_id,
            cwd=self.cwd,
            model=self.model_ref(),
            thinking_level=state.thinking_level,
            system_prompt=state.system_prompt,
            is_running=self._run is not None,
            is_compacting=self.compactor.running,
            run_id=self.run_id,
            steering_mode=self.agent.steering_mode,
            follow_up_mode=self.agent.follow_up_mode,
            message_count=len(self.transcript),
            pending_tool_calls=sorted(state.pending_tool_calls),
            error_message=state.error_message,
            queue=self._queue_state(),
            context_files=self.instructions.context_files() if self.instructions is not None else [],
            project_trust=self.instructions.trust_status() if self.instructions is not None else "trusted",
            resources=self.instructions.found() if self.instructions is not None else [],
            permission_preset=self.permissions.preset,
            permission_presets=PRESET_INFOS,
            checkpoints=self.checkpoints.wire_state(),
            sandbox=self.sandbox.state() if self.sandbox is not None else None,
            budget=self.budget.state(),
        )

    def messages(self, since: int) -> MessagesResult:
        """The whole history (not only the context), so ``since`` cursors survive compactions."""
        entries = self.transcript.entries[since:]
        return MessagesResult(
            messages=[to_wire(e.message) for e in entries],
            total=len(self.transcript),
            entry_ids=[e.id for e in entries],
            seq=self.reflected_seq(),
        )

    @property
    def seq(self) -> int:
        """The number of the session's last event."""
        return self._seq

    def reflected_seq(self) -> int:
        """The last event that :meth:`messages` reflects: while a run goes on, its last ``message_end``
        or its ``agent_start`` (what follows, a tool call in progress or a message being streamed, is
        not in the transcript yet); else the last event. Replaying the events after it completes the
        list."""
        return self._message_seq if self._run is not None else self._seq

    async def set_model(self, model: Model) -> None:
        self.agent.state.model = model
        await self.writer.append_model_change(model.provider, model.id)

    async def select_model(self, provider: str, model_id: str) -> None:
        """The model a front names: one of the session's (``unknownModel``, or ``noModel`` for a
        built-in model whose provider has no API key, otherwise)."""
        await self.set_model(resolve_model(self.models, provider, model_id))

    def available_thinking_levels(self) -> list[str]:
        """The levels the current model supports (Pi's ``getAvailableThinkingLevels``)."""
        return supported_thinking_levels(self.agent.state.model)

    def thinking_level_in_effect(self) -> str:
        """The session's level among the current model's: itself, else the nearest higher one the model
        has, else the nearest lower (pi-ai's ``clampThinkingLevel``), for a front to show as current."""
        return clamp_thinking_level(self.agent.state.model, self.agent.state.thinking_level)

    async def set_thinking_level(self, level: str) -> None:
        """One of ``THINKING_LEVELS``, kept as given (a provider adapts a level its model lacks, as pi-ai's
        do); the fronts check it (``agent/setThinkingLevel``'s params, ACP's option values)."""
        self.agent.state.thinking_level = level  # type: ignore[assignment]
        await self.writer.append_thinking_level_change(level)

    def set_queue_modes(self, steering: str | None, follow_up: str | None) -> None:
        if steering is not None:
            self.agent.steering_mode = steering  # type: ignore[assignment]
        if follow_up is not None:
            self.agent.follow_up_mode = follow_up  # type: ignore[assignment]

    def stats(self) -> StatsResult:
        """Cumulative tokens and cost (summaries included), and the current context size apart.

        After a compaction, until a response reports its size, the context's size is estimated.
        """
        usage = self.transcript.usage
        tokens = TokenStats(
            input=usage.input,
            output=usage.output,
            cache_read=usage.cache_read,
            cache_write=usage.cache_write,
            total=usage.total_tokens,
        )
        last, compaction = usage.last_sized, self.transcript.latest_compaction
        if last is None:
            context_tokens = 0
        elif compaction is not None and last < compaction:
            context_tokens = estimate_messages_tokens(self.agent.state.messages)
        else:
            context_tokens = self.transcript.entries[last].message.usage.total_tokens
        window = self.agent.state.model.context_window
        return StatsResult(
            tokens=tokens,
            cost=usage.cost,
            context=ContextStats(
                tokens=context_tokens,
                context_window=window,
                percent=round(100 * context_tokens / window, 2) if window else None,
            ),
        )

    async def close(self) -> None:
        """Abort any run and any command of the user's, end the processes they left and delete their
        output files, close the file."""
        await self.abort()
        await self.user_bash.close()
        if self.processes is not None:
            await self.processes.close()
        await self.outputs.close()
        if self.sandbox is not None:
            await asyncio.to_thread(self.sandbox.close)
        self.writer.close()
