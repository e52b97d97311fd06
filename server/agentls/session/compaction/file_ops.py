"""The files a summarised conversation read and changed (Pi 0.85.0's file tracking in ``utils.js``).

A summary drops the tool calls, so Pi lists the files they touched after the summary
text, as ``<read-files>`` and ``<modified-files>``, and carries the lists from one
compaction to the next: after many compactions the model still knows every file the
session read or changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentls.ai.types import AgentMessage, AssistantMessage, ToolCall


@dataclass
class FileOperations:
    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_message(self, message: AgentMessage) -> None:
        """Record the paths of the ``read``, ``write`` and ``edit`` calls of an assistant message."""
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if not isinstance(block, ToolCall) or not isinstance(block.arguments, dict):
                continue
            path = block.arguments.get("path")
            if not isinstance(path, str) or not path:
                continue
            if block.name == "read":
                self.read.add(path)
            elif block.name == "write":
                self.written.add(path)
            elif block.name == "edit":
                self.edited.add(path)

    def file_lists(self) -> tuple[list[str], list[str]]:
        """``(read_files, modified_files)``, sorted: files only read, and files written or edited."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    """The lists as the tags appended to a summary (empty when both are empty)."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""
