"""End to end: the files agentls makes for a while go when they are no longer needed.

- A cut ``bash`` output's full-output file lives in the server's own temporary folder
  (``agentls-server-PID-…``): it goes when its session is deleted, the folder when the
  server exits, and a folder a killed server left is removed by the next server.
- A temporary file an atomic write left (``.NAME.agentls-PID-HEX.tmp``, its writer gone)
  is removed when a session starts in its folder, or loads having changed a file there.
- A change is recorded in the session file before the file is written: a write that fails
  midway (the file size limit here, a full disk elsewhere) leaves the record, the file as
  it was, and a rewind past it finds nothing to refuse.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient

from tests.server.conftest import FauxScript, Recorder, Servers, server_options, tool_call, within

pytestmark = pytest.mark.asyncio(loop_scope="module")


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [tool_call(call_id, name, arguments)], "stopReason": "toolUse"}


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(process.stdout)


async def exists(path: str | Path) -> bool:
    return await asyncio.to_thread(os.path.exists, path)


async def test_full_output_files_go_with_their_session_and_server(
    client: AgentClient, recorder: Recorder, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([call("b1", "bash", {"command": "seq 1 5000"}), {"content": "done"}])
    session = await within(client.new_session(cwd=str(workspace), permissions={"bash": "allow"}))
    run = await within(client.prompt(session, "count"))
    await recorder.settled(run.run_id)
    ended = await recorder.wait_event(session, "tool_execution_end", toolCallId="b1")
    tool_file = ended["event"]["result"]["details"]["fullOutputPath"]
    user_file = (await within(client.bash(session, "seq 1 5000", wait=True))).message["fullOutputPath"]
    process = client._rpc._server
    assert process is not None
    server_folder = Path(tool_file).parent.parent
    assert server_folder.name.startswith(f"agentls-server-{process.pid}-")
    assert Path(user_file).parent.parent == server_folder
    assert await exists(tool_file) and await exists(user_file)

    assert await within(client.delete_session(session))
    assert not await exists(tool_file) and not await exists(user_file)
    assert await exists(server_folder)
    await within(client.close(), 15)
    assert not await exists(server_folder)


async def test_a_killed_server_s_output_folder_is_removed_by_the_next_one(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    temp = tmp_path / "tmp"
    stale = temp / f"agentls-server-{dead_pid()}-stale1" / "session-x"
    live = temp / f"agentls-server-{os.getpid()}-live1"  # this test process runs: not stale
    other = temp / "agentls-server-notapid-x"
    for folder in (stale, live, other):
        folder.mkdir(parents=True)
    (stale / "agentls-bash-1.log").write_text("old output")
    faux_script([call("b1", "bash", {"command": "seq 1 5000"}), {"content": "done"}])
    client = await servers.start(server_options(data_dir, faux_script), env={"TMPDIR": str(temp)})
    recorder = await Recorder(client).start()
    try:
        session = await within(client.new_session(cwd=str(workspace), permissions={"bash": "allow"}))
        run = await within(client.prompt(session, "count"))
        await recorder.settled(run.run_id)
        ended = await recorder.wait_event(session, "tool_execution_end", toolCallId="b1")
        assert ended["event"]["result"]["details"]["fullOutputPath"].startswith(str(temp))
    finally:
        await recorder.stop()
    assert not await exists(stale.parent)
    assert await exists(live) and await exists(other)


async def test_stale_atomic_write_files_are_removed_when_a_session_starts_or_loads(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    dead = dead_pid()
    stale = workspace / f".notes.txt.agentls-{dead}-0123abcd.tmp"
    running = workspace / f".notes.txt.agentls-{os.getpid()}-0123abcd.tmp"  # its writer still runs
    foreign = workspace / ".notes.txt.0123abcd.tmp"  # not agentls's name
    for path in (stale, running, foreign):
        path.write_text("partial")
    faux_script([call("w1", "write", {"path": "sub/made.txt", "content": "made\n"}), {"content": "done"}])
    options = server_options(data_dir, faux_script)
    client = await servers.start(options)
    recorder = await Recorder(client).start()
    try:
        session = await within(client.new_session(cwd=str(workspace), permissions={"write": "allow"}))
        assert not await exists(stale)
        assert await exists(running) and await exists(foreign)
        run = await within(client.prompt(session, "make a file"))
        await recorder.settled(run.run_id)
    finally:
        await recorder.stop()
        await within(client.close(), 15)

    left = workspace / "sub" / f".made.txt.agentls-{dead}-feed0123.tmp"  # as a kill -9 mid-write leaves it
    left.write_text("partial")
    again = await servers.start(options)
    await within(again.load_session(session))
    assert not await exists(left)
    assert (workspace / "sub" / "made.txt").read_text() == "made\n"


SIZE_LIMIT = 2 * 1024 * 1024
LIMITED_SERVER = [
    sys.executable,
    "-c",
    f"import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, ({SIZE_LIMIT}, {SIZE_LIMIT})); "
    "os.execv(sys.executable, [sys.executable, '-m', 'agentls', 'serve'])",
]
"""``agentls serve`` that cannot write a file over :data:`SIZE_LIMIT` bytes (``EFBIG``, as on a full disk)."""


def session_records(data_dir: Path) -> list[dict[str, Any]]:
    """The ``agentls/fileChanges`` data in the (one) session file of ``data_dir``."""
    [path] = list(data_dir.rglob("*.jsonl"))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [line["data"] for line in lines if line.get("customType") == "agentls/fileChanges"]


async def test_a_change_is_recorded_before_the_file_is_written(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    big = workspace / "big.txt"
    original = "OLD\n" + ("x" * 79 + "\n") * 40_000  # 3.2 MB: over the limit, recorded as hashes
    big.write_text(original)
    edit = {"path": "big.txt", "edits": [{"oldText": "OLD", "newText": "NEW"}]}
    faux_script([call("e1", "edit", edit), {"content": "done"}])
    client = await servers.start(server_options(data_dir, faux_script), command=LIMITED_SERVER)
    recorder = await Recorder(client).start()
    try:
        session = await within(client.new_session(cwd=str(workspace), permissions={"edit": "allow"}))
        run = await within(client.prompt(session, "edit it"))
        await recorder.settled(run.run_id)
        ended = await recorder.wait_event(session, "tool_execution_end", toolCallId="e1")
        assert ended["event"]["isError"]  # the write failed midway
        assert big.read_text() == original
        assert await asyncio.to_thread(os.listdir, workspace) == ["big.txt"]  # its temporary file is gone
        records = await asyncio.to_thread(session_records, data_dir)
        assert [change["path"] for record in records for change in record["changes"]] == [str(big)]
        rewound = await within(client.rewind(session, None))  # the file is as before: nothing to refuse
        assert rewound.skipped == []
        assert big.read_text() == original
    finally:
        await recorder.stop()
