"""Terminal rendering of agent events (in their wire shape), for ``agentls demo`` and ``agentls run``.

Lifecycle events as dim lines, the assistant's text streamed inline, thinking in
italics, tool calls with their arguments, progress and results.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape


def _texts(content: Any, image: str = "[image]") -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") if b.get("type") == "text" else image for b in content or [])


def _preview(text: str, max_lines: int = 6) -> str:
    """The start of a long tool result: a few lines, each shortened."""
    lines = text.splitlines() or [""]
    shown = [line if len(line) <= 160 else line[:159] + "…" for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"… ({len(lines) - max_lines} more lines)")
    return "\n".join(shown)


def _bash_line(message: dict[str, Any]) -> str:
    """A command the user ran (``agent/bash``), as one line."""
    status = "cancelled" if message.get("cancelled") else f"exit {message.get('exitCode')}"
    excluded = ", not sent to the model" if message.get("excludeFromContext") else ""
    command = escape(str(message.get("command")))
    return f"[magenta]bashExecution[/magenta] $ {command} [dim]({status}{excluded})[/dim]"


def compaction_line(note: dict[str, Any]) -> str:
    """The end of a compaction (an ``agent/compaction`` notification's params), as one line."""
    reason = escape(str(note.get("reason")))
    if note.get("errorMessage"):
        outcome = f"[red]{escape(str(note['errorMessage']))}[/red]"
    elif note.get("aborted"):
        outcome = "[yellow]aborted[/yellow]"
    else:
        after = note.get("tokensAfter")
        outcome = f"{note.get('tokensBefore')} → {after if after is not None else '?'} tokens"
        if note.get("willRetry"):
            outcome += ", retrying"
    return f"[bold]compaction[/bold] [dim]({reason})[/dim] {outcome}"


class EventPrinter:
    """Prints one agent event (a wire dict) at a time."""

    def __init__(self, console: Console, *, verbose: bool = True) -> None:
        self.console = console
        self.verbose = verbose
        self.streaming = False

    def _end_stream(self) -> None:
        if self.streaming:
            self.console.print()
            self.streaming = False

    def _update(self, update: dict[str, Any]) -> None:
        c = self.console
        kind = update.get("type")
        if kind in ("text_delta", "thinking_delta"):
            if not self.streaming:
                c.print("  [dim]│[/dim] ", end="")
                self.streaming = True
            style = "italic dim" if kind == "thinking_delta" else None
            c.print(update.get("delta", ""), end="", style=style, markup=False)
        elif kind in ("text_end", "thinking_end", "toolcall_end"):
            self._end_stream()
            if kind == "toolcall_end":
                call = update.get("toolCall", {})
                arguments = json.dumps(call.get("arguments"), ensure_ascii=False, separators=(",", ":"))
                name = escape(str(call.get("name")))
                c.print(f"  [dim]│[/dim] [cyan]tool call[/cyan] {name} {escape(arguments)}")

    def compaction(self, note: dict[str, Any]) -> None:
        """An ``agent/compaction`` notification: one line when it ends."""
        if note.get("phase") == "end":
            self._end_stream()
            self.console.print(compaction_line(note))

    def __call__(self, event: dict[str, Any]) -> None:
        c = self.console
        kind = event.get("type")
        message = event.get("message") or {}
        if kind == "message_update":
            self._update(event.get("assistantMessageEvent") or {})
        elif kind == "message_start" and message.get("role") == "user":
            c.print(
                f"[bold]{kind}[/bold] [magenta]user[/magenta] {escape(repr(_texts(message.get('content'))))}"
            )
        elif kind == "message_end" and message.get("role") == "assistant":
            self._end_stream()
            suffix = f" [red]{escape(message['errorMessage'])}[/red]" if message.get("errorMessage") else ""
            stop = f"[dim]stopReason={message.get('stopReason')}[/dim]"
            c.print(f"[bold]{kind}[/bold] [magenta]assistant[/magenta] {stop}{suffix}")
        elif kind == "message_end" and message.get("role") == "bashExecution":
            c.print(f"[bold]{kind}[/bold] {_bash_line(message)}")
        elif kind == "tool_execution_start":
            arguments = json.dumps(event.get("args"), ensure_ascii=False, separators=(",", ":"))
            c.print(
                f"[bold]{kind}[/bold] [cyan]{escape(str(event.get('toolName')))}[/cyan] {escape(arguments)}"
            )
        elif kind == "tool_execution_update":
            progress = _texts((event.get("partialResult") or {}).get("content"))
            c.print(f"  [dim]… {escape(str(event.get('toolName')))}: {escape(progress)}[/dim]")
        elif kind == "tool_execution_end":
            status = "[red]error[/red]" if event.get("isError") else "[green]done[/green]"
            result = _preview(_texts((event.get("result") or {}).get("content")))
            name = escape(str(event.get("toolName")))
            c.print(f"[bold]{kind}[/bold] [cyan]{name}[/cyan] {status} {escape(result)}")
        elif kind == "agent_end":
            c.print(f"[bold]{kind}[/bold] [dim]{len(event.get('messages') or [])} new messages[/dim]")
        elif self.verbose:
            role = message.get("role")
            c.print(f"[bold]{kind}[/bold]" + (f" [magenta]{role}[/magenta]" if role else ""))
