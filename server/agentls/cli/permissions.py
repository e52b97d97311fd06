"""Permission questions on the terminal: the answers a question offers, with their keys (``run`` and
``chat``), ``run``'s asker, and the refusal when no terminal can answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agentls.protocol import RequestPermissionResult
from agentls.terminal_text import visible, visible_text

if TYPE_CHECKING:
    from rich.text import Text

    from agentls.cli.printer import Transcript

try:
    import termios
    import tty
except ImportError:  # Windows: a question is answered with a line there
    termios = None  # type: ignore[assignment]

T = TypeVar("T")


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
        elif outcome == "runUnsandboxed":
            choices.append(
                Choice("o", outcome, "run [o]nce outside the sandbox", "run once outside the sandbox")
            )
        elif outcome == "raiseBudget":
            raised = label.removeprefix("Continue, ")
            choices.append(Choice("c", outcome, f"[c]ontinue ({raised})", f"continued, {raised}"))
        elif outcome == "reject":
            said = "not trusted: the servers stay stopped" if trust else "rejected"
            choices.append(Choice("r", outcome, "[r]eject", said))
    return choices


KEYS = {"o": "o", "y": "o", "a": "a", "s": "s", "t": "t", "c": "c", "r": "r", "n": "r"}
"""The keys that answer a question (``run`` and ``chat``): each stands for a key of
:func:`permission_choices`."""

REJECT_KEYS = ("\x1b", "\x04")
"""Escape and Ctrl+D: a rejection, whatever the question offers."""

WORDS = {"once": "o", "always": "a", "yes": "o", "trust": "t", "server": "s", "continue": "c"}
"""Words typed (a line on input that is no terminal) for the keys of :func:`permission_choices`."""


def outcome_of_key(request: Any, key: str) -> str | None:
    """The outcome the key ``key`` gives to the question ``request`` (``None``: it offers none)."""
    choice_key = KEYS.get(key.lower())
    if choice_key is None:
        return None
    if request.tool_name == "mcp" and choice_key in ("a", "o"):
        choice_key = "t"  # the trust question: "yes" is trust
    if getattr(request, "kind", "tool") == "budget" and choice_key == "o":
        choice_key = "c"  # the budget question: "yes" is continue
    choices = permission_choices(request.tool_name, request.options)
    return next((choice.outcome for choice in choices if choice.key == choice_key), None)


def question_lines(request: Any) -> Text:
    """What a question is about: its whole title (no first line can stand for a command), and
    under it an MCP tool's arguments, whose title names only the tool: the whole call as compact
    JSON. Newlines and other control characters are written out."""
    from rich.text import Text  # rich only for a question: `agentls run -p` asks none

    shown = visible_text(request.title, newlines=False)
    if request.tool_name.startswith("mcp__") and request.args:
        arguments = json.dumps(request.args, ensure_ascii=False, separators=(",", ":"))
        shown.append_text(Text("\n  ") + visible_text(arguments, "dim", newlines=False))
    return shown


def _typed_outcome(request: Any, typed: str) -> str:
    """The outcome of a line typed at a question: a key of its choices (or a word), else a rejection."""
    typed = typed.strip().lower()
    return outcome_of_key(request, WORDS.get(typed, typed[:1])) or "reject"


def terminal_asker(transcript: Transcript | None) -> Any:
    """A permission question on the terminal, one at a time, answered with one key as in ``chat``:
    ``o``nce, ``a``lways, ``s`` every tool of an MCP server, ``t``rust (MCP servers), ``r``eject
    (or ``n``, Escape); other keys do nothing. Input that is no terminal answers with a line."""
    from rich.console import Console
    from rich.text import Text

    turn = asyncio.Lock()
    console = Console(stderr=True, highlight=False)

    async def ask(request: Any) -> str:
        async with turn:
            if transcript is not None:
                transcript.pause()  # the live part of the screen would draw over the question
            choices = permission_choices(request.tool_name, request.options)
            with key_input() as keys:
                console.print(Text("\nagentls: ") + question_lines(request), soft_wrap=True)
                print(visible(_question(request.tool_name, choices)), end="", file=sys.stderr, flush=True)
                if not keys:
                    return _typed_outcome(request, await typed_line())
                outcome = None
                while outcome is None:
                    outcome = _pressed_outcome(request, await typed_keys())
            said = next((choice.said for choice in choices if choice.outcome == outcome), "rejected")
            print(said, file=sys.stderr, flush=True)
            return outcome

    return ask


def _question(tool_name: str, choices: list[Choice]) -> str:
    """``allow [o]nce, [a]lways (in this folder), or [r]eject? ``."""
    words = [choice.words for choice in choices]
    if [choice.outcome for choice in choices] == ["allowOnce", "allowAlways", "reject"]:
        words[1] += " (in this folder)"
    elif tool_name == "mcp":
        words = [f"{words[0]} (in this folder)", *words[1:]]
    asks_to_allow = tool_name != "mcp" and choices[0].outcome not in ("runUnsandboxed", "raiseBudget")
    verb = "allow " if asks_to_allow else ""
    return f"{verb}{', '.join(words[:-1])}, or {words[-1]}? " if len(words) > 1 else f"{words[0]}? "


def _pressed_outcome(request: Any, pressed: str) -> str | None:
    """The first key of ``pressed`` that answers the question (Escape, Ctrl+D: a rejection); a
    special key's sequence (an arrow: Escape and more) answers nothing. The input's end rejects."""
    if not pressed or pressed in REJECT_KEYS:
        return "reject"
    if pressed.startswith("\x1b"):
        return None
    return next((outcome for key in pressed if (outcome := outcome_of_key(request, key))), None)


@contextlib.contextmanager
def key_input() -> Iterator[bool]:
    """Keys read as they are pressed, without Enter, while a question is asked; whether stdin is a
    terminal that can do so. Keys typed before the question are dropped (they never answer one
    that was not seen yet); Ctrl+C still interrupts. The terminal's mode is put back after."""
    if termios is None or not sys.stdin.isatty():
        yield False
        return
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd, termios.TCSANOW)
    termios.tcflush(fd, termios.TCIFLUSH)
    try:
        yield True
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


async def typed_keys() -> str:
    """The keys pressed next on the terminal (one key, or a special key's whole sequence)."""
    return (await _stdin_ready(lambda: os.read(sys.stdin.fileno(), 32))).decode("utf-8", "replace")


async def typed_line() -> str:
    """The line the user types next on standard input ("" at its end), read without a thread."""
    return await _stdin_ready(sys.stdin.readline)


async def _stdin_ready(read: Callable[[], T]) -> T:
    """``read()`` once standard input has something, waited for without a thread.

    A question can be given up while it waits (Ctrl+C, or the server cancels it when the run is
    aborted): a thread blocked in a read would then hold the process until a key is pressed,
    since the event loop waits for its threads before it exits. Input the loop cannot watch (a
    regular file) is read at once.
    """
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[T] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(read())

    try:
        loop.add_reader(sys.stdin.fileno(), readable)
    except (PermissionError, ValueError, OSError):
        return read()
    try:
        return await ready
    finally:
        loop.remove_reader(sys.stdin.fileno())


def refuser() -> Any:
    """Without a terminal nobody can answer: each tool that asks is rejected, saying so to the model
    (not that a user refused), and the user is told how to allow it."""
    told: set[str] = set()

    async def refuse(request: Any) -> RequestPermissionResult:
        if request.tool_name not in told:
            told.add(request.tool_name)
            print(visible(_refusal(request)), file=sys.stderr)
        if request.tool_name == "mcp":  # the trust question: no tool call to tell
            return RequestPermissionResult(outcome="reject")
        if getattr(request, "kind", "tool") != "tool":  # the sandbox's or the budget's: the failure stands
            return RequestPermissionResult(outcome="reject", reason=NO_TERMINAL)
        return RequestPermissionResult(outcome="reject", reason=f"{NO_TERMINAL}; {_allow(request.tool_name)}")

    return refuse


NO_TERMINAL = "no terminal to ask on"


def _allow(name: str) -> str:
    """``--allow bash allows it``: how the command line lets a tool run unasked."""
    server = _server_of(name)
    every = f" (--allow 'mcp__{server}__*': every tool of {server})" if server else ""
    return f"--allow {name} allows it{every}"


def _refusal(request: Any) -> str:
    """What the user is told on stderr of a question no terminal could answer."""
    name = request.tool_name
    if name == "mcp":
        return _trust_refusal(request.args if isinstance(request.args, dict) else {})
    if getattr(request, "kind", "tool") == "sandbox":
        return f"agentls: the sandbox denied a bash command and there is {NO_TERMINAL}: it stays failed"
    if getattr(request, "kind", "tool") == "budget":
        return (
            f"agentls: the run reached its budget and there is {NO_TERMINAL}: it stops "
            "(pass a higher --max-turns or --max-cost)"
        )
    if server := _server_of(name):
        return (
            f"agentls: {name} needs permission and there is {NO_TERMINAL}: rejected "
            f"(pass --allow {name} to run it, or --allow 'mcp__{server}__*' for every tool of {server})"
        )
    return (
        f"agentls: {name} needs permission and there is {NO_TERMINAL}: rejected "
        f"(pass --allow {name} to run it)"
    )


def _server_of(name: str) -> str | None:
    """The MCP server of a tool ``mcp__SERVER__TOOL``."""
    return name.split("__", 2)[1] if name.startswith("mcp__") and name.count("__") >= 2 else None


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
