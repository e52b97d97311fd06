"""Benchmark: one server, many sessions streaming at once.

    .venv/bin/python bench/many_sessions.py [--sessions 20] [--tokens 20000] [--each]

``agentls serve`` (a subprocess, driven by the Python client) runs SESSIONS sessions
on the built-in Anthropic provider, pointed at a mock Messages API on 127.0.0.1 that
answers every request with one text block of TOKENS tokens (4 characters each, every
server-sent event its own HTTP chunk, no delay: ``../shared/bench``'s long-stream). All
prompts are sent at once. Printed: the wall time from the first prompt to the last
``agent/settled``, the events the client received and their rate, the streamed tokens
per second, the server's CPU time over the same span and its peak RSS. ``--each`` runs
it again with ``coalesceDeltas: false`` (one event per delta: far more events, and the
client's own parsing then weighs on the wall time). The text of every answer is checked
against what the mock sent. This measures; it asserts nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from agentls.client import AgentClient

TOKEN = "abc "
TEXT_BLOCK = {"type": "text", "text": ""}
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
NO_KEYS = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}


def sse(kind: str, data: dict) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def answer(tokens: int) -> list[bytes]:
    """The server-sent events of one answer, each sent as its own HTTP chunk."""
    usage = {"input_tokens": 100, "output_tokens": 0}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "mock", "usage": usage}
    events = [
        sse("message_start", {"type": "message_start", "message": message}),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        ),
    ]
    delta = sse(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": TOKEN}},
    )
    events.extend([delta] * tokens)
    events += [
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": tokens},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return [b"%x\r\n%s\r\n" % (len(event), event) for event in events]


def point_anthropic_at(data: Path, port: int) -> None:
    """A ``models.json`` in the data folder sending the anthropic provider to the mock on ``port``."""
    provider = {"baseUrl": f"http://127.0.0.1:{port}", "apiKey": "bench-key", "maxRetries": 0}
    (data / "models.json").write_text(json.dumps({"providers": {"anthropic": provider}}))


async def serve_mock(chunks: list[bytes]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                writer.write(HEAD)
                for index, chunk in enumerate(chunks):
                    writer.write(chunk)
                    if index % 64 == 0:
                        await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def server_pid() -> int:
    """The one child process of this benchmark: the agentls server."""
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    if len(children) != 1:
        raise RuntimeError(f"expected one server process, found {children}")
    return int(children[0])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def run(sessions: int, tokens: int, coalesce: bool) -> None:
    mock = await serve_mock(answer(tokens))
    port = mock.sockets[0].getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        data.mkdir()
        point_anthropic_at(data, port)
        options = {"dataDir": str(data), "coalesceDeltas": coalesce}
        keys = {
            "ANTHROPIC_API_KEY": "",
            "ANTHROPIC_BASE_URL": "",
            "OPENAI_API_KEY": "",
            "OPENAI_BASE_URL": "",
        }
        async with AgentClient(initialization_options=options, env=keys, cwd=folder) as client:
            pid = server_pid()
            ids = [await client.new_session(cwd=folder) for _ in range(sessions)]
            texts = dict.fromkeys(ids, "")
            events = 0
            async with client.subscribe() as notes:
                cpu_before = cpu_seconds(pid)
                start = time.perf_counter()
                runs = await asyncio.gather(
                    *(client.prompt(session, "Write a long answer.") for session in ids)
                )
                pending = {r.run_id for r in runs}
                async for note in notes:
                    if note.method == "agent/event":
                        events += 1
                        event = note.params["event"]
                        if event["type"] == "message_update":
                            update = event["assistantMessageEvent"]
                            if update["type"] == "text_delta":
                                texts[note.params["sessionId"]] += update["delta"]
                    elif note.method == "agent/settled":
                        pending.discard(note.params["runId"])
                        if not pending:
                            break
                wall = time.perf_counter() - start
                cpu = cpu_seconds(pid) - cpu_before
            rss = peak_rss_mib(pid)
    mock.close()
    intact = all(text == TOKEN * tokens for text in texts.values())
    label = "coalesced (default)" if coalesce else "one event per delta"
    print(f"{label}: {sessions} sessions x {tokens} tokens")
    print(f"  wall          {wall:8.3f} s (first prompt to last agent/settled)")
    print(f"  events        {events:8d} ({events / wall:,.0f}/s)")
    print(f"  tokens/s      {sessions * tokens / wall:12,.0f}")
    print(f"  server CPU    {cpu:8.2f} s ({cpu / wall:.0%} of one core)")
    print(f"  peak RSS      {rss:8.1f} MiB")
    print(f"  text intact   {intact}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=20000)
    parser.add_argument("--each", action="store_true", help="also run with coalesceDeltas: false")
    args = parser.parse_args()
    asyncio.run(run(args.sessions, args.tokens, coalesce=True))
    if args.each:
        asyncio.run(run(args.sessions, args.tokens, coalesce=False))


if __name__ == "__main__":
    main()
