"""agentls.tools: the coding tools the agent uses, over a :class:`Workspace`."""

from agentls.agent.types import AgentTool
from agentls.tools.bash import BashCommandError, bash_tool
from agentls.tools.read import read_tool
from agentls.tools.workspace import DiskWorkspace, FileStat, ToolInputError, Workspace


def coding_tools(workspace: Workspace) -> list[AgentTool]:
    """The tools of every session over ``workspace``; the session's permission policy guards ``bash``."""
    return [read_tool(workspace), bash_tool(workspace)]


__all__ = [
    "BashCommandError",
    "DiskWorkspace",
    "FileStat",
    "ToolInputError",
    "Workspace",
    "bash_tool",
    "coding_tools",
    "read_tool",
]
