"""The permission policy of a session: a ``before_tool_call`` hook that allows, denies or asks.

Each tool has a mode: ``allow``, ``ask``, ``deny`` or ``review``. By default read-only
tools are allowed, ``write``/``edit`` are allowed (their paths are kept inside the
workspace by the tools themselves) and ``bash`` and unknown tools ask. ``ask`` asks the
user through the client; "allow always" is remembered for the workspace in
``permissions.json`` of the data folder. A remembered answer only stands in for an
``ask`` of the defaults: a mode someone set (``deny``, ``review``, ``ask``, a front's
read-only mode) always wins over it. An abort while a question is pending ends the
wait as a rejection, so a client that never answers cannot hold a run forever. A stored
session's own policy, read from its file, may narrow the server's but not widen it
(:func:`loaded_policy`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.agent import BeforeToolCallContext, BeforeToolCallResult
from agentls.ai import AbortSignal, to_wire
from agentls.ai.abort import AbortError, unless_aborted
from agentls.ai.local_files import read_json_file, write_json_file
from agentls.protocol import (
    Ask,
    BudgetUsage,
    PermissionMode,
    PermissionOption,
    PermissionRule,
    RequestPermissionParams,
)
from agentls.tools.mcp_names import server_of, server_wildcard
from agentls.tools.review import EditReviews
from agentls.tools.workspace import DiskWorkspace, ToolInputError

try:
    import fcntl
except ImportError:  # Windows: no flock; a save still merges with the file as read just before it
    fcntl = None  # type: ignore[assignment]

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

OPTIONS = [
    PermissionOption(id="allowOnce", label="Allow once"),
    PermissionOption(id="allowAlways", label="Allow always"),
    PermissionOption(id="reject", label="Reject"),
]
ALLOWING = ("allowOnce", "allowAlways", "allowAlwaysServer", "runUnsandboxed", "raiseBudget")
"""The answers that let a call run (when they were offered)."""


def _options(tool_name: str, *, remember: bool) -> list[PermissionOption]:
    """The answers offered; without ``remember`` no "allow always" (a mode that was set asks each time)."""
    if not remember:
        return [OPTIONS[0], OPTIONS[2]]
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


Rule = tuple[str, str]
"""A remembered "allow always": ``(workspace, toolName)``."""


class PermissionRules:
    """ "Allow always" answers, per workspace, kept in a JSON file that several servers may share.

    The file is the truth: before each check the rules are read again when the file
    changed (another server on the same data folder added or revoked one), and every
    change is a read-modify-write of the file under an exclusive ``flock`` of
    ``.permissions.lock`` beside it, so two servers' saves merge and a save never writes
    back a rule another server revoked.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_path = path.with_name(".permissions.lock")
        self._rules: set[Rule] = set()
        self._stamp: tuple[int, ...] | None = None
        """What the file was (device, inode, size, change times) when last read or written."""
        self._refresh()

    def allows(self, workspace: str, tool_name: str) -> bool:
        """Whether an "allow always" covers the tool (an MCP tool's server's ``mcp__SERVER__*`` too)."""
        self._refresh()
        if (workspace, tool_name) in self._rules:
            return True
        server = server_of(tool_name)
        return server is not None and (workspace, server_wildcard(server)) in self._rules

    def list(self, workspace: str | None = None) -> list[PermissionRule]:
        self._refresh()
        return [
            PermissionRule(workspace=w, tool_name=t)
            for w, t in sorted(self._rules)
            if workspace is None or w == workspace
        ]

    async def add(self, workspace: str, tool_name: str) -> None:
        await asyncio.to_thread(self._update, lambda rules: rules.add((workspace, tool_name)))

    async def revoke(self, workspace: str, tool_name: str) -> bool:
        """Remove a rule; whether the file had it (a rule another server revoked first: ``False``)."""

        def discard(rules: set[Rule]) -> bool:
            had = (workspace, tool_name) in rules
            rules.discard((workspace, tool_name))
            return had

        return await asyncio.to_thread(self._update, discard)

    def _refresh(self) -> None:
        """Read the file again if it is not the one last read or written (else a ``stat`` is all)."""
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            self._rules, self._stamp = self._read(), stamp

    def _read(self) -> set[Rule]:
        try:
            data = read_json_file(self.path)
            return {(r["workspace"], r["toolName"]) for r in data.get("rules", [])}
        except FileNotFoundError:
            return set()
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            logger.warning("ignoring unreadable permission rules %s: %s", self.path, error)
            return set()

    def _update(self, change: Callable[[set[Rule]], Any]) -> Any:
        """Apply ``change`` to the rules as the file has them now, under the lock, and save them."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(lock, fcntl.LOCK_EX)
            rules = self._read()
            result = change(rules)
            self._save(rules)
            self._rules, self._stamp = rules, _stamp(self.path)
            return result
        finally:
            os.close(lock)  # releases the lock

    def _save(self, rules: set[Rule]) -> None:
        """Write the whole file atomically (temporary file, then rename)."""
        write_json_file(self.path, {"rules": [{"workspace": w, "toolName": t} for w, t in sorted(rules)]})


def _stamp(path: Path) -> tuple[int, ...] | None:
    """What tells one version of the file from another (``None``: there is none)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


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


def set_mode(modes: dict[str, PermissionMode], name: str) -> PermissionMode | None:
    """The mode ``modes`` give a tool: its own, its MCP server's, ``*``'s; ``None``: the default's."""
    server = server_of(name)
    wildcard = modes.get(server_wildcard(server)) if server is not None else None
    return modes.get(name) or wildcard or modes.get("*")


STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "review": 1, "deny": 2}
"""How much a mode holds a call back (``review`` and ``ask`` both wait for the user)."""


@dataclass(frozen=True)
class LoadedPolicy:
    """What of a stored session's policy applies when it is loaded, and what was left out."""

    permissions: dict[str, PermissionMode] | None
    allow_outside: bool
    warnings: list[str]


def loaded_policy(
    stored: dict[str, str] | None,
    stored_outside: bool,
    *,
    server: dict[str, PermissionMode],
    server_outside: bool,
    asked: dict[str, PermissionMode] | None,
    asked_outside: bool | None,
) -> LoadedPolicy:
    """A session file's policy as far as it may apply: it may narrow what the tools do, not widen it.

    Anyone who can write a session file (or hand one over) writes its header, so its
    modes apply only where they hold a call back at least as much as the server's own
    mode for that key (its ``permissions`` option over the defaults), and its
    ``allowOutsideWorkspace`` only where the server's option allows outside paths too.
    What the load request itself passes (``asked``, ``asked_outside``) is the user's
    word and applies as given, over the file's.
    """
    kept: dict[str, PermissionMode] = {}
    warnings = []
    for key, mode in (stored or {}).items():
        if mode not in STRICTNESS:
            warnings.append(f"The session file's permission {key!r}: {mode!r} is not a mode; left out.")
            continue
        baseline = set_mode(server, key) or DEFAULT_MODES.get(key, "ask")
        if STRICTNESS[mode] >= STRICTNESS[baseline]:
            kept[key] = mode  # type: ignore[assignment]  # a mode: checked just above
        elif asked is None or key not in asked:
            warnings.append(
                f"The session file's permission {key!r}: {mode!r} was not applied (it would let the "
                f"tool do more than this server's {baseline!r}); pass it in agent/loadSession's "
                "permissions to use it."
            )
    outside = stored_outside and server_outside
    if asked_outside is not None:
        outside = asked_outside
    elif stored_outside and not outside:
        warnings.append(
            "The session file's allowOutsideWorkspace was not applied: the tools stay inside the "
            "session's folder; pass allowOutsideWorkspace: true in agent/loadSession to allow paths outside."
        )
    permissions = {**kept, **(asked or {})}
    return LoadedPolicy(permissions or None, outside, warnings)


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

    The order: ``deny`` > ``review`` > an ``ask`` that was set > a remembered "allow
    always" > the defaults' ``ask`` > ``allow``. A mode set in ``modes`` (the server's
    options, the session's, a front's) is the user's word for this session, so a rule
    remembered for the folder never overrides it; the rule only answers the question
    the defaults would ask. A question for an ``ask`` that was set does not offer
    "allow always" (it could not skip the next one).

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
        chosen = set_mode(modes, name)
        mode = chosen or DEFAULT_MODES.get(name, "ask")
        insist = chosen in ("ask", "review")  # a question of a mode that was set: no rule answers it
        if outside is not None and name in WRITING_TOOLS and outside(ctx.args) and mode != "deny":
            rule = f"{name}:outside"
            mode = "ask"
        if mode == "deny":
            return BeforeToolCallResult(block=True, reason=f"The permission policy denies the {name} tool.")
        if mode == "review":
            if reviews is not None and name in WRITING_TOOLS:
                reviews.require(ctx.tool_call.id)
                return None
            mode = "ask"
        if mode == "allow" or (not insist and rules.allows(workspace, rule)):
            return None
        request = RequestPermissionParams(
            session_id=session_id,
            tool_call_id=ctx.tool_call.id,
            tool_name=name,
            args=to_wire(ctx.args),
            title=_title(name, ctx.args, outside_workspace=rule != name),
            options=_options(name, remember=not insist),
        )
        outcome = await _ask_unless_aborted(ask, request, signal)
        if outcome == "allowAlways":
            await rules.add(workspace, rule)
            return None
        server = server_of(name)
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
    offered = {option.id for option in request.options}
    if answer.outcome in offered and answer.outcome in ALLOWING:
        return answer.outcome
    return f"The {request.tool_name} call was rejected: {answer.reason}" if answer.reason else None


SANDBOX_ESCALATION = "agentls/sandboxEscalation"
"""The custom entry recording a question to run a ``bash`` call outside the sandbox, and its answer."""


def sandbox_escalation(
    *, session_id: str, ask: Ask, record: Callable[[str, Any], Awaitable[Any]]
) -> Callable[[str, str, str, AbortSignal | None], Awaitable[bool]]:
    """The ``bash`` tool's ``escalate``: asks the user whether a call the sandbox denied may run
    once outside it (Codex's escalation); each question and its answer are ``record``-ed."""

    async def escalate(tool_call_id: str, command: str, note: str, signal: AbortSignal | None) -> bool:
        request = RequestPermissionParams(
            session_id=session_id,
            tool_call_id=tool_call_id,
            tool_name="bash",
            args={"command": command},
            title=f"The sandbox denied the command: {command}\nRun it once outside the sandbox?\n{note}",
            options=[
                PermissionOption(id="runUnsandboxed", label="Run once outside the sandbox"),
                PermissionOption(id="reject", label="Keep the failure"),
            ],
            kind="sandbox",
        )
        allowed = await _ask_unless_aborted(ask, request, signal) == "runUnsandboxed"
        data = {"toolCallId": tool_call_id, "command": command, "allowed": allowed}
        await record(SANDBOX_ESCALATION, data)
        return allowed

    return escalate


async def ask_budget(
    ask: Ask, session_id: str, run_id: str, reached: BudgetUsage, raised: float, signal: AbortSignal | None
) -> bool:
    """Whether the user lets a run that reached a limit go on (the limit raised to ``raised``)."""
    noun = {"maxCostUsd": "dollars", "maxTokens": "tokens", "maxTurns": "turns"}[reached.kind]
    request = RequestPermissionParams(
        session_id=session_id,
        tool_call_id=run_id,
        tool_name="budget",
        args=reached.wire(),
        title=f"The {reached.scope} reached its budget: {reached.used:g} of {reached.limit:g} {noun}. Go on?",
        options=[
            PermissionOption(id="raiseBudget", label=f"Continue, the limit raised to {raised:g} {noun}"),
            PermissionOption(id="reject", label="Stop"),
        ],
        kind="budget",
        budget=reached,
    )
    return await _ask_unless_aborted(ask, request, signal) == "raiseBudget"


def _title(tool_name: str, args: Any, *, outside_workspace: bool = False) -> str:
    if tool_name == "bash" and isinstance(args, dict) and isinstance(args.get("command"), str):
        return f"Run the command: {args['command']}"
    if outside_workspace:
        return f"Allow {tool_name} of {args['path']}, outside the workspace?"
    if (server := server_of(tool_name)) is not None:
        return f"Allow the tool {tool_name.split('__', 2)[2]} of the MCP server {server}?"
    return f"Allow the {tool_name} tool?"
