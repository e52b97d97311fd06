"""The spawner that forks the commands' keepers: what each command gets from it, and its own life.

Each command's keeper is forked by one spawner process (``agentls.tools.keeper_spawner``), so a
command gets its folder, environment, arguments and descriptors through a socket rather than from
its own ``exec``; these tests run real commands through ``ShellCommand`` and look at what they saw.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
from pathlib import Path

import pytest
from agentls.tools import keeper_spawner
from agentls.tools.processes import ProcessTracker
from agentls.tools.shell import ShellCommand


async def run(command: str, cwd: Path) -> str:
    shell = await ShellCommand.start(command, str(cwd), ProcessTracker())
    result = await shell.wait()
    assert result.exit_code == 0, result.output
    return result.output


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[1])


async def keeper_and_spawner(cwd: Path) -> tuple[int, int]:
    """The pids of a command's keeper (bash's parent) and of its parent, as the command saw them."""
    keeper, spawner = (await run("echo $PPID $(ps -o ppid= -p $PPID)", cwd)).split()
    return int(keeper), int(spawner)


def wait_for_exit(pid: int) -> None:
    """Until ``pid`` has exited (its pidfd becomes readable)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([pidfd], [], [], 10)
        assert ready, f"{pid} still runs"
    finally:
        os.close(pidfd)


async def test_the_keeper_is_forked_by_the_spawner_which_this_process_started(tmp_path: Path) -> None:
    keeper, spawner = await keeper_and_spawner(tmp_path)
    assert spawner != os.getpid() and parent_of(spawner) == os.getpid()
    again, same = await keeper_and_spawner(tmp_path)
    assert again != keeper and same == spawner  # a keeper per command, one spawner


async def test_a_killed_spawner_is_started_again_by_the_next_command(tmp_path: Path) -> None:
    _, spawner = await keeper_and_spawner(tmp_path)
    os.kill(spawner, signal.SIGKILL)
    await asyncio.to_thread(wait_for_exit, spawner)
    _, started_again = await keeper_and_spawner(tmp_path)
    assert started_again != spawner and parent_of(started_again) == os.getpid()


async def test_a_spawner_that_does_not_answer_fails_the_command_and_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, spawner = await keeper_and_spawner(tmp_path)
    os.kill(spawner, signal.SIGSTOP)
    monkeypatch.setattr(keeper_spawner, "ANSWER_SECONDS", 0.3)
    with pytest.raises(OSError, match="did not answer"):
        await ShellCommand.start("echo never", str(tmp_path), ProcessTracker())
    await asyncio.to_thread(wait_for_exit, spawner)  # killed
    _, started_again = await keeper_and_spawner(tmp_path)
    assert started_again != spawner


async def test_each_command_gets_the_environment_of_its_own_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await run("true", tmp_path)  # the spawner runs before the variable is set
    monkeypatch.setenv("AGENTLS_TEST_SET_LATE", "late")
    monkeypatch.setenv("AGENTLS_TEST_BYTES", os.fsdecode(b"\xff\xfe"))  # not UTF-8: passed as bytes
    out = await run('echo "$AGENTLS_TEST_SET_LATE"; printf %s "$AGENTLS_TEST_BYTES" | od -An -tx1', tmp_path)
    assert out.split() == ["late", "ff", "fe"]
    monkeypatch.delenv("AGENTLS_TEST_SET_LATE")
    assert await run('echo "[${AGENTLS_TEST_SET_LATE-unset}]"', tmp_path) == "[unset]"


async def test_a_long_command_in_a_folder_with_an_odd_name_runs_whole(tmp_path: Path) -> None:
    folder = tmp_path / os.fsdecode(b"odd \xff name")
    folder.mkdir()
    filler = "x" * 120_000  # past the first piece of the request sent with the descriptors
    out = await run(f": {filler}; pwd; echo {len(filler)}", folder)
    shown = os.fsencode(folder).decode("utf-8", "replace")  # output is read as UTF-8, bad bytes replaced
    assert out.splitlines() == [shown, "120000"]


async def test_commands_started_at_once_each_get_their_own_output(tmp_path: Path) -> None:
    outputs = await asyncio.gather(*(run(f"sleep 0.0{n % 3}; echo {n}", tmp_path) for n in range(12)))
    assert outputs == [str(n) for n in range(12)]


async def test_a_folder_that_is_gone_fails_the_start_with_its_name(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    with pytest.raises(OSError, match=f"cannot run {gone}: No such file or directory"):
        await ShellCommand.start("echo never", str(gone), ProcessTracker())
    assert await run("echo still", tmp_path) == "still"  # the spawner serves the next one
