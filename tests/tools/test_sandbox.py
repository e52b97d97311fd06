"""The sandbox of the ``bash`` tool, for real: Landlock (and a read-only bind of ``.git``) applied by
the keeper to real ``bash`` commands and their children, and the refusal where it cannot be."""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentToolResult
from agentls.ai import AbortController, AbortSignal, TextContent
from agentls.protocol import SandboxSettings
from agentls.tools import landlock
from agentls.tools.bash import BashCommandError, bash_tool
from agentls.tools.processes import ProcessTracker
from agentls.tools.sandbox import Confinement, Sandbox, SandboxRefused
from agentls.tools.shell import ShellCommand
from agentls.tools.workspace import DiskWorkspace

from tests.server.test_providers_e2e import connected_to
from tests.tools.test_bash import wait_gone


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The workspace, and a home folder outside it (``$HOME`` of the commands)."""
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return workspace, home


def text(result: AgentToolResult | BashCommandError) -> str:
    if isinstance(result, BashCommandError):
        return str(result)
    assert isinstance(result.content[0], TextContent)
    return result.content[0].text


async def bash(
    workspace: Path,
    command: str,
    escalate: Any = None,
    tracker: ProcessTracker | None = None,
    **settings: Any,
) -> AgentToolResult | BashCommandError:
    """Run ``command`` with the ``bash`` tool in a sandbox of ``settings``; the result or the error."""
    sandbox = Sandbox(SandboxSettings.model_validate({"mode": "workspace-write", **settings}), str(workspace))
    tool = bash_tool(DiskWorkspace(workspace), tracker, sandbox, escalate)
    try:
        return await tool.execute("call-1", {"command": command}, None, None)
    except BashCommandError as error:
        return error
    finally:
        sandbox.close()


def git(workspace: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=workspace, capture_output=True, text=True, check=True
    )
    return done.stdout


async def test_the_kernel_offers_what_the_sandbox_needs() -> None:
    assert landlock.abi() >= landlock.MIN_ABI_NETWORK


async def test_writing_outside_the_folder_fails_and_says_the_sandbox_denied_it(
    folders: tuple[Path, Path],
) -> None:
    workspace, home = folders
    result = await bash(workspace, 'echo x > "$HOME/outside"')
    assert isinstance(result, BashCommandError) and result.reason == "exit"
    assert "Permission denied" in text(result) and "The sandbox (workspace-write) may have denied" in text(
        result
    )
    assert f"{home}/outside" in text(result) and result.details["sandbox"] == "denied"
    assert not (home / "outside").exists()


async def test_a_path_that_leaves_through_dot_dot_is_outside(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    result = await bash(workspace, "touch ../escaped")
    assert isinstance(result, BashCommandError)
    assert not (workspace.parent / "escaped").exists()


async def test_a_python_child_cannot_write_outside_either(folders: tuple[Path, Path]) -> None:
    workspace, home = folders
    script = f"open({str(home / 'from-python')!r}, 'w').write('x')"
    result = await bash(workspace, f"{sys.executable} -c {script!r}")
    assert isinstance(result, BashCommandError) and "PermissionError" in text(result)
    assert not (home / "from-python").exists()


async def test_writing_inside_the_folder_and_the_temporary_folder_works(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    (workspace / "sub").mkdir()
    command = 'echo top > top.txt && echo deep > sub/deep.txt && mkdir -p new/dir && t=$(mktemp) && echo "$t"'
    result = await bash(workspace, command)
    assert not isinstance(result, BashCommandError), text(result)
    assert (workspace / "top.txt").read_text() == "top\n" and (
        workspace / "sub/deep.txt"
    ).read_text() == "deep\n"
    assert "sandbox-tmp-" in text(result) and (workspace / "new/dir").is_dir()


async def test_git_commit_fails_in_the_folders_git_unless_it_is_a_writable_root(
    folders: tuple[Path, Path],
) -> None:
    workspace, _ = folders
    git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("a\n")
    commit = "git -c user.name=t -c user.email=t@example.com commit -qm sandboxed"
    result = await bash(workspace, f"git add a.txt && {commit}")
    assert isinstance(result, BashCommandError) and "Read-only file system" in text(result)
    assert list((workspace / ".git" / "refs" / "heads").iterdir()) == []  # no commit
    assert (workspace / "a.txt").exists()  # the folder itself stays writable

    allowed = await bash(workspace, f"git add a.txt && {commit}", writableRoots=[".git"])
    assert not isinstance(allowed, BashCommandError), text(allowed)
    assert git(workspace, "log", "--format=%s") == "sandboxed\n"


async def test_the_mount_namespace_stays_the_commands_own(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    git(workspace, "init", "-q")
    result = await bash(workspace, "touch .git/x")
    assert isinstance(result, BashCommandError)
    (workspace / ".git" / "y").write_text("the server can still write it")  # not read-only out here


async def test_read_only_allows_only_the_temporary_folder(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    result = await bash(
        workspace, 'echo x > "$TMPDIR/t" && cat "$TMPDIR/t" && echo y > here.txt', mode="read-only"
    )
    assert isinstance(result, BashCommandError) and "x\n" in text(result)
    assert not (workspace / "here.txt").exists()


async def test_writable_roots_add_folders(folders: tuple[Path, Path]) -> None:
    workspace, home = folders
    result = await bash(workspace, 'echo x > "$HOME/allowed"', writableRoots=[str(home)])
    assert not isinstance(result, BashCommandError), text(result)
    assert (home / "allowed").read_text() == "x\n"


async def test_without_network_no_connection_leaves_from_bash_or_a_child(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    async with connected_to() as (port, connected):
        from_bash = await bash(workspace, f"exec 3<>/dev/tcp/127.0.0.1/{port}")
        child = f"import socket; socket.create_connection(('127.0.0.1', {port}))"
        from_child = await bash(workspace, f'{sys.executable} -c "{child}"')
        listening = await bash(
            workspace, f"{sys.executable} -c \"import socket; socket.socket().bind(('127.0.0.1', 0))\""
        )
    for result in (from_bash, from_child, listening):
        assert isinstance(result, BashCommandError) and "Permission denied" in text(result)
        assert "network: off" in text(result)
    assert not connected.is_set()


async def test_without_network_no_udp_datagram_leaves_but_unix_sockets_work(
    folders: tuple[Path, Path],
) -> None:
    workspace, _ = folders
    loop = asyncio.get_running_loop()
    received: asyncio.Future[bytes] = loop.create_future()

    class Receiver(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: Any) -> None:
            if not received.done():
                received.set_result(data)

    transport, _ = await loop.create_datagram_endpoint(Receiver, local_addr=("127.0.0.1", 0))
    port = transport.get_extra_info("sockname")[1]
    unix = "import socket; a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1))"
    try:
        denied = await bash(workspace, f"echo hi > /dev/udp/127.0.0.1/{port}")
        child = await bash(workspace, f'{sys.executable} -c "{unix}"')
        allowed = await bash(workspace, f"echo hi > /dev/udp/127.0.0.1/{port}", network=True)
        assert not isinstance(allowed, BashCommandError), text(allowed)
        assert await asyncio.wait_for(received, 5) == b"hi\n"
    finally:
        transport.close()
    assert isinstance(denied, BashCommandError) and "socket: Permission denied" in text(denied)
    assert not isinstance(child, BashCommandError) and text(child) == "b'x'"


async def test_with_network_the_connection_is_made(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    async with connected_to() as (port, connected):
        child = f"import socket; socket.create_connection(('127.0.0.1', {port})).close()"
        result = await bash(workspace, f'{sys.executable} -c "{child}"', network=True)
        assert not isinstance(result, BashCommandError), text(result)
        await asyncio.wait_for(connected.wait(), 5)


async def test_background_processes_of_a_sandboxed_call_are_still_tracked(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    tracker = ProcessTracker()
    result = await bash(workspace, "setsid sleep 60 > /dev/null 2>&1 & echo $!", tracker=tracker)
    assert not isinstance(result, BashCommandError), text(result)
    pid = int(text(result).strip())
    await tracker.terminate_all()
    assert await wait_gone(pid)


async def test_escalation_runs_a_denied_call_once_outside(folders: tuple[Path, Path]) -> None:
    workspace, home = folders
    asked: list[tuple[str, str, str]] = []

    async def escalate(call_id: str, command: str, note: str, signal: AbortSignal | None) -> bool:
        asked.append((call_id, command, note))
        return True

    result = await bash(workspace, 'echo x > "$HOME/outside"', escalate)
    assert not isinstance(result, BashCommandError), text(result)
    assert (home / "outside").read_text() == "x\n"
    assert result.details["sandbox"] == "outside" and "outside the sandbox, once" in text(result)
    [(call_id, command, note)] = asked
    assert call_id == "call-1" and command == 'echo x > "$HOME/outside"' and "Permission denied" in note


async def test_a_call_that_fails_for_another_reason_asks_nothing(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders

    async def escalate(*args: Any) -> bool:
        raise AssertionError("asked")

    result = await bash(workspace, "exit 3", escalate)
    assert isinstance(result, BashCommandError) and result.exit_code == 3 and "sandbox" not in text(result)


async def test_a_kernel_without_landlock_refuses_unless_the_fallback_allows(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, home = folders
    monkeypatch.setenv(landlock.PROBE_ENV, "unsupported")
    refused = await bash(workspace, 'echo x > "$HOME/outside"')
    assert isinstance(refused, BashCommandError) and refused.reason == "sandbox"
    assert "The command was not run: this kernel has no Landlock" in text(refused)
    assert 'fallback "unconfined"' in text(refused)
    assert not (home / "outside").exists()
    sandbox = Sandbox(SandboxSettings(mode="workspace-write"), str(workspace))
    assert sandbox.state().status == "refused"

    ran = await bash(workspace, 'echo x > "$HOME/outside"', fallback="unconfined")
    assert not isinstance(ran, BashCommandError), text(ran)
    assert (home / "outside").exists()
    fallback = Sandbox(SandboxSettings(mode="workspace-write", fallback="unconfined"), str(workspace))
    assert fallback.state().status == "unconfined"


async def test_the_keeper_refuses_to_start_bash_when_it_cannot_confine_itself(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, home = folders
    monkeypatch.setenv(landlock.PROBE_ENV, "unsupported")  # the keeper's own probe reads it too
    plan = {"writable": [str(workspace)], "readOnly": [], "network": False}
    with pytest.raises(SandboxRefused, match="Landlock ABI 4 is needed"):
        await ShellCommand.start(
            f"touch {home}/x", str(workspace), ProcessTracker(), confinement=Confinement(plan, {})
        )
    assert not (home / "x").exists()


async def test_state_reports_the_sandbox(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    (workspace / ".git").mkdir()
    state = Sandbox(
        SandboxSettings(mode="workspace-write", writable_roots=["/nowhere"]), str(workspace)
    ).state()
    assert state.status == "enforced" and state.network is False
    assert state.writable_roots == [str(workspace), "/nowhere"] and state.read_only == [
        str(workspace / ".git")
    ]
    assert Sandbox(SandboxSettings(), str(workspace)).state().status == "off"


def _confined_child(plan: dict[str, Any], attempts: list[str]) -> list[str]:
    """In a forked child that is no root (``nobody`` when this process is root), confine itself as
    ``plan`` says, then try to create each of ``attempts``: the errors, ``"ok"`` for a success."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one thread, as unshare(CLONE_NEWUSER) needs
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
                # a process that changed its uid is not dumpable, so its /proc/self/uid_map is root's;
                # a process started as the user (the keeper) is
                ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
            landlock.confine(plan)
            said = []
            for path in attempts:
                try:
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
                    said.append("ok")
                except OSError as error:
                    said.append(error.strerror or str(error))
            os.write(write, "\n".join(said).encode())
        except BaseException as error:  # reported to the parent, whatever it is
            os.write(write, f"failed: {error}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        said = answer.read()
    os.waitpid(pid, 0)
    return said.split("\n")


def test_an_unprivileged_process_keeps_git_read_only_through_a_user_namespace() -> None:
    root = Path(tempfile.mkdtemp(prefix="agentls-sandbox-test-"))  # not under root's private tmp_path
    try:
        (root / "ws" / ".git").mkdir(parents=True)
        (root / "outside").mkdir()
        if os.geteuid() == 0:
            for path in (root, root / "ws", root / "ws" / ".git", root / "outside"):
                os.chown(path, 65534, 65534)
        ws = root / "ws"
        plan = {"writable": [str(ws)], "readOnly": [str(ws / ".git")], "network": False}
        said = _confined_child(
            plan, [str(ws / "in.txt"), str(ws / ".git" / "x"), str(root / "outside" / "y")]
        )
        assert said == ["ok", "Read-only file system", "Permission denied"]
        assert (ws / "in.txt").exists() and not (ws / ".git" / "x").exists()
    finally:
        shutil.rmtree(root)


async def test_an_abort_ends_every_process_of_a_sandboxed_call(folders: tuple[Path, Path]) -> None:
    workspace, _ = folders
    controller = AbortController()
    started: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_update(partial: AgentToolResult) -> None:
        if not started.done() and text(partial).strip():
            started.set_result(int(text(partial).split()[0]))

    sandbox = Sandbox(SandboxSettings(mode="workspace-write"), str(workspace))
    tool = bash_tool(DiskWorkspace(workspace), ProcessTracker(), sandbox)
    command = {"command": "setsid sleep 60 & echo $!; wait"}
    task = asyncio.create_task(tool.execute("call-1", command, controller.signal, on_update))
    try:
        pid = await asyncio.wait_for(started, 5)
        controller.abort()
        with pytest.raises(BashCommandError) as caught:
            await task
    finally:
        sandbox.close()
    assert caught.value.reason == "aborted"
    assert await wait_gone(pid)
