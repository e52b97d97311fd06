"""The coding agent's own message roles and what the model sees of them (Pi's ``core/messages.js``).

Besides user, assistant and tool-result messages, a coding session's transcript holds:

- ``bashExecution``: a command the user ran (``agent/bash``, Pi's ``!cmd``; ``!!cmd`` sets
  ``excludeFromContext``, and the model never sees it);
- ``custom``: content an application adds, with a ``customType``;
- ``branchSummary`` and ``compactionSummary``: what replaced part of the conversation.

In the transcript they are plain :class:`~agentls.ai.CustomMessage` objects (an application
role, whose fields the kernel carries untouched), whether made here or read back from a
session file, where ``agentls.ai`` cannot know the session's roles. The classes below are
their typed form: the constructors build a message through them, and :func:`as_coding_message`
reads one. :func:`convert_to_llm`, the session agent's ``convert_to_llm`` hook, turns each into
the user message Pi's ``convertToLlm`` makes of it, text for text.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import Field, ValidationError

from agentls.ai import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    Message,
    TextContent,
    ToolResultMessage,
    UserMessage,
    now_ms,
    to_wire,
)
from agentls.ai.types import UserContent, WireModel

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"


class BashExecutionMessage(WireModel):
    """``{role: "bashExecution", command, output, exitCode, cancelled, truncated, fullOutputPath?,
    excludeFromContext?, timestamp}``: a command the user ran and the end of its output."""

    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str
    exit_code: int | None = None
    """``null`` when the command was cancelled."""
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    """The whole output, when ``output`` is only its end."""
    exclude_from_context: bool | None = None
    """Set by ``!!cmd``: kept in the transcript, never sent to the model."""
    timestamp: int = Field(default_factory=now_ms)


class CustomTypeMessage(WireModel):
    """Pi's ``CustomMessage``: ``{role: "custom", customType, content, display, details?, timestamp}``.

    Named apart from :class:`agentls.ai.CustomMessage`, the class of every application role.
    ``details`` is the application's and never reaches the model.
    """

    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContent]
    display: bool
    """Whether a client shows it in the transcript."""
    details: Any = None
    timestamp: int = Field(default_factory=now_ms)


class BranchSummaryMessage(WireModel):
    """``{role: "branchSummary", summary, fromId, timestamp}``."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str
    """The entry the conversation branched from."""
    timestamp: int = Field(default_factory=now_ms)


class CompactionSummaryMessage(WireModel):
    """``{role: "compactionSummary", summary, tokensBefore, timestamp}``."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int
    """The context's size in tokens before the compaction."""
    timestamp: int = Field(default_factory=now_ms)


CodingMessage: TypeAlias = (
    BashExecutionMessage | CustomTypeMessage | BranchSummaryMessage | CompactionSummaryMessage
)

_CODING_ROLES: dict[str, type[CodingMessage]] = {
    "bashExecution": BashExecutionMessage,
    "custom": CustomTypeMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
}


def bash_execution_message(
    command: str,
    *,
    output: str,
    exit_code: int | None,
    cancelled: bool,
    truncated: bool,
    full_output_path: str | None = None,
    exclude_from_context: bool = False,
    timestamp: int | None = None,
) -> CustomMessage:
    """Pi's ``recordBashResult`` message; ``exitCode`` is always written (``null`` once cancelled).

    ``timestamp`` in milliseconds, default now.
    """
    optional: dict[str, Any] = {}
    if full_output_path is not None:
        optional["full_output_path"] = full_output_path
    if exclude_from_context:
        optional["exclude_from_context"] = True
    return _in_transcript(
        BashExecutionMessage(
            command=command,
            output=output,
            exit_code=exit_code,
            cancelled=cancelled,
            truncated=truncated,
            timestamp=now_ms() if timestamp is None else timestamp,
            **optional,
        )
    )


def custom_message(
    custom_type: str,
    content: str | list[UserContent],
    *,
    display: bool,
    details: Any = None,
    timestamp: int | None = None,
) -> CustomMessage:
    """Pi's ``createCustomMessage``; ``timestamp`` in milliseconds, default now."""
    optional: dict[str, Any] = {} if details is None else {"details": details}
    return _in_transcript(
        CustomTypeMessage(
            custom_type=custom_type,
            content=content,
            display=display,
            timestamp=now_ms() if timestamp is None else timestamp,
            **optional,
        )
    )


def branch_summary_message(summary: str, from_id: str, timestamp: int | None = None) -> CustomMessage:
    """Pi's ``createBranchSummaryMessage``; ``timestamp`` in milliseconds, default now."""
    return _in_transcript(
        BranchSummaryMessage(
            summary=summary, from_id=from_id, timestamp=now_ms() if timestamp is None else timestamp
        )
    )


def compaction_summary_message(
    summary: str, tokens_before: int, timestamp: int | None = None
) -> CustomMessage:
    """Pi's ``createCompactionSummaryMessage``; ``timestamp`` in milliseconds, default now."""
    return _in_transcript(
        CompactionSummaryMessage(
            summary=summary,
            tokens_before=tokens_before,
            timestamp=now_ms() if timestamp is None else timestamp,
        )
    )


def _in_transcript(message: CodingMessage) -> CustomMessage:
    """The transcript's form of a coding message: what reading it back from the session file gives."""
    return CustomMessage.model_validate(to_wire(message))


def as_coding_message(message: AgentMessage) -> CodingMessage | None:
    """``message`` in its coding role's typed form, or ``None`` if it has another role or lacks a field.

    A message of a coding role that does not fit its shape (a damaged or foreign session
    file) is ``None`` too, so it is left out of the model's context like any unknown role.
    """
    cls = _CODING_ROLES.get(message.role)
    if cls is None:
        return None
    try:
        return cls.model_validate(to_wire(message))
    except ValidationError:
        return None


def bash_execution_to_text(message: BashExecutionMessage) -> str:
    """Pi's ``bashExecutionToText``: the user message text the model gets for a command the user ran."""
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code is not None and message.exit_code != 0:
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def _user_text(text: str, timestamp: int) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=timestamp)


def _to_llm(message: CodingMessage) -> Message | None:
    if isinstance(message, BashExecutionMessage):
        return (
            None
            if message.exclude_from_context
            else _user_text(bash_execution_to_text(message), message.timestamp)
        )
    if isinstance(message, CustomTypeMessage):
        content = [TextContent(text=message.content)] if isinstance(message.content, str) else message.content
        return UserMessage(content=content, timestamp=message.timestamp)
    if isinstance(message, BranchSummaryMessage):
        return _user_text(BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX, message.timestamp)
    return _user_text(
        COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX, message.timestamp
    )


_LLM_TYPES = frozenset({UserMessage, AssistantMessage, ToolResultMessage})


def convert_to_llm(messages: list[AgentMessage]) -> list[Message]:
    """Pi's coding-agent ``convertToLlm``: the coding roles become user messages, other roles are dropped.

    User, assistant and tool-result messages pass unchanged; a ``bashExecution`` with
    ``excludeFromContext`` is dropped.
    """
    if set(map(type, messages)) <= _LLM_TYPES:  # every turn, over the whole transcript: in C when it can be
        return list(messages)  # type: ignore[arg-type]
    converted: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
            converted.append(message)
        elif (coding := as_coding_message(message)) is not None and (llm := _to_llm(coding)) is not None:
            converted.append(llm)
    return converted
