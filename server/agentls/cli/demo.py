"""``agentls demo``: the agent loop in-process; the faux model calls two tools, then answers.

Everything is local and scripted, so it runs anywhere without a key or a network. The
kernel's event stream is shown as it is (:class:`~agentls.cli.printer.EventPrinter`), or as
JSON lines in Pi's shapes.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import operator
import sys
from typing import Any

from rich.console import Console

from agentls import __version__
from agentls.agent import Agent, AgentState, AgentTool, AgentToolResult
from agentls.ai import AbortSignal, TextContent, to_wire
from agentls.ai.providers.faux import FauxProvider, FauxScript, FauxScriptError, TokenSize
from agentls.cli.options import write_json
from agentls.cli.printer import EventPrinter
from agentls.fronts.lsp.event_wire import event_to_wire

DEMO_PROMPT = "What is 6 * 7, and how many words are in 'the quick brown fox jumps over the lazy dog'?"

DEMO_SCRIPT: dict[str, Any] = {
    "responses": [
        {
            "content": [
                {
                    "type": "thinking",
                    "thinking": "Two independent questions: one calculation, one word count.",
                },
                {"type": "text", "text": "I'll compute both at once."},
                {
                    "type": "toolCall",
                    "id": "call-1",
                    "name": "calculate",
                    "arguments": {"expression": "6 * 7"},
                },
                {
                    "type": "toolCall",
                    "id": "call-2",
                    "name": "count_words",
                    "arguments": {"text": "the quick brown fox jumps over the lazy dog"},
                },
            ],
            "stopReason": "toolUse",
        },
        {"content": "6 * 7 is **42**, and the sentence has **9** words.", "stopReason": "stop"},
    ],
    "tokenSize": {"min": 1, "max": 3},
}

_OPERATORS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def evaluate(expression: str) -> float | int:
    """Evaluate plain arithmetic (numbers, + - * / // % **, parentheses) without ``eval``."""

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)
        ):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            if isinstance(node.op, ast.Pow) and abs(walk(node.right)) > 100:
                raise ValueError("exponent too large")
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.operand))
        raise ValueError(f"unsupported expression: {ast.unparse(node)}")

    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as error:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from error
    try:
        return walk(tree)
    except ZeroDivisionError as error:
        raise ValueError("division by zero") from error


async def _calculate(
    tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: Any
) -> AgentToolResult:
    value = evaluate(args["expression"])
    return AgentToolResult(
        content=[TextContent(text=f"{args['expression']} = {value}")], details={"value": value}
    )


async def _count_words(
    tool_call_id: str, args: Any, signal: AbortSignal | None, on_update: Any
) -> AgentToolResult:
    words = args["text"].split()
    for done in range(0, len(words), 3):
        if signal is not None and signal.aborted:
            raise RuntimeError("count aborted")
        if on_update is not None:
            on_update(AgentToolResult(content=[TextContent(text=f"counted {done} of {len(words)}")]))
        await asyncio.sleep(0.01)
    return AgentToolResult(content=[TextContent(text=f"{len(words)} words")], details={"count": len(words)})


def demo_tools() -> list[AgentTool]:
    return [
        AgentTool(
            name="calculate",
            label="Calculate",
            description="Evaluate an arithmetic expression.",
            parameters={
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
            execute=_calculate,
        ),
        AgentTool(
            name="count_words",
            label="Count words",
            description="Count the words of a text, reporting progress.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            execute=_count_words,
        ),
    ]


def demo_agent(script: FauxScript | None = None, tokens_per_second: float | None = None) -> Agent:
    """An agent on the faux provider with the demo tools; ``script`` replaces the built-in one."""
    script = script or FauxScript.from_json(DEMO_SCRIPT)
    faux = FauxProvider(
        script.responses,
        token_size=script.token_size or TokenSize(1, 3),
        tokens_per_second=tokens_per_second if tokens_per_second is not None else script.tokens_per_second,
    )
    return Agent(
        initial_state=AgentState(
            system_prompt="You are a helpful assistant with a calculator and a word counter.",
            model=faux.models[0],
            thinking_level="low",
            tools=demo_tools(),
        ),
        stream_fn=faux.stream,
    )


async def demo(args: argparse.Namespace) -> int:
    """``agentls demo``: returns the exit code."""
    try:
        script = FauxScript.from_file(args.script) if args.script else None
    except FauxScriptError as error:
        print(f"agentls demo: {error}", file=sys.stderr)
        return 2
    agent = demo_agent(script, tokens_per_second=args.tokens_per_second)
    if args.json:
        agent.subscribe(lambda event, signal: write_json(to_wire(event)))
    else:
        console = Console(highlight=False)
        console.rule(f"agentls {__version__} · offline demo of the agent loop (faux provider)")
        printer = EventPrinter(console)
        agent.subscribe(lambda event, signal: printer(event_to_wire(event)))
    await agent.prompt(args.prompt)
    if agent.state.error_message:
        print(f"agentls demo: the run ended with an error: {agent.state.error_message}", file=sys.stderr)
        return 1
    return 0
