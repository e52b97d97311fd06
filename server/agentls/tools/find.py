"""The ``find`` tool (Pi's name and arguments): the files under a folder whose paths match a glob."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal
from agentls.tools.search_common import (
    capped,
    check_aborted,
    glob_arg,
    int_arg,
    noted,
    str_arg,
    tool_args,
    tool_result,
)
from agentls.tools.walk import (
    DEFAULT_BOUNDS,
    Bounds,
    Budget,
    Tree,
    open_documents,
    run_search,
    with_documents,
)
from agentls.tools.walk_split import split_after
from agentls.tools.workspace import DiskWorkspace, ToolInputError

DEFAULT_FIND_LIMIT = 1000

FIND_DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory, "
    "sorted. A pattern without '/' matches file names at any depth ('*.md'); one with '/' matches the "
    "relative path ('src/**/*.ts', '**' for any number of directories). Respects .gitignore and skips "
    f".git. Output is truncated to {DEFAULT_FIND_LIMIT} results unless a different limit is given."
)

FIND_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of results (default: {DEFAULT_FIND_LIMIT})",
        },
    },
    "required": ["pattern"],
}


def find_tool(workspace: DiskWorkspace, bounds: Bounds = DEFAULT_BOUNDS) -> AgentTool:
    """The ``find`` tool; ``details`` is ``{path, matches, truncated}`` (``matches`` counts all of them).

    ``bounds`` limits what one call may read (``details.boundsHit`` names those it hit).
    """

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        check_aborted(signal)
        args = tool_args(args, "find")
        pattern = str_arg(args, "pattern")
        if not pattern.strip():
            raise ToolInputError("pattern must not be empty")
        path = str_arg(args, "path", ".")
        limit = int_arg(args, "limit", DEFAULT_FIND_LIMIT)
        matcher = glob_arg(pattern)
        resolved = workspace.resolve(path)
        buffers = workspace.buffers()
        budget = Budget(bounds, signal)
        split = split_after()

        def search() -> tuple[list[str], int]:
            """The first ``limit`` matches, and how many there are."""
            shown: list[str] = []
            count = 0
            documents = [file.relative for file in open_documents(buffers, resolved, matcher)]
            with contextlib.closing(Tree(workspace).runs(resolved, path, budget, matcher, split)) as walk:
                runs: Iterator[tuple[str, list[str]]] = walk
                if documents:  # merged one path at a time
                    paths = (folder + name for folder, names in walk for name in names)
                    runs = (("", [path]) for path in with_documents(paths, documents, str))
                for folder, names in runs:
                    if count < limit:
                        shown += [folder + name for name in names[: limit - count]]
                    count += len(names)
            return shown, count

        matches, count = await run_search(search, signal)
        check_aborted(signal)
        details = {"path": str(resolved), "matches": count, "truncated": False}
        if not matches:
            return tool_result(
                noted(f"No files found matching pattern {pattern!r}", details, budget), details
            )
        text = "\n".join(matches)
        if count > limit:
            details["truncated"] = True
            text += (
                f"\n\n[{limit} results limit reached ({count} in total). "
                f"Use limit={limit * 2} for more, or refine the pattern]"
            )
        text = capped(text, details, "use a narrower path or pattern, or a smaller limit")
        return tool_result(noted(text, details, budget), details)

    return AgentTool(
        name="find", label="find", description=FIND_DESCRIPTION, parameters=FIND_PARAMETERS, execute=execute
    )
