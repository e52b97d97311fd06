"""The ``bash`` tool over real ``bash`` subprocesses in a temporary workspace."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentToolResult
from agentls.ai import AbortController, AbortSignal, TextContent
from agentls.tools.bash import MAX_BYTES, MAX_LINES, BashCommandError, bash_tool, truncate_tail
from agentls.tools.workspace import DiskWorkspace, ToolInputError


async def run(
    root: Path,
    signal: AbortSignal | None = None,
    updates: list[AgentToolResult] | None = None,
    **args: Any,
) -> AgentToolResult:
    on_update = updates.append if updates is not None else None
    return await bash_tool(DiskWorkspace(root)).execute("call-1", args, signal, on_update)


def body(result: AgentToolResult) -> str:
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in {"Z", "X"}
    except FileNotFoundError:
        return True


async def wait_gone(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        await asyncio.sleep(0.05)
    return gone(pid)


async def test_output_and_exit_code_zero(tmp_path: Path) -> None:
    result = await run(tmp_path, command="echo hello; echo oops >&2")
    assert body(result) == "hello\noops"
    assert result.details == {"exitCode": 0, "truncated": False}


async def test_no_output(tmp_path: Path) -> None:
    assert body(await run(tmp_path, command="true")) == "(no output)"


async def test_non_zero_exit_raises_with_output_and_code(tmp_path: Path) -> None:
    with pytest.raises(BashCommandError) as caught:
        await run(tmp_path, command="echo before; exit 3")
    assert str(caught.value) == "before\n\nExit code: 3"
    assert caught.value.exit_code == 3
    assert caught.value.details == {"exitCode": 3, "truncated": False}


async def test_runs_in_workspace_root_with_stdin_closed(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("x")
    result = await run(tmp_path, command="pwd; ls; cat; echo done")
    assert body(result) == f"{tmp_path}\nmarker.txt\ndone"


async def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    result = await run(tmp_path, command=r"printf 'a\xffb\n'")
    assert body(result) == "a\ufffdb"


async def test_streams_updates_before_the_end(tmp_path: Path) -> None:
    updates: list[AgentToolResult] = []
    stamps: list[float] = []

    def on_update(result: AgentToolResult) -> None:
        updates.append(result)
        stamps.append(time.monotonic())

    tool = bash_tool(DiskWorkspace(tmp_path))
    result = await tool.execute(
        "call-1", {"command": "for i in 1 2 3; do echo $i; sleep 0.2; done"}, None, on_update
    )
    end = time.monotonic()
    assert body(result) == "1\n2\n3"
    assert len(updates) >= 2
    assert body(updates[0]) == "1"
    assert stamps[0] < end - 0.3
    texts = [body(update) for update in updates]
    assert texts == sorted(texts, key=len)  # the output only grows
    assert all(update.details["exitCode"] is None for update in updates)


async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    start = time.monotonic()
    with pytest.raises(BashCommandError) as caught:
        await run(tmp_path, command="echo started; sleep 30 & echo $! > pid; wait", timeout=0.5)
    assert time.monotonic() - start < 5
    assert str(caught.value) == "started\n\nCommand timed out after 0.5 seconds"
    assert caught.value.reason == "timeout"
    assert await wait_gone(int(pidfile.read_text()))


async def test_abort_kills_the_process_group(tmp_path: Path) -> None:
    controller = AbortController()
    pidfile = tmp_path / "pid"
    task = asyncio.create_task(
        run(tmp_path, signal=controller.signal, command="echo running; sleep 30 & echo $! > pid; wait")
    )
    for _ in range(250):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.02)
    start = time.monotonic()
    controller.abort()
    with pytest.raises(BashCommandError) as caught:
        await task
    assert time.monotonic() - start < 3
    assert str(caught.value) == "running\n\nCommand aborted"
    assert caught.value.reason == "aborted"
    assert await wait_gone(int(pidfile.read_text()))


async def test_already_aborted_does_not_run(tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(Exception, match="aborted"):
        await run(tmp_path, signal=controller.signal, command="touch ran")
    assert not (tmp_path / "ran").exists()


async def test_sigterm_ignoring_command_is_killed(tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(BashCommandError, match=r"timed out after 0\.3 seconds"):
        await run(tmp_path, command="trap '' TERM; sleep 30 & wait", timeout=0.3)
    assert time.monotonic() - start < 4


async def test_tail_truncation_by_lines_writes_full_output(tmp_path: Path) -> None:
    result = await run(tmp_path, command="seq 1 5123")
    text = body(result)
    path = result.details["fullOutputPath"]
    assert result.details["truncated"] is True
    assert text.startswith("3124\n")
    assert (
        f"5123\n\n[Output truncated: showing the last {MAX_LINES} of 5123 lines. Full output: {path}]" in text
    )
    assert Path(path).name.startswith("agentls-bash-")
    assert await asyncio.to_thread(Path(path).read_text) == "".join(f"{i}\n" for i in range(1, 5124))
    os.unlink(path)


async def test_tail_truncation_by_bytes_writes_full_output(tmp_path: Path) -> None:
    # 300 lines of 1000 bytes: well under the line limit, far over the byte limit.
    result = await run(tmp_path, command="for i in $(seq 1 300); do printf '%999d\\n' $i; done")
    text = body(result)
    path = result.details["fullOutputPath"]
    shown = text.split("\n\n[Output truncated")[0].split("\n")
    assert len(shown) == MAX_BYTES // 1000
    assert shown[-1].strip() == "300"
    assert f"showing the last {len(shown)} of 300 lines (50.0KB limit). Full output: {path}]" in text
    assert len(await asyncio.to_thread(Path(path).read_bytes)) == 300 * 1000
    os.unlink(path)


async def test_failure_keeps_truncation_note(tmp_path: Path) -> None:
    with pytest.raises(BashCommandError) as caught:
        await run(tmp_path, command="seq 1 3000; exit 2")
    message = str(caught.value)
    assert message.endswith("Exit code: 2")
    assert "[Output truncated: showing the last 2000 of 3000 lines." in message
    os.unlink(caught.value.details["fullOutputPath"])


def test_truncate_tail_keeps_the_end_of_a_huge_line() -> None:
    shown, truncated, count = truncate_tail("x" * (MAX_BYTES + 10) + "END\n")
    assert truncated and count == 1
    assert shown.endswith("END") and len(shown) == MAX_BYTES
    assert truncate_tail("a\nb\n") == ("a\nb", False, 2)


@pytest.mark.parametrize("args", [{}, {"command": 3}, {"command": " "}, {"command": "ls", "timeout": 0}])
async def test_bad_arguments(tmp_path: Path, args: dict[str, Any]) -> None:
    with pytest.raises(ToolInputError):
        await bash_tool(DiskWorkspace(tmp_path)).execute("call-1", args, None, None)


async def test_cancelling_the_call_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    task = asyncio.create_task(run(tmp_path, command="sleep 30 & echo $! > pid; wait"))
    for _ in range(250):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pidfile.read_text()))
