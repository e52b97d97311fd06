"""The ``agentls`` command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from agentls import __version__
from agentls.agent import AgentEvent
from agentls.ai import AbortSignal, dumps_compact, to_wire
from agentls.ai.providers.faux import FauxScript, FauxScriptError
from agentls.demo import DEMO_PROMPT, demo_agent


class EventPrinter:
    """Shows agent events as they happen: lifecycle lines, streamed text inline, tool rows."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.streaming = False

    def _end_stream(self) -> None:
        if self.streaming:
            self.console.print()
            self.streaming = False

    def _update(self, update: Any) -> None:
        c = self.console
        if update.type in ("text_delta", "thinking_delta"):
            if not self.streaming:
                c.print("  [dim]│[/dim] ", end="")
                self.streaming = True
            c.print(update.delta, end="", style="italic dim" if update.type == "thinking_delta" else None)
        elif update.type in ("text_end", "thinking_end", "toolcall_end"):
            self._end_stream()
            if update.type == "toolcall_end":
                arguments = dumps_compact(update.tool_call.arguments)
                c.print(f"  [dim]│[/dim] [cyan]tool call[/cyan] {update.tool_call.name} {arguments}")

    def __call__(self, event: AgentEvent, signal: AbortSignal) -> None:
        c = self.console
        match event.type:
            case "message_update":
                self._update(event.assistant_message_event)
            case "message_start" | "message_end":
                message = event.message
                c.print(f"[bold]{event.type}[/bold] [magenta]{message.role}[/magenta]", end="")
                if event.type == "message_start" and message.role == "user":
                    content = message.content
                    shown = (
                        content
                        if isinstance(content, str)
                        else " ".join(getattr(b, "text", "") for b in content)
                    )
                    c.print(f" {shown!r}", highlight=False)
                elif event.type == "message_end" and message.role == "assistant":
                    c.print(f" [dim]stopReason={message.stop_reason}[/dim]")
                else:
                    c.print()
            case "tool_execution_start":
                c.print(
                    f"[bold]{event.type}[/bold] [cyan]{event.tool_name}[/cyan] {dumps_compact(event.args)}"
                )
            case "tool_execution_update":
                texts = " ".join(getattr(b, "text", "") for b in event.partial_result.content)
                c.print(f"  [dim]… {event.tool_name}: {texts}[/dim]")
            case "tool_execution_end":
                texts = " ".join(getattr(b, "text", "[image]") for b in event.result.content)
                status = "[red]error[/red]" if event.is_error else "[green]done[/green]"
                c.print(f"[bold]{event.type}[/bold] [cyan]{event.tool_name}[/cyan] {status} {texts}")
            case "agent_end":
                c.print(f"[bold]{event.type}[/bold] [dim]{len(event.messages)} new messages[/dim]")
            case _:
                c.print(f"[bold]{event.type}[/bold]")


async def _run_demo(args: argparse.Namespace) -> int:
    try:
        script = FauxScript.from_file(args.script) if args.script else None
    except FauxScriptError as error:
        print(f"agentls demo: {error}", file=sys.stderr)
        return 2
    agent = demo_agent(script, tokens_per_second=args.tokens_per_second)
    if args.json:

        def write_json(event: AgentEvent, signal: AbortSignal) -> None:
            sys.stdout.write(json.dumps(to_wire(event), ensure_ascii=False) + "\n")

        agent.subscribe(write_json)
    else:
        console = Console(highlight=False)
        console.rule(f"agentls {__version__} · offline demo of the agent loop (faux provider)")
        agent.subscribe(EventPrinter(console))
    await agent.prompt(args.prompt)
    if agent.state.error_message:
        print(f"agentls demo: the run ended with an error: {agent.state.error_message}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentls", description="A coding agent for editors and scripts.")
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="run the agent loop offline on the scripted faux model and show its event stream"
    )
    demo.add_argument(
        "--prompt", default=DEMO_PROMPT, help="the user prompt (the model's answers are scripted)"
    )
    demo.add_argument(
        "--script", type=Path, help="a faux script (JSON, the conformance scenario 'model' format)"
    )
    demo.add_argument(
        "--json", action="store_true", help="print every event as one JSON line, in Pi's shapes"
    )
    demo.add_argument(
        "--tokens-per-second",
        type=float,
        default=None,
        metavar="N",
        help="streaming pace of the faux model (default: the script's, or 150; 0 for no delay)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.tokens_per_second is None and not args.script:
            args.tokens_per_second = 150.0
        if args.tokens_per_second is not None and args.tokens_per_second < 0:
            parser.error("--tokens-per-second must be 0 or more")
        return asyncio.run(_run_demo(args))
    parser.print_help()
    return 2


def console_main(argv: Any = None) -> None:
    sys.exit(main(argv))


if __name__ == "__main__":
    console_main()
