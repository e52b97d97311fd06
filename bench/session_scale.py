"""Benchmark: what sessions cost a server, open and stored.

    .venv/bin/python bench/session_scale.py [--idle 100] [--stored 1000] [--turns 5]

``agentls serve`` (a subprocess, driven by the Python client) is measured three ways:

- **idle sessions**: the server's RSS right after start, with 1 and with IDLE sessions that
  each had one short turn against a mock Anthropic Messages API (``bench/many_sessions.py``'s)
  and now sit idle; the cost of one more session is the difference over IDLE - 1.
- **stored sessions**: STORED session files in the data dir (copies of one faux session of
  TURNS turns, each a ``read`` of a 2 KB file and an answer, with their own ids, folders and
  times). ``agent/listSessions`` is timed on a fresh server (first listing), again on the
  same server, on a second fresh server, and with ``cwd`` (a tenth of them match); then 100
  of them are loaded (``agent/loadSession``) and the server's RSS printed before and after.
- **a live session meanwhile**: during a fresh server's first listing (of a copy of the same
  files), ``agent/getState`` of a live session is sent back to back; printed are the listing's
  time, how many answered before it and their latencies (a listing that holds the event loop
  lets none answer before it ends).

Times are wall seconds seen by the client. This measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentls.client import AgentClient

sys.path.insert(0, str(Path(__file__).parent))
from many_sessions import NO_KEYS, answer, point_anthropic_at, serve_mock

LOADED = 100
"""Stored sessions loaded after the listings."""


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def server_pid(client: AgentClient) -> int:
    process = client._rpc._server
    assert process is not None
    return process.pid


async def idle_sessions(count: int, own_folders: bool) -> dict[str, float]:
    mock = await serve_mock(answer(50))
    port = mock.sockets[0].getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        data.mkdir()
        point_anthropic_at(data, port)
        async with AgentClient(
            initialization_options={"dataDir": str(data)}, env=NO_KEYS, cwd=folder
        ) as client:
            pid = server_pid(client)
            figures = {"0": rss_mib(pid)}
            for index in range(count):
                cwd = Path(folder) / f"project{index}" if own_folders else Path(folder)
                cwd.mkdir(exist_ok=True)
                session = await client.new_session(cwd=str(cwd))
                await client.prompt(session, "Say hello.", wait=True)
                if index == 0:
                    figures["1"] = rss_mib(pid)
            figures[str(count)] = rss_mib(pid)
    mock.close()
    return figures


def faux_turns(turns: int) -> list[dict[str, Any]]:
    responses: list[dict[str, Any]] = []
    for turn in range(turns):
        call = {"type": "toolCall", "id": f"c{turn}", "name": "read", "arguments": {"path": "notes.txt"}}
        responses.append({"content": [{"type": "text", "text": "Let me look."}, call]})
        responses.append({"content": f"Turn {turn}: the notes say what they say. " * 8})
    return responses


async def template_session(folder: Path, turns: int) -> list[dict[str, Any]]:
    """The lines of one session file of ``turns`` turns, made by a faux server."""
    data = folder / "template"
    work = folder / "work"
    work.mkdir()
    (work / "notes.txt").write_text("A line of notes about the project.\n" * 60)
    script = folder / "faux.json"
    script.write_text(json.dumps({"responses": faux_turns(turns)}))
    options = {"dataDir": str(data), "fauxScript": str(script)}
    async with AgentClient(initialization_options=options, env=NO_KEYS, cwd=str(work)) as client:
        session = await client.new_session(cwd=str(work))
        for turn in range(turns):
            await client.prompt(session, f"Question {turn}: what do the notes say?", wait=True)
    text = (data / "sessions" / f"{session}.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def store_copies(lines: list[dict[str, Any]], data: Path, count: int, folders: list[str]) -> None:
    sessions = data / "sessions"
    sessions.mkdir(parents=True)
    for index in range(count):
        session_id = f"{index:032x}"
        shift = index * 60_000
        out = []
        for line in lines:
            line = dict(line)
            if line["type"] == "session":
                line.update(
                    id=session_id, cwd=folders[index % len(folders)], createdAt=line["createdAt"] + shift
                )
            else:
                line["timestamp"] += shift
            out.append(json.dumps(line, separators=(",", ":")))
        (sessions / f"{session_id}.jsonl").write_text("\n".join(out) + "\n")


async def timed(awaitable: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = await awaitable
    return time.perf_counter() - start, result


async def listing(data: Path, faux: Path, cwd: str) -> dict[str, Any]:
    """The listings of ``data``'s sessions, alone, on fresh servers and on the same one."""
    options = {"dataDir": str(data), "fauxScript": str(faux)}
    figures: dict[str, Any] = {}
    async with AgentClient(initialization_options=options, env=NO_KEYS, cwd=cwd) as client:
        await client.new_session(cwd=cwd)  # the server has finished starting
        figures["first"], sessions = await timed(client.list_sessions())
        figures["count"] = len(sessions)
        figures["again"] = statistics.median([(await timed(client.list_sessions()))[0] for _ in range(5)])
        figures["cwd"] = statistics.median([(await timed(client.list_sessions(cwd)))[0] for _ in range(5)])
        pid = server_pid(client)
        before = rss_mib(pid)
        for info in sessions[:LOADED]:
            await client.load_session(info.session_id)
        figures["loaded"] = (before, rss_mib(pid))
    async with AgentClient(initialization_options=options, env=NO_KEYS, cwd=cwd) as client:
        await client.list_models()  # the server has finished starting
        figures["second server"], _ = await timed(client.list_sessions())
    return figures


async def live_meanwhile(data: Path, faux: Path, cwd: str) -> tuple[float, list[float]]:
    """A fresh server's first listing of ``data`` while a live session's state is asked back to back:
    the listing's time and the latencies of the answers that came before it."""
    options = {"dataDir": str(data), "fauxScript": str(faux)}
    async with AgentClient(initialization_options=options, env=NO_KEYS, cwd=cwd) as client:
        live = await client.new_session(cwd=cwd)
        await client.get_state(live)
        listed = asyncio.ensure_future(timed(client.list_sessions()))
        for _ in range(5):  # the listing's request goes out first
            await asyncio.sleep(0)
        latencies: list[float] = []
        while not listed.done():
            seconds, _ = await timed(client.get_state(live))
            if not listed.done():
                latencies.append(seconds)
        seconds, _ = await listed
    return seconds, latencies


async def stored_sessions(count: int, turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        lines = await template_session(folder, turns)
        folders = [str(folder / f"project{n}") for n in range(10)]
        for path in folders:
            os.mkdir(path)
        store_copies(lines, folder / "data", count, folders)
        store_copies(lines, folder / "data2", count, folders)  # the same, never listed
        size = sum(path.stat().st_size for path in (folder / "data" / "sessions").iterdir())
        figures = await listing(folder / "data", folder / "faux.json", folders[0])
        figures["meanwhile"] = await live_meanwhile(folder / "data2", folder / "faux.json", folders[0])
        figures["bytes"] = size
    return figures


async def run(idle: int, stored: int, turns: int) -> None:
    for own_folders in (False, True):
        memory = await idle_sessions(idle, own_folders)
        cost = (memory[str(idle)] - memory["1"]) / (idle - 1)
        where = "a folder each" if own_folders else "one folder"
        print(f"idle sessions in {where} (one short turn each, mock Anthropic API), RSS of the server:")
        print(f"  0 sessions      {memory['0']:8.1f} MiB")
        print(f"  1 session       {memory['1']:8.1f} MiB")
        print(f"  {idle} sessions    {memory[str(idle)]:8.1f} MiB")
        print(f"  per session     {cost:8.2f} MiB (from 1 to {idle})")
    listed = await stored_sessions(stored, turns)
    size = listed["bytes"] / 2**20
    print(f"agent/listSessions, {listed['count']} stored sessions of {turns} turns ({size:.1f} MiB):")
    print(f"  fresh server, first listing   {listed['first']:7.3f} s")
    print(f"  same server, again (median)   {listed['again']:7.3f} s")
    print(f"  same server, with cwd         {listed['cwd']:7.3f} s")
    print(f"  second fresh server, first    {listed['second server']:7.3f} s")
    before, after = listed["loaded"]
    print(
        f"  RSS {before:.1f} MiB, {after:.1f} MiB with {LOADED} of them loaded "
        f"({(after - before) / LOADED:.2f} MiB each)"
    )
    seconds, latencies = listed["meanwhile"]
    print(f"  a fresh server's first listing while agent/getState is sent back to back: {seconds:.3f} s")
    if latencies:
        print(
            f"  agent/getState meanwhile: {len(latencies)} answered before the listing, "
            f"median {statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
        )
    else:
        print("  agent/getState meanwhile: none answered before the listing")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--idle", type=int, default=100, help="idle sessions to open")
    parser.add_argument("--stored", type=int, default=1000, help="stored sessions to list")
    parser.add_argument("--turns", type=int, default=5, help="turns of each stored session")
    args = parser.parse_args()
    asyncio.run(run(args.idle, args.stored, args.turns))


if __name__ == "__main__":
    main()
