"""When a session compacts and what that changes: the compaction part of Pi 0.85.0's ``AgentSession``.

Pi checks the context's size in three places, and so does :class:`Compactor`:

- between the turns of a run, once a tool batch's results are in and before the next
  model request (:meth:`Compactor.before_next_turn`, from the kernel's
  ``prepare_next_turn`` hook): the run goes on with the summary and the kept messages;
- before a new prompt is sent (:meth:`Compactor.before_prompt`, on the last response);
- after each kernel run (:meth:`Compactor.after_run`), which is also where a response
  that failed because its context was too large is answered: the failed response leaves
  the context, the session compacts, and the request is made again, once.

A compaction changes nothing until its summary is there: then the ``compaction`` entry
is written, the summary joins the transcript and the agent's context becomes the
summary and the kept messages. An abort or a failed summary leaves the session as it
was; :class:`~agentls.session.events.CompactionStarted` and ``CompactionEnded`` events say what
happened.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from agentls.agent import Agent, AgentContext, AgentEvent, MessageEndEvent, MessageStartEvent
from agentls.ai import AbortController, AbortSignal, AgentMessage, AssistantMessage
from agentls.protocol import CompactionReason, CompactionSettings, CompactResult
from agentls.session.compaction.compact import CompactionResult, Preparation, compact, prepare_compaction
from agentls.session.compaction.overflow import is_context_overflow, is_recoverable_length
from agentls.session.compaction.summary import Summarizer, SummaryAborted, SummaryError
from agentls.session.compaction.tokens import (
    context_tokens,
    estimate_context_tokens,
    estimate_messages_tokens,
    should_compact,
)
from agentls.session.events import CompactionEnded, CompactionStarted, SessionListener
from agentls.session.history.store import SessionStoreError, SessionWriter
from agentls.session.history.transcript import Transcript, TranscriptEntry, new_entry_id
from agentls.session.messages import compaction_summary_message

OVERFLOW_RETRY_FAILED = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
)
LENGTH_RETRY_FAILED = "Truncated response recovery failed after one compact-and-retry attempt."


class CompactionFailed(Exception):
    """``agent/compact`` could not compact; the message says why (Pi's wording)."""


class Compactor:
    """Compacts one session's context, automatically or on request."""

    def __init__(
        self,
        *,
        session_id: str,
        agent: Agent,
        transcript: Transcript,
        settings: CompactionSettings,
        writer: SessionWriter | None,
        emit: SessionListener,
        run_id: Callable[[], str | None],
        announce: Callable[[AgentMessage], Awaitable[None]],
    ) -> None:
        self.session_id = session_id
        self.settings = settings
        self._agent = agent
        self._transcript = transcript
        self._writer = writer
        self._emit = emit
        self._run_id = run_id
        self._announce = announce
        """Sends the summary's ``message_start`` and ``message_end`` events, as for any message."""
        self._controller: AbortController | None = None
        self._last_assistant: AssistantMessage | None = None
        self._overflow_retried = False
        """Pi's ``_overflowRecoveryAttempted``: a failed request is compacted and sent again once."""

    @property
    def running(self) -> bool:
        return self._controller is not None

    def abort(self) -> None:
        """Abort the compaction under way, if any: the session stays as it was."""
        if self._controller is not None:
            self._controller.abort()

    def observe(self, event: AgentEvent) -> None:
        """Follow the kernel's events: the last response of a run, and when the overflow retry is spent."""
        if isinstance(event, MessageStartEvent) and event.message.role == "user":
            self._overflow_retried = False
        elif isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            self._last_assistant = event.message
            if event.message.stop_reason not in ("error", "length"):
                self._overflow_retried = False

    # --- the three checks ------------------------------------------------------------------

    async def before_next_turn(self, context: AgentContext, signal: AbortSignal | None) -> AgentContext:
        """Pi's ``_compactBeforeNextAssistantResponse``: compact between turns when over the threshold.

        ``signal`` is the run's: once the run is aborted there is no next turn to compact for.
        """
        window = self._agent.state.model.context_window
        if not self.settings.enabled or window <= 0 or (signal is not None and signal.aborted):
            return context
        tokens = estimate_context_tokens(context.messages).tokens
        if not should_compact(tokens, window, self.settings.reserve_tokens):
            return context
        await self._auto("threshold", will_retry=False)
        return dataclasses.replace(context, messages=list(self._agent.state.messages))

    async def before_prompt(self) -> None:
        """Pi's check before a prompt is sent, on the last response (an aborted one too)."""
        messages = self._agent.state.messages
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        if last is not None:
            await self._check(last, skip_aborted=False)

    async def after_run(self) -> bool:
        """Pi's check after a kernel run; whether the session should continue (a retry, or what is queued)."""
        message, self._last_assistant = self._last_assistant, None
        return message is not None and await self._check(message)

    async def _check(self, message: AssistantMessage, *, skip_aborted: bool = True) -> bool:
        """Pi's ``_checkCompaction`` of the response ``message``; whether to continue the session."""
        settings, model = self.settings, self._agent.state.model
        if not settings.enabled or (skip_aborted and message.stop_reason == "aborted"):
            return False
        if self._transcript.is_before_latest_compaction(message):  # its size is the old context's
            return False
        # an error from another model (a smaller window, before a setModel) says nothing of this one
        same_model = message.provider == model.provider and message.model == model.id
        overflow = same_model and is_context_overflow(message, model.context_window)
        if overflow or (same_model and is_recoverable_length(message, model.max_tokens)):
            return await self._recover(message, overflow)
        tokens = context_tokens(message.usage)
        if message.stop_reason == "error" or tokens == 0:
            messages = self._agent.state.messages
            estimate = estimate_context_tokens(messages)
            if estimate.last_usage_index is not None and self._transcript.is_before_latest_compaction(
                messages[estimate.last_usage_index]
            ):
                return False
            tokens = estimate.tokens
        if should_compact(tokens, model.context_window, settings.reserve_tokens):
            return await self._auto("threshold", will_retry=False)
        return False

    async def _recover(self, message: AssistantMessage, overflow: bool) -> bool:
        """A response the context was too large for: compact, then (unless it completed) ask again, once."""
        if message.stop_reason == "stop":  # it completed: nothing to ask again
            return await self._auto("overflow", will_retry=False)
        if self._overflow_retried:
            self._end(
                "overflow",
                estimate_context_tokens(self._agent.state.messages).tokens,
                error_message=OVERFLOW_RETRY_FAILED if overflow else LENGTH_RETRY_FAILED,
            )
            return False
        self._overflow_retried = True
        self._drop_failed_response()  # it stays in the transcript; the retry must not see it
        return await self._auto("overflow", will_retry=True)

    def _drop_failed_response(self) -> None:
        messages = self._agent.state.messages
        if messages and isinstance(messages[-1], AssistantMessage):
            self._agent.state.messages = messages[:-1]

    # --- compacting ------------------------------------------------------------------------

    async def _auto(self, reason: CompactionReason, *, will_retry: bool) -> bool:
        """Pi's ``_runAutoCompaction``; whether the session should continue."""
        preparation = prepare_compaction(self._transcript, self.settings.keep_recent_tokens)
        if preparation is None:
            return False
        self._start(reason, preparation.tokens_before)
        try:
            result, tokens_after = await self._compact(preparation, None)
        except SummaryAborted:
            self._end(reason, preparation.tokens_before, aborted=True)
            return False
        except (SummaryError, SessionStoreError) as error:
            failed = "Context overflow recovery failed" if reason == "overflow" else "Auto-compaction failed"
            self._end(reason, preparation.tokens_before, error_message=f"{failed}: {error}")
            return False
        self._end(reason, result.tokens_before, result=result, tokens_after=tokens_after, retry=will_retry)
        if will_retry:
            # the kept messages can include the failed response again: the retry continues from before it
            last = self._agent.state.messages[-1] if self._agent.state.messages else None
            if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "length"):
                self._drop_failed_response()
            return True
        return self._agent.has_queued_messages()

    async def compact_now(self, instructions: str | None) -> CompactResult:
        """``agent/compact`` (Pi's ``compact``); raises :class:`CompactionFailed` saying why it did not."""
        preparation = prepare_compaction(self._transcript, self.settings.keep_recent_tokens)
        tokens_before = (
            preparation.tokens_before
            if preparation is not None
            else estimate_context_tokens(self._agent.state.messages).tokens
        )
        self._start("manual", tokens_before)
        try:
            if preparation is None:
                entries = self._transcript.entries
                compacted = bool(entries) and entries[-1].compaction is not None
                raise CompactionFailed(
                    "Already compacted" if compacted else "Nothing to compact (session too small)"
                )
            result, tokens_after = await self._compact(preparation, instructions)
        except SummaryAborted:
            self._end("manual", tokens_before, aborted=True)
            raise CompactionFailed("Compaction cancelled") from None
        except (CompactionFailed, SummaryError, SessionStoreError) as error:
            self._end("manual", tokens_before, error_message=f"Compaction failed: {error}")
            raise CompactionFailed(str(error)) from error
        self._end("manual", result.tokens_before, result=result, tokens_after=tokens_after)
        return CompactResult(
            summary=result.summary,
            first_kept_entry_id=result.first_kept_entry_id,
            tokens_before=result.tokens_before,
            tokens_after=tokens_after,
        )

    async def _compact(
        self, preparation: Preparation, instructions: str | None
    ) -> tuple[CompactionResult, int]:
        """Summarise, then (unless aborted meanwhile) apply; the result and the estimated size after."""
        controller = self._controller = AbortController()
        try:
            summarizer = Summarizer.of(self._agent, controller.signal)
            result = await compact(preparation, summarizer, self.settings.reserve_tokens, instructions)
            if controller.signal.aborted:
                raise SummaryAborted("Compaction cancelled")
            return result, await self._apply(result)
        finally:
            self._controller = None

    async def _apply(self, result: CompactionResult) -> int:
        """Write the compaction, then put it in the transcript and the context; the context's estimated size.

        Nothing changes in memory unless the entry is in the file.
        """
        summary = compaction_summary_message(result.summary, result.tokens_before)
        entry_id = (
            await self._writer.append_compaction(summary, result.compaction)
            if self._writer is not None
            else new_entry_id()
        )
        self._transcript.append(TranscriptEntry(entry_id, summary, result.compaction))
        context = self._transcript.context()
        self._agent.state.messages = context
        await self._announce(summary)
        return estimate_messages_tokens(context)

    # --- events ----------------------------------------------------------------------------

    def _run_of(self, reason: CompactionReason) -> str | None:
        return self._run_id() if reason != "manual" else None

    def _start(self, reason: CompactionReason, tokens_before: int) -> None:
        self._emit(CompactionStarted(self.session_id, self._run_of(reason), reason, tokens_before))

    def _end(
        self,
        reason: CompactionReason,
        tokens_before: int,
        *,
        result: CompactionResult | None = None,
        tokens_after: int | None = None,
        retry: bool | None = None,
        aborted: bool | None = None,
        error_message: str | None = None,
    ) -> None:
        self._emit(
            CompactionEnded(
                self.session_id,
                self._run_of(reason),
                reason,
                tokens_before,
                tokens_after=tokens_after,
                summary=result.summary if result else None,
                first_kept_entry_id=result.first_kept_entry_id if result else None,
                will_retry=retry if result and reason == "overflow" else None,
                aborted=aborted,
                error_message=error_message,
            )
        )
