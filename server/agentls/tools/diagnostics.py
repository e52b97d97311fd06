"""The ``diagnostics`` tool: the problems the user's own language servers report, asked of the editor.

After an edit the model can see the type errors and lint warnings the user sees. The
editor answers ``agent/getDiagnostics`` (see protocol.md); the tool exists only for a
client that advertised it. Each problem is one line, ``path:line:column: severity:
message (source)``, with 1-based lines and columns, paths relative to the workspace.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, TextContent
from agentls.tools.workspace import ToolInputError, Workspace

DiagnosticsSource = Callable[[list[str] | None], Awaitable[list[dict[str, Any]]]]
"""Asks the editor: the URIs (all documents when ``None``) -> ``[{uri, items: [Diagnostic]}]``."""

MAX_PROBLEMS = 200
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}

DIAGNOSTICS_DESCRIPTION = (
    "List the problems (errors, warnings) the user's editor reports for a file, or for every file "
    "it has problems for when no path is given: what its language servers, type checkers and linters "
    "say. Use it after editing to check the change."
)
DIAGNOSTICS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file (relative or absolute); omit for every file"}
    },
}


def uri_path(uri: str) -> Path:
    """The file path of a ``file:`` URI; raises :class:`ToolInputError` for any other URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        raise ToolInputError(f"{uri!r} is not a file: URI")
    return Path(unquote(parsed.path))


def display_path(workspace: Workspace, path: Path) -> str:
    try:
        return path.relative_to(workspace.root).as_posix()
    except ValueError:
        return path.as_posix()


def diagnostic_line(name: str, item: dict[str, Any]) -> str:
    """One problem: ``name:line:column: severity: message (source)``."""
    start = (item.get("range") or {}).get("start") or {}
    line, column = int(start.get("line", 0)) + 1, int(start.get("character", 0)) + 1
    severity = SEVERITIES.get(item.get("severity") or 1, "error")
    message = " ".join(str(item.get("message", "")).split())
    source = f" ({item['source']})" if item.get("source") else ""
    code = f" [{item['code']}]" if item.get("code") not in (None, "") else ""
    return f"{name}:{line}:{column}: {severity}: {message}{code}{source}"


def diagnostic_lines(workspace: Workspace, files: list[dict[str, Any]]) -> list[str]:
    """Every problem of ``files`` (the editor's answer), most severe first within each file.

    Only files a tool may read: the editor reports on every document it has open, also
    those outside the workspace (or through a symlink pointing out) and buffers that are
    no file at all; their problems quote their text, so they are left out, as ``grep``
    and ``find`` leave such files out.
    """
    lines = []
    for entry in files:
        try:
            name = display_path(workspace, workspace.resolve(uri_path(str(entry.get("uri", "")))))
        except ToolInputError:
            continue
        items = sorted(entry.get("items") or [], key=lambda item: item.get("severity") or 1)
        lines.extend(diagnostic_line(name, item) for item in items if isinstance(item, dict))
    return lines


def diagnostics_tool(workspace: Workspace, source: DiagnosticsSource) -> AgentTool:
    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        path = args.get("path") if isinstance(args, dict) else None
        uris = None
        if isinstance(path, str) and path.strip():
            resolved = workspace.resolve(path)
            uris = [resolved.as_uri()]
        lines = diagnostic_lines(workspace, await source(uris))
        where = path if uris else "the workspace"
        if not lines:
            text = f"No problems reported for {where}."
        else:
            shown = lines[:MAX_PROBLEMS]
            more = len(lines) - len(shown)
            text = "\n".join(shown) + (f"\n… {more} more problems" if more else "")
        return AgentToolResult(
            content=[TextContent(text=text)], details={"problems": len(lines), "uris": uris}
        )

    return AgentTool(
        name="diagnostics",
        label="diagnostics",
        description=DIAGNOSTICS_DESCRIPTION,
        parameters=DIAGNOSTICS_PARAMETERS,
        execute=execute,
    )
