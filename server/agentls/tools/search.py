"""The read-only search tools (Pi-compatible names and arguments): ``ls``, ``find`` and ``grep``.

The file-system work is the walk of :mod:`agentls.tools.walk`: each folder opened from
its parent's descriptor, on the search tools' own threads, within the bounds of one call
(entries read, depth, time), which a result states when it hit one; an abort ends a call
at once. ``find`` and ``grep`` skip ``.git/`` and honour ``.gitignore`` files (the
workspace root's, the ones between it and the search folder, and nested ones). Both see
the editor's open documents inside the workspace: ``grep`` searches an open document's
buffer instead of its file, and both list open documents that are not saved to disk yet.
Nothing is reached through a symlink out of the workspace, and no FIFO, socket or device
is ever opened. Patterns, globs and ``.gitignore`` rules are matched by RE2
(:mod:`agentls.tools.matching`), in time linear in the text. ``grep`` lets ``rg`` (when
installed) pick the files that have a match, then formats the matches itself, so its
output is the same either way.

Each tool is a module of its own (:mod:`~agentls.tools.ls`, :mod:`~agentls.tools.find`,
:mod:`~agentls.tools.grep`); what they share is :mod:`agentls.tools.search_common`'s.
"""

from __future__ import annotations

from agentls.agent.types import AgentTool
from agentls.tools.find import find_tool
from agentls.tools.grep import grep_tool
from agentls.tools.ls import ls_tool
from agentls.tools.workspace import DiskWorkspace

__all__ = ["find_tool", "grep_tool", "ls_tool", "search_tools"]


def search_tools(workspace: DiskWorkspace) -> list[AgentTool]:
    """``ls``, ``find`` and ``grep`` over ``workspace``."""
    return [ls_tool(workspace), find_tool(workspace), grep_tool(workspace)]
