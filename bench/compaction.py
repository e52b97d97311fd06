"""Benchmark: what a compaction costs, and what building a model request costs, at 2,000 messages.

    .venv/bin/python bench/compaction.py [--messages 2000] [--repeat 20]

A coding session of MESSAGES messages: prompts, each followed by turns that read and
edit files (tool results of about 2 KB) and an answer. Measured, in milliseconds:

- building a request, before and after the compaction: the context from the transcript,
  the threshold check (Pi's token estimate), ``convert_to_llm``, the Anthropic request
  body (the provider's own conversion) encoded as JSON, and the body's size; both for the
  first request of a server (every message converted) and for the next turn's (the
  provider keeps the wire form of each message it converted);
- a compaction without the model's time (the faux model answers at once): choosing the
  cut and what to summarise, making the summary request (the conversation as text; its
  size), writing the entry to a session file and rebuilding the context;
- loading that session file again.

The session was never compacted, so its first summary request holds nearly all of it
(far more than a model takes: automatic compaction would have run long before). This
measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentls.ai import AssistantMessage, Context, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from agentls.ai.json_codec import json_bytes
from agentls.ai.providers.anthropic import AnthropicCompat, build_params, plan_thinking
from agentls.ai.providers.faux import FauxProvider
from agentls.ai.providers.wire_forms import MessageForms
from agentls.ai.types import AgentMessage, Model
from agentls.protocol import CompactionSettings
from agentls.session.compaction import Summarizer, compact, prepare_compaction
from agentls.session.compaction.serialize import serialize_conversation
from agentls.session.compaction.tokens import estimate_context_tokens
from agentls.session.history.store import SessionHeader, SessionStore
from agentls.session.history.transcript import Transcript, TranscriptEntry
from agentls.session.messages import compaction_summary_message, convert_to_llm
from agentls.tools import DiskWorkspace, coding_tools

MODEL = Model(id="claude-bench", api="anthropic-messages", provider="anthropic", context_window=200_000)


def session_messages(count: int) -> list[AgentMessage]:
    """Prompts, then read, edit and answer turns, until there are ``count`` messages."""
    messages: list[AgentMessage] = []
    turn = 0
    while len(messages) < count:
        if turn % 4 == 0:
            task = f"Task {turn}: fix the parser in module {turn}."
            messages.append(UserMessage(content=[TextContent(text=task)]))
        path = f"src/module_{turn}.py"
        name, arguments = ("read", {"path": path}) if turn % 2 else ("edit", {"path": path, "edits": []})
        call = ToolCall(id=f"c{turn}", name=name, arguments=arguments)
        usage = Usage(input=1000 + 40 * turn, output=30, total_tokens=1030 + 40 * turn)
        messages.append(
            AssistantMessage(
                content=[TextContent(text="Looking at it."), call], stop_reason="toolUse", usage=usage
            )
        )
        body = f"def function_{turn}(value):\n    return value * {turn}\n" * 40
        output = [TextContent(text=body)]
        messages.append(ToolResultMessage(tool_call_id=f"c{turn}", tool_name=name, content=output))
        if turn % 4 == 3:
            messages.append(AssistantMessage(content=[TextContent(text=f"Fixed module {turn}.")]))
        turn += 1
    return messages[:count]


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median time of ``function`` in milliseconds, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def request_body(transcript: Transcript, tools: list[Any], forms: MessageForms) -> bytes:
    """What one model request takes: the context, the threshold check, the conversion, the body."""
    messages = transcript.context()
    estimate_context_tokens(messages)
    context = Context(system_prompt="You are a coding agent.", messages=convert_to_llm(messages), tools=tools)
    compat = AnthropicCompat()
    thinking = plan_thinking(MODEL, context, None, compat, {})
    return json_bytes(build_params(MODEL, context, None, compat, thinking, {}, forms))


def report_request(label: str, transcript: Transcript, tools: list[Any], repeat: int) -> None:
    first, body = timed(lambda: request_body(transcript, tools, MessageForms()), repeat)
    forms = MessageForms()
    request_body(transcript, tools, forms)
    next_turn, _ = timed(lambda: request_body(transcript, tools, forms), repeat)
    count = len(json.loads(body)["messages"])
    print(
        f"  request {label}: {first:7.2f} ms first, {next_turn:7.2f} ms next turn, "
        f"{count} API messages, {len(body) / 1024:,.0f} KiB body"
    )


async def main(count: int, repeat: int) -> None:
    settings = CompactionSettings()
    messages = session_messages(count)
    tools = coding_tools(DiskWorkspace(tempfile.gettempdir()))
    print(f"{count} messages; keepRecentTokens {settings.keep_recent_tokens}")
    with tempfile.TemporaryDirectory() as folder:
        store = SessionStore(Path(folder))
        header = SessionHeader("bench", folder, 1_000, "", ("anthropic", MODEL.id), "off")
        writer = store.create(header)
        transcript = Transcript()
        for message in messages:
            transcript.append(TranscriptEntry(await writer.append_message(message), message))
        report_request("before compaction", transcript, tools, repeat)

        ms, preparation = timed(lambda: prepare_compaction(transcript, settings.keep_recent_tokens), repeat)
        assert preparation is not None
        summarised = len(preparation.messages_to_summarize) + len(preparation.turn_prefix_messages)
        print(f"  compaction: cut and what to summarise {ms:7.2f} ms ({summarised} messages summarised)")
        ms, text = timed(
            lambda: serialize_conversation(convert_to_llm(preparation.messages_to_summarize)), repeat
        )
        print(f"  compaction: the summary request's text {ms:7.2f} ms ({len(text):,} characters)")
        faux = FauxProvider([AssistantMessage(content=[TextContent(text="## Goal\nFix the parsers.")])] * 2)
        summarizer = Summarizer(MODEL, faux.stream, convert_to_llm, "off", None)
        start = time.perf_counter()
        result = await compact(preparation, summarizer, settings.reserve_tokens)
        summary_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        summary = compaction_summary_message(result.summary, result.tokens_before)
        entry_id = await writer.append_compaction(summary, result.compaction)
        transcript.append(TranscriptEntry(entry_id, summary, result.compaction))
        transcript.context()
        apply_ms = (time.perf_counter() - start) * 1000
        print(f"  compaction: summary request and answer (faux, no delay) {summary_ms:7.2f} ms")
        print(f"  compaction: entry written and context rebuilt {apply_ms:7.2f} ms")
        writer.close()
        report_request("after compaction", transcript, tools, repeat)

        ms, loaded = timed(lambda: store.load("bench"), max(1, repeat // 4))
        total, kept = len(loaded.messages), len(loaded.transcript.context())
        print(f"  loading the session file: {ms:7.2f} ms ({total} messages, {kept} in the context)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.messages, args.repeat))
