"""The ``ls`` tool (Pi's name and arguments): a folder's entries, sorted, within the call's bounds."""

from __future__ import annotations

from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal
from agentls.tools.search_common import check_aborted, int_arg, noted, str_arg, tool_args, tool_result
from agentls.tools.walk import DEFAULT_BOUNDS, Bounds, Budget, Tree, run_search
from agentls.tools.workspace import DiskWorkspace

DEFAULT_LS_LIMIT = 500

LS_DESCRIPTION = (
    "List the contents of a directory. Entries are sorted alphabetically (case-insensitive), with a "
    "trailing '/' for directories; dotfiles are included. "
    f"Output is truncated to {DEFAULT_LS_LIMIT} entries unless a different limit is given."
)

LS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of entries to return (default: {DEFAULT_LS_LIMIT})",
        },
    },
}


def ls_tool(workspace: DiskWorkspace, bounds: Bounds = DEFAULT_BOUNDS) -> AgentTool:
    """The ``ls`` tool; ``details`` is ``{path, entries, truncated}`` (``entries`` counts all of them).

    ``bounds`` limits what one call may read (``details.boundsHit`` names those it hit).
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        check_aborted(signal)
        args = tool_args(args, "ls")
        path = str_arg(args, "path", ".")
        limit = int_arg(args, "limit", DEFAULT_LS_LIMIT)
        resolved = workspace.resolve(path)
        budget = Budget(bounds, signal)

        def listing() -> list[str]:
            tree = Tree(workspace)
            entries = tree.list(tree.open_folder(resolved, path), budget)
            names = [name + "/" if is_dir else name for name, is_dir in entries]
            names.sort(key=lambda name: (name.lower(), name))
            return names

        names = await run_search(listing, signal)
        check_aborted(signal)
        details = {"path": str(resolved), "entries": len(names), "truncated": len(names) > limit}
        text = "\n".join(names[:limit]) if names else "(empty directory)"
        if len(names) > limit:
            text += (
                f"\n\n[{limit} entries limit reached ({len(names)} in total). Use limit={limit * 2} for more]"
            )
        return tool_result(noted(text, details, budget), details)

    return AgentTool(
        name="ls", label="ls", description=LS_DESCRIPTION, parameters=LS_PARAMETERS, execute=execute
    )
