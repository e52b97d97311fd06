"""agentls.tools: the coding tools the agent uses, over a :class:`Workspace`."""

from agentls.agent.types import AgentTool
from agentls.tools.read import read_tool
from agentls.tools.workspace import DiskWorkspace, FileStat, ToolInputError, Workspace


def coding_tools(workspace: Workspace) -> list[AgentTool]:
    """The coding agent's tool set over ``workspace`` (only ``read`` so far)."""
    return [read_tool(workspace)]


__all__ = ["DiskWorkspace", "FileStat", "ToolInputError", "Workspace", "coding_tools", "read_tool"]
