"""Terminal rendering of agent events (in their wire shape), for ``agentls demo`` and ``agentls run``.

Lifecycle events as dim lines, the assistant's text streamed inline, thinking in
italics, tool calls with their arguments, progress and results.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console


def _texts(content: Any, image: str = "[image]") -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") if b.get("type") == "text" else image for b in content or [])


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
            c.print(update.get("delta", ""), end="", style="italic dim" if kind == "thinking_delta" else None)
        elif kind in ("text_end", "thinking_end", "toolcall_end"):
            self._end_stream()
            if kind == "toolcall_end":
                call = update.get("toolCall", {})
                arguments = json.dumps(call.get("arguments"), ensure_ascii=False, separators=(",", ":"))
                c.print(f"  [dim]│[/dim] [cyan]tool call[/cyan] {call.get('name')} {arguments}")

    def __call__(self, event: dict[str, Any]) -> None:
        c = self.console
        kind = event.get("type")
        message = event.get("message") or {}
        if kind == "message_update":
            self._update(event.get("assistantMessageEvent") or {})
        elif kind == "message_start" and message.get("role") == "user":
            c.print(f"[bold]{kind}[/bold] [magenta]user[/magenta] {_texts(message.get('content'))!r}")
        elif kind == "message_end" and message.get("role") == "assistant":
            self._end_stream()
            suffix = f" [red]{message['errorMessage']}[/red]" if message.get("errorMessage") else ""
            stop = f"[dim]stopReason={message.get('stopReason')}[/dim]"
            c.print(f"[bold]{kind}[/bold] [magenta]assistant[/magenta] {stop}{suffix}")
        elif kind == "tool_execution_start":
            arguments = json.dumps(event.get("args"), ensure_ascii=False, separators=(",", ":"))
            c.print(f"[bold]{kind}[/bold] [cyan]{event.get('toolName')}[/cyan] {arguments}")
        elif kind == "tool_execution_update":
            progress = _texts((event.get("partialResult") or {}).get("content"))
            c.print(f"  [dim]… {event.get('toolName')}: {progress}[/dim]")
        elif kind == "tool_execution_end":
            status = "[red]error[/red]" if event.get("isError") else "[green]done[/green]"
            result = _texts((event.get("result") or {}).get("content"))
            c.print(f"[bold]{kind}[/bold] [cyan]{event.get('toolName')}[/cyan] {status} {result}")
        elif kind == "agent_end":
            c.print(f"[bold]{kind}[/bold] [dim]{len(event.get('messages') or [])} new messages[/dim]")
        elif self.verbose:
            role = message.get("role")
            c.print(f"[bold]{kind}[/bold]" + (f" [magenta]{role}[/magenta]" if role else ""))
