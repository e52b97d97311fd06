"""agentls.tools: the coding tools the agent uses, over a :class:`Workspace`."""

from agentls.agent.types import AgentTool
from agentls.tools.bash import BashCommandError, Escalate, bash_tool
from agentls.tools.edit import ChangeRecorder, edit_tool, write_tool
from agentls.tools.files import write_text_atomic
from agentls.tools.processes import ProcessTracker
from agentls.tools.read import read_tool
from agentls.tools.review import EditReviews
from agentls.tools.sandbox import Sandbox
from agentls.tools.search import find_tool, grep_tool, ls_tool, search_tools
from agentls.tools.workspace import DiskWorkspace, FileStat, ToolInputError, Workspace


def coding_tools(
    workspace: Workspace,
    processes: ProcessTracker | None = None,
    reviews: EditReviews | None = None,
    record: ChangeRecorder | None = None,
    sandbox: Sandbox | None = None,
    escalate: Escalate | None = None,
) -> list[AgentTool]:
    """The tools of every session over ``workspace``; the session's permission policy guards them.

    ``processes`` tracks what ``bash`` starts, for the session to end when a run ends;
    ``reviews`` asks the user to review the changes the policy marks; ``record`` learns
    what ``write`` and ``edit`` changed; ``sandbox`` confines ``bash`` and ``escalate`` asks
    whether a call the sandbox denied may run once outside it.
    """
    return [
        read_tool(workspace),
        write_tool(workspace, reviews, record),
        edit_tool(workspace, reviews, record),
        *search_tools(workspace),
        bash_tool(workspace, processes, sandbox, escalate),
    ]


__all__ = [
    "BashCommandError",
    "DiskWorkspace",
    "FileStat",
    "ProcessTracker",
    "Sandbox",
    "ToolInputError",
    "Workspace",
    "bash_tool",
    "coding_tools",
    "edit_tool",
    "find_tool",
    "grep_tool",
    "ls_tool",
    "read_tool",
    "search_tools",
    "write_text_atomic",
    "write_tool",
]
