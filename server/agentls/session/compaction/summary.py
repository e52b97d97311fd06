"""The summary request: Pi 0.85.0's prompts and ``generateSummary``, word for word.

One request to the session's own model (through the session's stream function, so the
provider's settings, retries and the faux script apply), with Pi's summariser system
prompt and one user message: the conversation as text in ``<conversation>``, the
previous summary in ``<previous-summary>`` when there is one (the update prompt then
asks to merge, so that repeated compactions keep what the first one knew), and the
structured format to answer in. A response that failed, hit its token cap (a partial
summary must not become the session's memory) or called a tool is no summary.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass

from agentls.agent.agent import Agent
from agentls.agent.types import ConvertToLlm, maybe_await
from agentls.ai import AbortSignal, StreamFn
from agentls.ai.types import (
    AgentMessage,
    Context,
    Model,
    ModelThinkingLevel,
    StreamOptions,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
)
from agentls.session.compaction.serialize import content_text, serialize_conversation

SUMMARIZATION_SYSTEM_PROMPT = """You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant, then produce a structured summary following the exact format specified.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary."""  # noqa: E501

SUMMARIZATION_PROMPT = """The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.

Use this EXACT format:

## Goal
[What is the user trying to accomplish? Can be multiple items if the session covers different tasks.]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned by user]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Current work]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [Ordered list of what should happen next]

## Critical Context
- [Any data, examples, or references needed to continue]
- [Or "(none)" if not applicable]

Keep each section concise. Preserve exact file paths, function names, and error messages."""  # noqa: E501

UPDATE_SUMMARIZATION_INSTRUCTIONS = """Update the existing structured summary with new information. RULES:
- PRESERVE all existing information from the previous summary
- ADD new progress, decisions, and context from the new messages
- UPDATE the Progress section: move items from "In Progress" to "Done" when completed
- UPDATE "Next Steps" based on what was accomplished
- PRESERVE exact file paths, function names, and error messages
- If something is no longer relevant, you may remove it

Use this EXACT format:

## Goal
[Preserve existing goals, add new ones if the task expanded]

## Constraints & Preferences
- [Preserve existing, add new ones discovered]

## Progress
### Done
- [x] [Include previously done items AND newly completed items]

### In Progress
- [ ] [Current work - update based on progress]

### Blocked
- [Current blockers - remove if resolved]

## Key Decisions
- **[Decision]**: [Brief rationale] (preserve all previous, add new)

## Next Steps
1. [Update based on current state]

## Critical Context
- [Preserve important context, add new if needed]

Keep each section concise. Preserve exact file paths, function names, and error messages."""

UPDATE_SUMMARIZATION_PROMPT = (
    "The messages above are NEW conversation messages to incorporate into the existing summary "
    "provided in <previous-summary> tags.\n\n" + UPDATE_SUMMARIZATION_INSTRUCTIONS
)

TURN_PREFIX_SUMMARIZATION_PROMPT = """This is the PREFIX of a turn that was too large to keep. The SUFFIX (recent work) is retained.

Summarize the prefix to provide context for the retained suffix:

## Original Request
[What did the user ask for in this turn?]

## Early Progress
- [Key decisions and work done in the prefix]

## Context for Suffix
- [Information needed to understand the retained recent work]

Be concise. Focus on what's needed to understand the kept suffix."""  # noqa: E501


class SummaryError(Exception):
    """No summary could be made; the message says why (Pi's wording, ``Summarization failed: ...``)."""


class SummaryAborted(Exception):
    """The summary request was aborted."""


@dataclass(frozen=True)
class Summary:
    text: str
    usage: Usage


@dataclass(frozen=True)
class Summarizer:
    """How a session asks its model for summaries: the model, stream function, conversion and level."""

    model: Model
    stream_fn: StreamFn
    convert_to_llm: ConvertToLlm
    thinking_level: ModelThinkingLevel
    signal: AbortSignal | None

    @classmethod
    def of(cls, agent: Agent, signal: AbortSignal) -> Summarizer:
        """The summarizer of an agent's current model and thinking level."""
        state = agent.state
        return cls(state.model, agent.stream_fn, agent.convert_to_llm, state.thinking_level, signal)

    async def summarize(
        self,
        messages: list[AgentMessage],
        reserve_tokens: int,
        *,
        instructions: str | None = None,
        previous_summary: str | None = None,
    ) -> Summary:
        """Pi's ``generateSummaryWithUsage``: a structured summary of ``messages``."""
        prompt = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
        if instructions:
            prompt = f"{prompt}\n\nAdditional focus: {instructions}"
        text = f"<conversation>\n{await self._conversation(messages)}\n</conversation>\n\n"
        if previous_summary:
            text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
        return await self._request(text + prompt, math.floor(0.8 * reserve_tokens), "Summarization")

    async def summarize_turn_prefix(self, messages: list[AgentMessage], reserve_tokens: int) -> Summary:
        """Pi's ``generateTurnPrefixSummary``: the start of a turn too large to keep whole."""
        text = f"<conversation>\n{await self._conversation(messages)}\n</conversation>\n\n"
        return await self._request(
            text + TURN_PREFIX_SUMMARIZATION_PROMPT,
            math.floor(0.5 * reserve_tokens),
            "Turn prefix summarization",
        )

    async def summarize_with(
        self, messages: list[AgentMessage], instructions: str, max_tokens: int, label: str
    ) -> Summary:
        """``messages`` as ``<conversation>`` text followed by ``instructions`` (Pi's branch summary)."""
        text = f"<conversation>\n{await self._conversation(messages)}\n</conversation>\n\n"
        return await self._request(text + instructions, max_tokens, label)

    async def _conversation(self, messages: list[AgentMessage]) -> str:
        return serialize_conversation(await maybe_await(self.convert_to_llm(messages)))

    async def _request(self, prompt_text: str, budget: int, label: str) -> Summary:
        model = self.model
        options = StreamOptions(
            max_tokens=min(budget, model.max_tokens) if model.max_tokens > 0 else budget,
            signal=self.signal,
            # a one-off prompt: a fresh routing id, and no prompt-cache writes (as Pi)
            session_id=uuid.uuid4().hex,
            cache_retention="none",
            reasoning=self.thinking_level if model.reasoning and self.thinking_level != "off" else None,  # type: ignore[arg-type]
        )
        context = Context(
            system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
            messages=[UserMessage(content=[TextContent(text=prompt_text)])],
        )
        try:
            response = await (await maybe_await(self.stream_fn(model, context, options))).result()
        except Exception as error:  # a stream function that raises instead of reporting the failure
            raise SummaryError(f"{label} failed: {error}") from error
        if response.stop_reason == "aborted" or (self.signal is not None and self.signal.aborted):
            raise SummaryAborted(f"{label} was aborted")
        if response.stop_reason == "error":
            raise SummaryError(f"{label} failed: {response.error_message or 'Unknown error'}")
        if response.stop_reason == "length":
            raise SummaryError(f"{label} failed: generation hit the token cap and the summary is incomplete")
        if any(isinstance(block, ToolCall) for block in response.content):
            raise SummaryError(f"{label} attempted to call a tool")
        return Summary(content_text(response.content), response.usage)  # type: ignore[arg-type]
