"""Benchmark: how soon a new server can take a prompt, and answer it.

    .venv/bin/python bench/startup.py [--runs 9] [--vs OTHER_TREE/server]

``agentls serve`` is spawned RUNS times and timed from the spawn: to the ``initialize``
answer, to the ``agent/newSession`` answer (a prompt possible), and to the first
``message_update`` of a 10-token answer from a mock Anthropic Messages API (the prompt is
sent the moment the session exists, as the bench of ``../shared/bench/`` does); CPU is the
server's, to its exit right after that answer. ``agentls acp`` is timed from the spawn to
its ``session/new`` answer. With ``--vs``, the same runs of the other tree (its ``server``
folder put first on ``PYTHONPATH``) are alternated with this one's. Medians are printed.

Compile both trees first (``python -m compileall -q server``): a shell with
``PYTHONDONTWRITEBYTECODE=1`` otherwise compiles every module at every start. This measures;
it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from many_sessions import NO_KEYS, answer, point_anthropic_at, serve_mock

Figures = dict[str, float]


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_frame(stdout: asyncio.StreamReader) -> dict[str, Any]:
    head = await stdout.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if b":" in line)
    return json.loads(await stdout.readexactly(length))


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def spawn(tree: Path | None, *args: str, cwd: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    environment = {**os.environ, **env}
    if tree is not None:
        environment["PYTHONPATH"] = str(tree)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls", *args, cwd=cwd, env=environment,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def serve_once(tree: Path | None, data: Path, cwd: Path) -> Figures:
    cpu, start = children_cpu(), time.perf_counter()
    server = await spawn(tree, "serve", cwd=cwd, env=NO_KEYS)
    assert server.stdin is not None and server.stdout is not None
    stdin, stdout = server.stdin, server.stdout

    async def answer_to(request_id: int) -> dict[str, Any]:
        while (message := await read_frame(stdout)).get("id") != request_id or "method" in message:
            if "method" in message and "id" in message:  # a request of the server's: no answer to give
                stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
        return message

    options = {"dataDir": str(data)}
    params = {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": options}
    stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
    await answer_to(1)
    initialized = time.perf_counter()
    stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "agent/newSession", "params": {"cwd": str(cwd)}}))
    session_id = (await answer_to(2))["result"]["sessionId"]
    session = time.perf_counter()
    prompt = {"sessionId": session_id, "text": "hi"}
    stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "agent/prompt", "params": prompt}))
    first_token = 0.0
    while (message := await read_frame(stdout)).get("method") != "agent/settled":
        event = message.get("params", {}).get("event", {}) if message.get("method") == "agent/event" else {}
        if not first_token and event.get("type") == "message_update":
            first_token = time.perf_counter()
    stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}))
    stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    await server.wait()
    return {
        "initialize": initialized - start,
        "session": session - start,
        "first token": first_token - start,
        "CPU": children_cpu() - cpu,
    }


async def acp_once(tree: Path | None, data: Path, cwd: Path) -> Figures:
    start = time.perf_counter()
    agent = await spawn(tree, "acp", "--data-dir", str(data), cwd=cwd, env=NO_KEYS)
    assert agent.stdin is not None and agent.stdout is not None
    stdin, stdout = agent.stdin, agent.stdout

    async def answer_to(request_id: int) -> None:
        while (message := json.loads(await stdout.readline())).get("id") != request_id or "method" in message:
            pass

    def send(request_id: int, method: str, params: dict[str, Any]) -> None:
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        stdin.write(json.dumps(request).encode() + b"\n")

    send(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    await answer_to(1)
    send(2, "session/new", {"cwd": str(cwd), "mcpServers": []})
    await answer_to(2)
    ready = time.perf_counter() - start
    stdin.close()
    await agent.wait()
    return {"session/new": ready}


async def run(runs: int, trees: dict[str, Path | None]) -> None:
    mock = await serve_mock(answer(10))
    with tempfile.TemporaryDirectory() as root:
        data, cwd = Path(root) / "data", Path(root) / "work"
        data.mkdir()
        cwd.mkdir()
        point_anthropic_at(data, mock.sockets[0].getsockname()[1])
        figures: dict[tuple[str, str], list[Figures]] = {}
        for _ in range(runs):
            for name, tree in trees.items():
                figures.setdefault((name, "serve"), []).append(await serve_once(tree, data, cwd))
                figures.setdefault((name, "acp"), []).append(await acp_once(tree, data, cwd))
    mock.close()
    for (name, front), rows in figures.items():
        medians = ", ".join(f"{key} {statistics.median(row[key] for row in rows):.3f} s" for key in rows[0])
        print(f"{name:6} agentls {front:5}  {medians}  (medians of {len(rows)}, from the spawn)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--vs", type=Path, help="another tree's server folder, alternated with this one")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"this": None}
    if args.vs is not None:
        trees["vs"] = args.vs.resolve()
    asyncio.run(run(args.runs, trees))


if __name__ == "__main__":
    main()
