"""An MCP server's tools as the agent's tools: ``mcp__SERVER__TOOL``, the server's schema, its results.

Results become the content blocks the model reads: text and images as they are, an
embedded resource as text headed by its URI, a resource link as its URI and name,
``structuredContent`` as JSON text when there is no text (nested at most
:data:`~agentls.tools.bounds.MAX_DETAILS_DEPTH` levels, deeper levels cut with a marker).
``isError`` makes the call a tool error. Progress notifications become
``tool_execution_update``s (their message cut to :data:`MAX_PROGRESS_MESSAGE` characters),
and an abort cancels the call (the SDK sends MCP's cancellation) and ends it at once.
The size of what comes back is bounded for every tool by the session (:mod:`agentls.tools.bounds`).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import mcp_types

from agentls.agent.types import AgentTool, AgentToolResult, ToolUpdateCallback
from agentls.ai import AbortSignal, ImageContent, TextContent
from agentls.ai.abort import unless_aborted
from agentls.mcp.connection import McpConnection as McpConnection
from agentls.tools.bounds import bound_value
from agentls.tools.mcp_names import tool_name

MAX_PROGRESS_MESSAGE = 1000


class McpToolError(Exception):
    """The server answered the call with ``isError``; the message is its text."""


def _schema(tool: mcp_types.Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def _content(result: mcp_types.CallToolResult) -> list[TextContent | ImageContent]:
    blocks: list[TextContent | ImageContent] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            blocks.append(TextContent(text=block.text))
        elif isinstance(block, mcp_types.ImageContent):
            blocks.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, mcp_types.AudioContent):
            blocks.append(TextContent(text=f"[audio: {block.mime_type}, {len(block.data) * 3 // 4} bytes]"))
        elif isinstance(block, mcp_types.EmbeddedResource):
            blocks.append(TextContent(text=_resource_text(block.resource)))
        elif isinstance(block, mcp_types.ResourceLink):
            title = f" ({block.name})" if block.name else ""
            blocks.append(TextContent(text=f"[resource link: {block.uri}{title}]"))
    if not any(isinstance(b, TextContent) for b in blocks) and result.structured_content is not None:
        structured = bound_value(result.structured_content, max_chars=sys.maxsize)  # cut only in depth
        blocks.append(TextContent(text=json.dumps(structured, ensure_ascii=False, indent=2)))
    return blocks or [TextContent(text="(no output)")]


def _resource_text(resource: Any) -> str:
    uri = getattr(resource, "uri", "?")
    if isinstance(resource, mcp_types.TextResourceContents):
        return f"[resource {uri}]\n{resource.text}"
    blob = getattr(resource, "blob", "")
    return f"[resource {uri}: {resource.mime_type or 'binary'}, {len(blob) * 3 // 4} bytes, not shown]"


def mcp_tool(connection: McpConnection, tool: mcp_types.Tool) -> AgentTool:
    """The agent's tool for one tool of a server."""
    server = connection.config.name
    name = tool_name(server, tool.name)

    async def execute(
        tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback | None
    ) -> AgentToolResult:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            if on_update is None:
                return
            shown = f"{done:g}/{total:g}" if total else f"{done:g}"
            if message is not None and len(message) > MAX_PROGRESS_MESSAGE:
                message = message[:MAX_PROGRESS_MESSAGE] + "…"
            details = {"progress": done, "total": total, "message": message}
            text = f"{shown} {message}" if message else shown
            on_update(AgentToolResult(content=[TextContent(text=text)], details=details))

        arguments = args if isinstance(args, dict) else {}
        call = asyncio.ensure_future(connection.call(tool.name, arguments, progress))
        result = await unless_aborted(call, signal)  # an abort cancels the call
        content = _content(result)
        if result.is_error:
            text = "\n".join(b.text for b in content if isinstance(b, TextContent))
            raise McpToolError(text or f"{name} failed")
        details: dict[str, Any] = {"server": server, "tool": tool.name}
        if result.structured_content is not None:
            details["structuredContent"] = result.structured_content
        return AgentToolResult(content=content, details=details)

    description = tool.description or tool.title or tool.name
    return AgentTool(
        name=name,
        label=f"{server} · {tool.title or tool.name}",
        description=f"{description}\n\n(Tool {tool.name} of the MCP server {server}.)",
        parameters=_schema(tool),
        execute=execute,
    )


def agent_tools(connection: McpConnection) -> list[AgentTool]:
    """The agent's tools of a server that has listed them: ready, or failed since (a call starts it
    again); names that collide keep the first."""
    if connection.status not in ("ready", "failed"):
        return []
    made = connection.agent_tools
    if made is not None and made[0] is connection.tools:  # made for this listing: every turn asks
        return made[1]
    tools: dict[str, AgentTool] = {}
    for tool in connection.tools:
        agent_tool = mcp_tool(connection, tool)
        tools.setdefault(agent_tool.name, agent_tool)
    connection.agent_tools = (connection.tools, list(tools.values()))
    return connection.agent_tools[1]
