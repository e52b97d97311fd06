"""``AgentSession``: one conversation, its agent, its runs, its queue items and its file.

Product policy on top of the kernel lives here, not in the server: run ids,
queued continuations (a run lasts until nothing queued is left to do), queue
items with ids that clients can show and remove, persistence of every finished
message, and the shape of events on the wire (``message_update`` without the
cumulative partial message).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentls.agent import (
    Agent,
    AgentBusyError,
    AgentEvent,
    AgentState,
    AgentTool,
    BeforeToolCall,
    ContinueError,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
)
from agentls.ai import (
    AbortSignal,
    AgentMessage,
    AssistantMessage,
    ImageContent,
    Model,
    Models,
    TextContent,
    UserMessage,
    to_wire,
)
from agentls.protocol import (
    AbortResult,
    ContextStats,
    ImageParam,
    MessagesResult,
    ModelRef,
    PromptResult,
    QueueItem,
    QueueState,
    StateResult,
    StatsResult,
    TokenStats,
    WhenBusy,
)
from agentls.session.errors import SessionError
from agentls.session.store import SessionWriter
from agentls.tools.processes import ProcessTracker

logger = logging.getLogger(__name__)

Notify = Callable[[str, dict[str, Any]], None]
"""Sends a server -> client notification: ``notify(method, params)``."""

DEFAULT_SYSTEM_PROMPT = (
    "You are agentls, a coding agent working inside the user's editor. "
    "The workspace root is {cwd}. Be concise, and use the tools you are given."
)


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _user_message(text: str, images: list[ImageParam] | None) -> UserMessage:
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    content.extend(ImageContent(data=i.data, mime_type=i.mime_type) for i in images or [])
    return UserMessage(content=content)


def event_to_wire(event: AgentEvent) -> dict[str, Any]:
    """An agent event in Pi's shape, less what a client can rebuild.

    ``message_update`` drops the cumulative partial message and the ``partial`` of
    its assistant message event: the delta and ``contentIndex`` are enough.
    """
    if isinstance(event, MessageUpdateEvent):
        update = to_wire(event.assistant_message_event)
        update.pop("partial", None)
        return {"type": "message_update", "assistantMessageEvent": update}
    return to_wire(event)


@dataclass
class _QueuedItem:
    item: QueueItem
    message: AgentMessage


@dataclass
class _Run:
    run_id: str
    aborted: bool = False
    done: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


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
        messages: list[AgentMessage],
        tools: list[AgentTool],
        writer: SessionWriter | None,
        notify: Notify,
        before_tool_call: BeforeToolCall | None = None,
        processes: ProcessTracker | None = None,
    ) -> None:
        self.session_id = session_id
        self.processes = processes
        """What the session's ``bash`` calls started: ended when each run ends, before ``agent/settled``."""
        self.cwd = cwd
        self.models = models
        self.writer = writer
        self._notify = notify
        self._seq = 0
        self._run: _Run | None = None
        self._items: dict[int, _QueuedItem] = {}
        self._last_queue: dict[str, Any] | None = None
        self.agent = Agent(
            initial_state=AgentState(
                system_prompt=system_prompt,
                model=model,
                thinking_level=thinking_level,  # type: ignore[arg-type]
                messages=messages,
                tools=tools,
            ),
            stream_fn=models.stream_simple,
            session_id=session_id,
            before_tool_call=before_tool_call,
        )
        self.agent.subscribe(self._on_event)

    # --- events --------------------------------------------------------------------------

    async def _on_event(self, event: AgentEvent, signal: AbortSignal) -> None:
        if isinstance(event, MessageEndEvent) and self.writer is not None:
            await self.writer.append_message(event.message)
        run_id = self._run.run_id if self._run else ""
        self._seq += 1
        self._notify(
            "agent/event",
            {"sessionId": self.session_id, "runId": run_id, "seq": self._seq, "event": event_to_wire(event)},
        )
        if isinstance(event, MessageStartEvent) and id(event.message) in self._items:
            self._items.pop(id(event.message))
            self._publish_queue()

    def _queue_state(self) -> QueueState:
        def items(messages: tuple[AgentMessage, ...]) -> list[QueueItem]:
            return [self._items[id(m)].item for m in messages if id(m) in self._items]

        return QueueState(
            steering=items(self.agent.queued_steering), follow_up=items(self.agent.queued_follow_ups)
        )

    def _publish_queue(self) -> None:
        state = self._queue_state().wire()
        if state != self._last_queue:
            self._last_queue = state
            self._notify("agent/queue", {"sessionId": self.session_id, **state})

    # --- runs ----------------------------------------------------------------------------

    @property
    def run_id(self) -> str | None:
        return self._run.run_id if self._run else None

    def _start(self, start: Callable[[], asyncio.Task[None]]) -> str:
        if self._run is not None:
            raise SessionError("busy", f"Session {self.session_id} is running {self._run.run_id}")
        run = _Run(_new_id("run"))
        self._run = run
        try:
            task = start()
        except AgentBusyError as error:
            self._run = None
            raise SessionError("busy", str(error)) from error
        except ContinueError as error:
            self._run = None
            raise SessionError("cannotContinue", str(error)) from error
        self._publish_queue()
        asyncio.get_running_loop().create_task(self._drive(run, task))
        return run.run_id

    async def _drive(self, run: _Run, task: asyncio.Task[None]) -> None:
        """Await the kernel run, then run what is still queued, then report the run as settled."""
        failure: str | None = None
        try:
            await task
            while not run.aborted and self._can_continue_queued():
                await self.agent.continue_()
        except Exception as error:  # a listener or the store failed: the run ends, the server lives
            logger.exception("run %s of session %s failed", run.run_id, self.session_id)
            failure = str(error)
        finally:
            if self.processes is not None:  # while the run still holds the session: no new call can start
                await self.processes.terminate_all()
            self._run = None
            last = next(
                (m for m in reversed(self.agent.state.messages) if isinstance(m, AssistantMessage)), None
            )
            stop_reason = "error" if failure else (last.stop_reason if last else "stop")
            error_message = failure or (last.error_message if last else None)
            settled: dict[str, Any] = {
                "sessionId": self.session_id,
                "runId": run.run_id,
                "stopReason": stop_reason,
            }
            if error_message and stop_reason in ("error", "aborted"):
                settled["errorMessage"] = error_message
            self._publish_queue()
            self._notify("agent/settled", settled)
            if not run.done.done():
                run.done.set_result(None)

    def _can_continue_queued(self) -> bool:
        if not self.agent.has_queued_messages():
            return False
        last = self.agent.state.messages[-1] if self.agent.state.messages else None
        return not (isinstance(last, AssistantMessage) and last.stop_reason in ("error", "aborted"))

    async def wait_for_settled(self) -> None:
        if self._run is not None:
            await asyncio.shield(self._run.done)

    # --- requests ------------------------------------------------------------------------

    def prompt(self, text: str, images: list[ImageParam] | None, when_busy: WhenBusy | None) -> PromptResult:
        if self._run is not None:
            if when_busy in ("steer", "followUp"):
                return PromptResult(queued=self.enqueue(when_busy, text, images))
            raise SessionError(
                "busy",
                f"Session {self.session_id} is running {self._run.run_id}: send it with agent/steer or "
                "agent/followUp, pass whenBusy, or wait for agent/settled.",
            )
        message = _user_message(text, images)
        return PromptResult(run_id=self._start(lambda: self.agent.prompt(message)))

    def enqueue(self, kind: str, text: str, images: list[ImageParam] | None) -> str:
        message = _user_message(text, images)
        item = QueueItem(
            id=_new_id("item"),
            kind="steering" if kind == "steer" else "followUp",
            text=text,
            images=[i.wire() for i in images] if images else None,
        )
        self._items[id(message)] = _QueuedItem(item, message)
        if item.kind == "steering":
            self.agent.steer(message)
        else:
            self.agent.follow_up(message)
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
            kept = []
            for message in queue.messages:
                queued = self._items.get(id(message))
                if queued is not None and item_id in (None, queued.item.id):
                    out.append(queued.item)
                    self._items.pop(id(message))
                    found = True
                else:
                    kept.append(message)
            queue.messages = kept
        if item_id is not None and not found:
            raise SessionError("unknownQueueItem", f"No queued item {item_id} in session {self.session_id}")
        self._publish_queue()
        return removed

    async def abort(self) -> AbortResult:
        run = self._run
        if run is None:
            return AbortResult(aborted=False, queue=self._queue_state())
        run.aborted = True
        self.agent.abort()
        await asyncio.shield(run.done)
        return AbortResult(aborted=True, run_id=run.run_id, queue=self._queue_state())

    def continue_(self) -> str:
        return self._start(self.agent.continue_)

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
            run_id=self.run_id,
            steering_mode=self.agent.steering_mode,
            follow_up_mode=self.agent.follow_up_mode,
            message_count=len(state.messages),
            pending_tool_calls=sorted(state.pending_tool_calls),
            error_message=state.error_message,
            queue=self._queue_state(),
        )

    def messages(self, since: int) -> MessagesResult:
        messages = self.agent.state.messages
        return MessagesResult(messages=[to_wire(m) for m in messages[since:]], total=len(messages))

    async def set_model(self, model: Model) -> None:
        self.agent.state.model = model
        if self.writer is not None:
            await self.writer.append_model_change(model.provider, model.id)

    async def set_thinking_level(self, level: str) -> None:
        self.agent.state.thinking_level = level  # type: ignore[assignment]
        if self.writer is not None:
            await self.writer.append_thinking_level_change(level)

    def set_queue_modes(self, steering: str | None, follow_up: str | None) -> None:
        if steering is not None:
            self.agent.steering_mode = steering  # type: ignore[assignment]
        if follow_up is not None:
            self.agent.follow_up_mode = follow_up  # type: ignore[assignment]

    def stats(self) -> StatsResult:
        """Cumulative tokens and cost, and the current context size (reported separately)."""
        assistants = [m for m in self.agent.state.messages if isinstance(m, AssistantMessage)]
        tokens = TokenStats(
            input=sum(m.usage.input for m in assistants),
            output=sum(m.usage.output for m in assistants),
            cache_read=sum(m.usage.cache_read for m in assistants),
            cache_write=sum(m.usage.cache_write for m in assistants),
            total=sum(m.usage.total_tokens for m in assistants),
        )
        last = next((m for m in reversed(assistants) if m.usage.total_tokens), None)
        context_tokens = last.usage.total_tokens if last else 0
        window = self.agent.state.model.context_window
        return StatsResult(
            tokens=tokens,
            cost=sum(m.usage.cost.total for m in assistants),
            context=ContextStats(
                tokens=context_tokens,
                context_window=window,
                percent=round(100 * context_tokens / window, 2) if window else None,
            ),
        )

    async def close(self) -> None:
        """Abort any run and close the session file."""
        await self.abort()
        if self.writer is not None:
            self.writer.close()
