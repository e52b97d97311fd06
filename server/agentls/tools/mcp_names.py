"""The agent's names of MCP tools: ``mcp__SERVER__TOOL`` (Claude Code's convention).

In the tools layer, below the MCP package (which imports them to name its tools), so that the
permission policy and the tool catalogue can use them without importing the MCP SDK (half a
second), which only sessions with MCP servers need.

A server's name never holds ``__`` nor ends in ``_`` (:func:`name_problem`), so the
server part of a tool's name is everything before its first ``__``: ``mcp__github__*``
covers the server ``github`` and no other (not ``github__evil``, not ``github_``).
"""

from __future__ import annotations

import re

PREFIX = "mcp__"
MAX_TOOL_NAME = 64
"""The longest tool name providers accept."""
_TOOL_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """The agent's name of a server's tool, cut to what providers accept."""
    return f"{PREFIX}{server}__{_TOOL_CHARACTERS.sub('_', tool)}"[:MAX_TOOL_NAME]


def server_of(name: str) -> str | None:
    """The server part of an ``mcp__SERVER__TOOL`` name (``None`` for other tools)."""
    if not name.startswith(PREFIX):
        return None
    server, separator, _ = name[len(PREFIX) :].partition("__")
    return server if separator else None


def name_problem(server: str) -> str | None:
    """Why a server's name (as tool names carry it) cannot be used, or ``None``."""
    if "__" in server or server.endswith("_"):
        return (
            f"the name {server!r} must not contain '__' or end with '_' (tool names are "
            f"{PREFIX}SERVER__TOOL, so it would read as another server's); rename the server"
        )
    return None


def server_wildcard(server: str) -> str:
    """The permission rule and mode key covering every tool of a server."""
    return f"{PREFIX}{server}__*"
