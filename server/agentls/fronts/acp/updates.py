"""agentls's agent events as ACP ``session/update``s, and a stored transcript replayed as them.

Text and thinking deltas become ``agent_message_chunk`` / ``agent_thought_chunk``. A tool
call is announced (``tool_call``, ``pending``) when the model has finished writing it,
goes ``in_progress`` when it starts, streams its output (or names its client terminal),
and ends ``completed`` or ``failed`` with its result; a ``write``/``edit`` ends with the
``diff`` of each file it changed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    ImageContentBlock,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from agentls.session.history.file_changes import FileChange
from agentls.tools.catalogue import tool_kind, tool_title

Update = Any
"""One of the SDK's ``session/update`` models."""


def tool_locations(name: str, args: Any, cwd: str) -> list[ToolCallLocation] | None:
    args = args if isinstance(args, dict) else {}
    path = args.get("path")
    if name not in ("read", "write", "edit", "ls", "grep", "find") or not isinstance(path, str):
        return None
    absolute = str(Path(cwd, path)) if not Path(path).is_absolute() else path
    line = args.get("offset") if name == "read" and isinstance(args.get("offset"), int) else None
    return [ToolCallLocation(path=absolute, line=line)]


def _blocks(content: Any) -> list[TextContentBlock | ImageContentBlock]:
    """A message's or a tool result's content as ACP content blocks."""
    if isinstance(content, str):
        return [TextContentBlock(type="text", text=content)] if content else []
    blocks: list[TextContentBlock | ImageContentBlock] = []
    for block in content or []:
        if block.get("type") == "text" and block.get("text"):
            blocks.append(TextContentBlock(type="text", text=block["text"]))
        elif block.get("type") == "image":
            blocks.append(ImageContentBlock(type="image", data=block["data"], mime_type=block["mimeType"]))
    return blocks


def _result_content(
    result: Any, changes: list[FileChange], terminal: str | None
) -> list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]:
    content: list[Any] = [TerminalToolCallContent(type="terminal", terminal_id=terminal)] if terminal else []
    for change in changes:
        if change.after.text is not None:
            old = change.before.text if change.before is not None else None
            content.append(
                FileEditToolCallContent(
                    type="diff", path=change.path, old_text=old, new_text=change.after.text
                )
            )
    blocks = _blocks(result.get("content") if isinstance(result, dict) else None)
    if terminal is None or not blocks:
        content.extend(ContentToolCallContent(type="content", content=block) for block in blocks)
    return content


def tool_call_start(call_id: str, name: str, args: Any, status: str, cwd: str) -> ToolCallStart:
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=tool_title(name, args),
        kind=tool_kind(name),  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        locations=tool_locations(name, args, cwd),
        raw_input=args,
    )


class EventTranslator:
    """The updates of one session's events; it remembers the tool calls it has announced."""

    def __init__(self, cwd: str, changes_of: Callable[[str], list[FileChange]]) -> None:
        self.cwd = cwd
        self._changes_of = changes_of
        self._announced: set[str] = set()
        self._terminals: dict[str, str] = {}

    def _start(self, call_id: str, name: str, args: Any, status: str) -> ToolCallStart:
        self._announced.add(call_id)
        return tool_call_start(call_id, name, args, status, self.cwd)

    def updates(self, event: dict[str, Any]) -> list[Update]:
        kind = event.get("type")
        if kind == "message_update":
            return self._assistant(event.get("assistantMessageEvent") or {})
        call_id = event.get("toolCallId")
        if not isinstance(call_id, str):
            return []
        name, args = event.get("toolName", ""), event.get("args")
        if kind == "tool_execution_start":
            if call_id not in self._announced:
                return [self._start(call_id, name, args, "in_progress")]
            return [
                ToolCallProgress(
                    session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
                )
            ]
        if kind == "tool_execution_update":
            return self._progress(call_id, event.get("partialResult") or {})
        if kind == "tool_execution_end":
            failed = bool(event.get("isError"))
            result = event.get("result") or {}
            terminal = self._terminals.pop(call_id, None)
            content = _result_content(result, [] if failed else self._changes_of(call_id), terminal)
            self._announced.discard(call_id)
            return [
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=call_id,
                    status="failed" if failed else "completed",
                    content=content or None,
                    raw_output=result.get("details") if isinstance(result, dict) else None,
                )
            ]
        return []

    def _assistant(self, event: dict[str, Any]) -> list[Update]:
        kind = event.get("type")
        if kind == "text_delta" and event.get("delta"):
            return [AgentMessageChunk(session_update="agent_message_chunk", content=_text(event["delta"]))]
        if kind == "thinking_delta" and event.get("delta"):
            return [AgentThoughtChunk(session_update="agent_thought_chunk", content=_text(event["delta"]))]
        if kind == "toolcall_end":
            call = event.get("toolCall") or {}
            if isinstance(call.get("id"), str) and call["id"] not in self._announced:
                return [self._start(call["id"], call.get("name", ""), call.get("arguments"), "pending")]
        return []

    def _progress(self, call_id: str, partial: dict[str, Any]) -> list[Update]:
        details = partial.get("details") if isinstance(partial.get("details"), dict) else {}
        terminal = details.get("terminalId")
        if isinstance(terminal, str) and call_id not in self._terminals:
            self._terminals[call_id] = terminal
            content = [TerminalToolCallContent(type="terminal", terminal_id=terminal)]
            return [
                ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, content=content)
            ]
        if call_id in self._terminals:
            return []  # the terminal shows the output itself
        blocks = _blocks(partial.get("content"))
        if not blocks:
            return []
        content = [ContentToolCallContent(type="content", content=block) for block in blocks]
        return [ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, content=content)]


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def replay(messages: list[dict[str, Any]], cwd: str) -> list[Update]:
    """A stored transcript as the updates a client would have seen (``session/load``)."""
    updates: list[Update] = []
    calls: set[str] = set()
    for message in messages:
        role = message.get("role")
        if role == "user":
            updates.extend(
                UserMessageChunk(session_update="user_message_chunk", content=block)
                for block in _blocks(message.get("content"))
            )
        elif role == "assistant":
            for block in message.get("content") or []:
                if block.get("type") == "text" and block.get("text"):
                    updates.append(
                        AgentMessageChunk(session_update="agent_message_chunk", content=_text(block["text"]))
                    )
                elif block.get("type") == "thinking" and block.get("thinking"):
                    updates.append(
                        AgentThoughtChunk(
                            session_update="agent_thought_chunk", content=_text(block["thinking"])
                        )
                    )
                elif block.get("type") == "toolCall":
                    calls.add(block["id"])
                    name, args = block.get("name", ""), block.get("arguments")
                    updates.append(tool_call_start(block["id"], name, args, "pending", cwd))
        elif role == "toolResult" and message.get("toolCallId") in calls:
            failed = bool(message.get("isError"))
            content = _result_content({"content": message.get("content")}, [], None)
            updates.append(
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=message["toolCallId"],
                    status="failed" if failed else "completed",
                    content=content or None,
                )
            )
    return updates
