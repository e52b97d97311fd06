"""The ``bash`` tool over real ``bash`` subprocesses in a temporary workspace."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentToolResult
from agentls.ai import AbortController, AbortSignal, TextContent
from agentls.tools.bash import BashCommandError, bash_tool
from agentls.tools.processes import KILL_GRACE, ProcessTracker
from agentls.tools.shell import MAX_BYTES, MAX_LINES, truncate_tail
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


# --- the processes a call leaves behind --------------------------------------------------------

PR_SET_CHILD_SUBREAPER = 36


def parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except FileNotFoundError:
        return None


@pytest.fixture
def orphans_stay_zombies() -> Iterator[list[int]]:
    """This test process adopts orphaned descendants and does not reap them, like an init that never reaps.

    So a killed background process stays a zombie in its process group (the case of a
    container whose PID 1 does not reap). Put the pids to collect in the list: they are
    reaped afterwards.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    adopted: list[int] = []
    try:
        yield adopted
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        for pid in adopted:
            if parent(pid) == os.getpid():  # only ever signal a child of ours: a pid may have been reused
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


class PidsShown:
    """An ``on_update`` that sets :attr:`shown` once the streamed output holds ``count`` pids (one a line)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pids: list[int] = []
        self.shown = asyncio.Event()

    def __call__(self, result: AgentToolResult) -> None:
        if len(lines := body(result).split()) >= self.count:
            self.pids = [int(line) for line in lines[: self.count]]
            self.shown.set()


async def started(
    root: Path, command: str, count: int, signal: AbortSignal | None = None
) -> tuple[asyncio.Task[AgentToolResult], list[int]]:
    """A running call of ``command`` and the first ``count`` pids it printed."""
    shown = PidsShown(count)
    task = asyncio.create_task(
        bash_tool(DiskWorkspace(root)).execute("call-1", {"command": command}, signal, shown)
    )
    await asyncio.wait_for(shown.shown.wait(), 10)
    return task, shown.pids


async def finished(tracker: ProcessTracker, root: Path, command: str) -> list[int]:
    """The pids a finished call of ``command`` printed."""
    result = await bash_tool(DiskWorkspace(root), tracker).execute("call-1", {"command": command}, None, None)
    return [int(line) for line in body(result).split()]


async def test_abort_does_not_wait_for_zombies_of_the_group(
    tmp_path: Path, orphans_stay_zombies: list[int]
) -> None:
    controller = AbortController()
    command = "sleep 100 & echo $!; sleep 100 & echo $!; wait"
    task, pids = await started(tmp_path, command, 2, controller.signal)
    orphans_stay_zombies.extend(pids)
    start = time.monotonic()
    controller.abort()
    with pytest.raises(BashCommandError, match="Command aborted"):
        await task
    assert time.monotonic() - start < KILL_GRACE / 2  # the zombies left in the group are not waited for
    assert all(gone(pid) for pid in pids)


async def test_background_processes_of_a_finished_call_live_until_terminate_all(tmp_path: Path) -> None:
    tracker = ProcessTracker()
    pids = await finished(
        tracker, tmp_path, "sleep 1000 &>/dev/null & echo $!; setsid sleep 1000 &>/dev/null & echo $!"
    )
    try:
        assert not any(gone(pid) for pid in pids)  # the call is over, its background work runs on
        await tracker.terminate_all()
        assert all(gone(pid) for pid in pids)
    finally:
        for pid in pids:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


async def test_terminate_all_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    tracker = ProcessTracker()
    [pid] = await finished(tracker, tmp_path, "(trap '' TERM; exec setsid sleep 1000) &>/dev/null & echo $!")
    start = time.monotonic()
    await tracker.terminate_all()
    assert gone(pid)
    assert time.monotonic() - start >= KILL_GRACE  # SIGKILL came after the grace


async def test_terminate_all_ends_only_its_own_calls(tmp_path: Path) -> None:
    mine, other = ProcessTracker(), ProcessTracker()
    command = "setsid sleep 1000 &>/dev/null & echo $!"
    [own] = await finished(mine, tmp_path, command)
    [others] = await finished(other, tmp_path, command)
    unrelated = await asyncio.create_subprocess_exec("sleep", "1000")
    try:
        await mine.terminate_all()
        assert gone(own)
        assert not gone(others) and not gone(unrelated.pid)
        await other.terminate_all()
        assert gone(others) and not gone(unrelated.pid)
    finally:
        unrelated.kill()
        await unrelated.wait()
        with contextlib.suppress(ProcessLookupError):
            os.kill(others, signal.SIGKILL)


async def test_abort_ends_what_left_the_process_group(tmp_path: Path) -> None:
    controller = AbortController()
    task, [pid] = await started(
        tmp_path, "setsid sleep 1000 &>/dev/null & echo $!; sleep 1000", 1, controller.signal
    )
    controller.abort()
    with pytest.raises(BashCommandError, match="Command aborted"):
        await task
    assert gone(pid)


async def test_a_background_process_holding_the_output_does_not_hold_the_call(tmp_path: Path) -> None:
    tracker = ProcessTracker()
    tool = bash_tool(DiskWorkspace(tmp_path), tracker)
    call = tool.execute("call-1", {"command": "echo started; sleep 1000 & echo $!"}, None, None)
    result = await asyncio.wait_for(call, 10)  # bash exited: the output is read for EOF_GRACE more, no longer
    first, pid = body(result).split("\n")
    assert first == "started" and result.details == {"exitCode": 0, "truncated": False}
    assert not gone(int(pid))
    await tracker.terminate_all()
    assert gone(int(pid))
