"""Benchmark: the kernel's own overhead per turn and per event.

    .venv/bin/python bench/loop_overhead.py [--turns 200] [--chunks 100] [--tools 3]

One prompt runs TURNS turns on the faux provider without streaming delays. Each
turn streams CHUNKS text chunks and calls TOOLS no-op tools in parallel; the last
batch asks to terminate, so the run ends after exactly TURNS turns. A listener
counts the events (as the server will forward them). It prints throughput from an
untraced run, then peak Python memory from a second run under tracemalloc.
This measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
import tracemalloc
from typing import Any

from agentls.agent import Agent, AgentState, AgentTool, AgentToolResult
from agentls.ai import AssistantMessage, TextContent, ToolCall
from agentls.ai.providers.faux import FauxProvider, TokenSize


def build_agent(turns: int, chunks: int, tools: int) -> tuple[Agent, list[int]]:
    responses = [
        AssistantMessage(
            content=[
                TextContent(text="x" * 4 * chunks),
                *(ToolCall(id=f"t{turn}-{i}", name="noop", arguments={"turn": turn}) for i in range(tools)),
            ],
            stop_reason="toolUse",
        )
        for turn in range(turns)
    ]

    async def noop(tool_call_id: str, args: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text="ok")], terminate=args["turn"] == turns - 1)

    tool = AgentTool(
        name="noop",
        parameters={"type": "object", "properties": {"turn": {"type": "integer"}}, "required": ["turn"]},
        execute=noop,
    )
    faux = FauxProvider(responses, token_size=TokenSize(1, 1))
    agent = Agent(initial_state=AgentState(model=faux.models[0], tools=[tool]), stream_fn=faux.stream)
    counter = [0, 0]

    def count(event: Any, signal: Any) -> None:
        counter[0] += 1
        if event.type == "turn_end":
            counter[1] += 1

    agent.subscribe(count)
    return agent, counter


async def run_once(turns: int, chunks: int, tools: int) -> tuple[float, int, int]:
    agent, counter = build_agent(turns, chunks, tools)
    started = time.perf_counter()
    await agent.prompt("go")
    return time.perf_counter() - started, counter[0], counter[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--tools", type=int, default=3)
    args = parser.parse_args()

    asyncio.run(run_once(5, args.chunks, args.tools))  # warm-up: imports, caches
    elapsed, events, turns = asyncio.run(run_once(args.turns, args.chunks, args.tools))
    tracemalloc.start()
    asyncio.run(run_once(args.turns, args.chunks, args.tools))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    max_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    print(f"turns            {turns} ({args.chunks} text chunks and {args.tools} parallel tool calls each)")
    print(f"events           {events} ({events / turns:.1f} per turn)")
    print(f"wall time        {elapsed:.3f} s")
    print(f"turns/s          {turns / elapsed:,.1f}")
    print(f"events/s         {events / elapsed:,.0f}")
    print(f"per event        {elapsed / events * 1e6:.1f} µs")
    print(f"peak Python heap {peak / 2**20:.1f} MiB during one run (tracemalloc)")
    print(f"max RSS          {max_rss_kib / 1024:.1f} MiB for the process")


if __name__ == "__main__":
    main()
