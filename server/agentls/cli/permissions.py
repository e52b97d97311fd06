"""Permission questions on the terminal: the answers a question offers, with their keys (``run`` and
``chat``), ``run``'s asker, and the refusal when no terminal can answer."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.text import Text

from agentls.cli.printer import Transcript
from agentls.terminal_text import visible, visible_text


@dataclass(frozen=True)
class Choice:
    """One answer to a permission question on the terminal: its key, outcome and words."""

    key: str
    outcome: str
    words: str
    """``[o]nce``: what the prompt shows."""
    said: str
    """``allowed once``: what is shown once it is chosen."""


def _field(option: Any, name: str) -> str:
    value = option.get(name) if isinstance(option, dict) else getattr(option, name, None)
    return str(value or "")


def permission_choices(tool_name: str, options: list[Any]) -> list[Choice]:
    """The answers a question offers (its ``options``, each with ``id`` and ``label``), with keys:
    ``o`` once, ``a`` always (``t`` trust, for MCP servers' trust question), ``s`` every tool of
    the MCP server, ``r`` reject."""
    trust = tool_name == "mcp"
    choices: list[Choice] = []
    for option in options:
        outcome, label = (_field(option, "id"), _field(option, "label"))
        if outcome == "allowOnce":
            choices.append(Choice("o", outcome, "[o]nce", "allowed once"))
        elif outcome == "allowAlways" and trust:
            choices.append(
                Choice("t", outcome, "[t]rust", "trusted (in this folder, until the command changes)")
            )
        elif outcome == "allowAlways":
            choices.append(Choice("a", outcome, "[a]lways", "allowed always (in this folder)"))
        elif outcome == "allowAlwaysServer":
            every = label.split(": ", 1)[1] if label.startswith("Allow always: ") else label
            choices.append(
                Choice("s", outcome, f"[s] always: {every}", f"allowed always: {every} (in this folder)")
            )
        elif outcome == "reject":
            said = "not trusted: the servers stay stopped" if trust else "rejected"
            choices.append(Choice("r", outcome, "[r]eject", said))
    return choices


ANSWERS = {"once": "o", "always": "a", "y": "o", "yes": "o", "trust": "t", "server": "s"}
"""Words typed for the keys of :func:`permission_choices`."""


def _chosen(request: Any, typed: str) -> str:
    """The outcome of what was typed at a question: one of its choices' keys (or word), else a rejection."""
    typed = typed.strip().lower()
    key = ANSWERS.get(typed, typed[:1])
    choices = permission_choices(request.tool_name, request.options)
    if request.tool_name == "mcp" and key in ("a", "y", "o"):
        key = "t"
    return next((choice.outcome for choice in choices if choice.key == key), "reject")


def terminal_asker(transcript: Transcript | None) -> Any:
    """A permission question on the terminal, one at a time: ``o``nce, ``a``lways, ``s`` every
    tool of an MCP server, ``t``rust (MCP servers); anything else rejects."""
    turn = asyncio.Lock()
    console = Console(stderr=True, highlight=False)

    async def ask(request: Any) -> str:
        async with turn:
            if transcript is not None:
                transcript.pause()  # the live part of the screen would draw over the question
            choices = permission_choices(request.tool_name, request.options)
            words = [choice.words for choice in choices]
            if [choice.outcome for choice in choices] == ["allowOnce", "allowAlways", "reject"]:
                words[1] += " (in this folder)"
            elif request.tool_name == "mcp":
                words = [f"{words[0]} (in this folder)", *words[1:]]
            verb = "" if request.tool_name == "mcp" else "allow "
            question = (
                f"{verb}{', '.join(words[:-1])}, or {words[-1]}? " if len(words) > 1 else f"{words[0]}? "
            )
            # the whole title, newlines written out: no first line can stand for the command
            console.print(Text("\nagentls: ") + visible_text(request.title, newlines=False), soft_wrap=True)
            print(visible(question), end="", file=sys.stderr, flush=True)
            return _chosen(request, await typed_line())

    return ask


async def typed_line() -> str:
    """The line the user types next on standard input ("" at its end), read without a thread.

    A question can be given up while it waits (Ctrl+C, or the server cancels it when the run is
    aborted): a thread blocked in ``readline`` would then hold the process until a key is pressed,
    since the event loop waits for its threads before it exits. A terminal is read when it says
    a line is there; input the loop cannot watch (a regular file) is read at once.
    """
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def readable() -> None:
        if not line.done():
            line.set_result(sys.stdin.readline())

    try:
        loop.add_reader(sys.stdin.fileno(), readable)
    except (PermissionError, ValueError, OSError):
        return sys.stdin.readline()
    try:
        return await line
    finally:
        loop.remove_reader(sys.stdin.fileno())


def refuser() -> Any:
    """Without a terminal nobody can answer: each tool that asks is rejected, and the user told how."""
    told: set[str] = set()

    async def refuse(request: Any) -> str:
        if request.tool_name not in told:
            told.add(request.tool_name)
            print(visible(_refusal(request)), file=sys.stderr)
        return "reject"

    return refuse


def _refusal(request: Any) -> str:
    name = request.tool_name
    if name == "mcp":
        return _trust_refusal(request.args if isinstance(request.args, dict) else {})
    if name.startswith("mcp__") and name.count("__") >= 2:
        server = name.split("__", 2)[1]
        return (
            f"agentls: {name} needs permission and there is no terminal to ask on: rejected "
            f"(pass --allow {name} to run it, or --allow 'mcp__{server}__*' for every tool of {server})"
        )
    return (
        f"agentls: {name} needs permission and there is no terminal to ask on: "
        f"rejected (pass --allow {name} to run it)"
    )


def _trust_refusal(args: dict[str, Any]) -> str:
    """What a trust question that no terminal can answer left out: the project's files, its MCP servers."""
    parts = []
    if args.get("projectFiles"):
        parts.append(
            f"the project files of {args.get('folder') or 'the folder'} (AGENTS.md, skills, prompt "
            "templates) are left out (pass --approve to load them for this run)"
        )
    if args.get("servers") or not parts:
        files = ", ".join(args.get("files") or []) or "the project"
        parts.append(f"the MCP servers of {files} are not started (or pass your own with --mcp-config FILE)")
    return (
        "agentls: the folder needs your trust and there is no terminal to ask on: "
        + "; ".join(parts)
        + ". Trust it once with agentls run or chat on a terminal."
    )
