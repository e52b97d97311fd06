"""The permission policy of a session: a ``before_tool_call`` hook that allows, denies or asks.

Each tool has a mode: ``allow``, ``ask`` or ``deny``. By default read-only tools are
allowed, ``write``/``edit`` are allowed (their paths are kept inside the workspace by
the tools themselves) and ``bash`` and unknown tools ask. ``ask`` asks the user through
the client; "allow always" is remembered for the workspace in ``permissions.json`` of the
data folder. An abort while a question is pending ends the wait as a rejection, so a
client that never answers cannot hold a run forever.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentls.agent import BeforeToolCallContext, BeforeToolCallResult
from agentls.ai import AbortSignal, to_wire
from agentls.ai.abort import AbortError, unless_aborted
from agentls.ai.local_files import read_json_file
from agentls.mcp.names import server_of, server_wildcard
from agentls.protocol import PermissionMode, PermissionOption, PermissionRule, RequestPermissionParams
from agentls.tools.review import EditReviews
from agentls.tools.workspace import DiskWorkspace, ToolInputError

logger = logging.getLogger(__name__)

DEFAULT_MODES: dict[str, PermissionMode] = {
    "read": "allow",
    "ls": "allow",
    "find": "allow",
    "grep": "allow",
    "diagnostics": "allow",
    "write": "allow",
    "edit": "allow",
    "bash": "ask",
}

Ask = Callable[[RequestPermissionParams], Awaitable[str]]
"""Asks the user; returns ``allowOnce``, ``allowAlways`` or ``reject``."""

OPTIONS = [
    PermissionOption(id="allowOnce", label="Allow once"),
    PermissionOption(id="allowAlways", label="Allow always"),
    PermissionOption(id="reject", label="Reject"),
]


def _options(tool_name: str) -> list[PermissionOption]:
    server = server_of(tool_name)
    if server is None:
        return OPTIONS
    every = PermissionOption(id="allowAlwaysServer", label=f"Allow always: every tool of {server}")
    return [
        OPTIONS[0],
        PermissionOption(id="allowAlways", label="Allow always: this tool"),
        every,
        OPTIONS[2],
    ]


class PermissionRules:
    """ "Allow always" answers, per workspace, kept in a JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rules: set[tuple[str, str]] = set()
        try:
            data = read_json_file(path)
            self._rules = {(r["workspace"], r["toolName"]) for r in data.get("rules", [])}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            logger.warning("ignoring unreadable permission rules %s: %s", path, error)

    def allows(self, workspace: str, tool_name: str) -> bool:
        """Whether an "allow always" covers the tool (an MCP tool's server's ``mcp__SERVER__*`` too)."""
        if (workspace, tool_name) in self._rules:
            return True
        server = server_of(tool_name)
        return server is not None and (workspace, server_wildcard(server)) in self._rules

    def list(self, workspace: str | None = None) -> list[PermissionRule]:
        return [
            PermissionRule(workspace=w, tool_name=t)
            for w, t in sorted(self._rules)
            if workspace is None or w == workspace
        ]

    async def add(self, workspace: str, tool_name: str) -> None:
        self._rules.add((workspace, tool_name))
        await asyncio.to_thread(self._save)

    async def revoke(self, workspace: str, tool_name: str) -> bool:
        if (workspace, tool_name) not in self._rules:
            return False
        self._rules.discard((workspace, tool_name))
        await asyncio.to_thread(self._save)
        return True

    def _save(self) -> None:
        """Write the whole file atomically (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"rules": [r.model_dump(by_alias=True) for r in self.list()]}
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".permissions-")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2)
        os.replace(temporary, self.path)


def outside_workspace(workspace: str) -> Callable[[Any], bool]:
    """Whether a file tool's ``args.path`` leaves ``workspace`` (``..``, elsewhere, a symlink out)."""
    inside = DiskWorkspace(workspace)

    def check(args: Any) -> bool:
        path = args.get("path") if isinstance(args, dict) else None
        if not isinstance(path, str):
            return False
        try:
            inside.resolve(path)
        except ToolInputError:
            return True
        return False

    return check


WRITING_TOOLS = ("write", "edit")


def permission_hook(
    *,
    session_id: str,
    workspace: str,
    modes: dict[str, PermissionMode],
    rules: PermissionRules,
    ask: Ask,
    allow_outside: bool = False,
    reviews: EditReviews | None = None,
) -> Callable[[BeforeToolCallContext, AbortSignal | None], Awaitable[BeforeToolCallResult | None]]:
    """The session's ``before_tool_call``: the policy for each tool call.

    With ``allow_outside`` the tools accept paths outside the workspace; a ``write`` or
    ``edit`` there asks first even when the tool is allowed (its "allow always" is
    remembered apart, as ``write:outside``), and ``deny`` still denies. ``review`` lets
    a ``write`` or ``edit`` run and marks it for ``reviews`` (the change is shown to the
    user before it is written); without ``reviews`` (the client cannot show one), and
    for other tools, it asks.
    """
    outside = outside_workspace(workspace) if allow_outside else None

    async def before_tool_call(
        ctx: BeforeToolCallContext, signal: AbortSignal | None
    ) -> BeforeToolCallResult | None:
        name = rule = ctx.tool_call.name
        server = server_of(name)
        wildcard = modes.get(server_wildcard(server)) if server is not None else None
        mode = modes.get(name) or wildcard or modes.get("*") or DEFAULT_MODES.get(name, "ask")
        if outside is not None and name in WRITING_TOOLS and outside(ctx.args):
            rule = f"{name}:outside"
            mode = "deny" if mode == "deny" else "ask"
        if mode == "review":
            if reviews is not None and name in WRITING_TOOLS:
                reviews.require(ctx.tool_call.id)
                return None
            mode = "ask"
        if mode == "allow" or rules.allows(workspace, rule):
            return None
        if mode == "deny":
            return BeforeToolCallResult(block=True, reason=f"The permission policy denies the {name} tool.")
        request = RequestPermissionParams(
            session_id=session_id,
            tool_call_id=ctx.tool_call.id,
            tool_name=name,
            args=to_wire(ctx.args),
            title=_title(name, ctx.args, outside_workspace=rule != name),
            options=_options(name),
        )
        outcome = await _ask_unless_aborted(ask, request, signal)
        if outcome == "allowAlways":
            await rules.add(workspace, rule)
            return None
        if outcome == "allowAlwaysServer" and server is not None:
            await rules.add(workspace, server_wildcard(server))
            return None
        if outcome == "allowOnce":
            return None
        return BeforeToolCallResult(block=True, reason=outcome or f"The user rejected the {name} call.")

    return before_tool_call


async def _ask_unless_aborted(
    ask: Ask, request: RequestPermissionParams, signal: AbortSignal | None
) -> str | None:
    """The user's answer; a rejection reason (or ``None`` for a plain rejection) otherwise."""
    try:
        answer = await unless_aborted(ask(request), signal)
    except AbortError:
        return "The permission request was cancelled: the run was aborted."
    except Exception as error:  # the client failed to answer: never run the tool on a failure
        logger.warning("permission request for %s failed: %s", request.tool_name, error)
        return f"The permission request failed ({error}); the call was not run."
    return answer if answer in ("allowOnce", "allowAlways", "allowAlwaysServer") else None


def _title(tool_name: str, args: Any, *, outside_workspace: bool = False) -> str:
    if tool_name == "bash" and isinstance(args, dict) and isinstance(args.get("command"), str):
        return f"Run the command: {args['command']}"
    if outside_workspace:
        return f"Allow {tool_name} of {args['path']}, outside the workspace?"
    if (server := server_of(tool_name)) is not None:
        return f"Allow the tool {tool_name.split('__', 2)[2]} of the MCP server {server}?"
    return f"Allow the {tool_name} tool?"
