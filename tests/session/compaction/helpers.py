"""Messages and transcripts for the compaction tests, sized in Pi's estimate (four characters a token)."""

from __future__ import annotations

from agentls.ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from agentls.session.history.transcript import Compaction, Transcript, TranscriptEntry
from agentls.session.messages import compaction_summary_message


def text(tokens: int, letter: str = "x") -> str:
    """A text that Pi estimates at ``tokens`` tokens."""
    return letter * (4 * tokens)


def user(tokens: int = 1, letter: str = "u") -> UserMessage:
    return UserMessage(content=[TextContent(text=text(tokens, letter))])


def answer(tokens: int = 1, *, usage: int = 0, stop_reason: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text(tokens, "a"))],
        usage=Usage(input=usage, total_tokens=usage),
        stop_reason=stop_reason,  # type: ignore[arg-type]
    )


def call(name: str, call_id: str = "c1", **arguments: object) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=call_id, name=name, arguments=arguments)], stop_reason="toolUse"
    )


def result(tokens: int = 1, call_id: str = "c1", name: str = "read") -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name=name, content=[TextContent(text=text(tokens, "r"))]
    )


def transcript(*messages: object) -> Transcript:
    """A transcript of ``messages`` with entry ids ``e0``, ``e1``, ...; a ``(summary, kept_id)`` pair is a
    compaction entry."""
    entries = []
    for index, item in enumerate(messages):
        if isinstance(item, tuple):
            summary, kept = item
            mark = Compaction(kept, read_files=("old.txt",), modified_files=("changed.txt",))
            entries.append(TranscriptEntry(f"e{index}", compaction_summary_message(summary, 999, 0), mark))
        else:
            entries.append(TranscriptEntry(f"e{index}", item))  # type: ignore[arg-type]
    return Transcript(entries)
