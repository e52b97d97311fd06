"""Ctrl+C at ``agentls run``'s permission question ends the command at once (it hung until killed)."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import tool_call, write_faux_script
from tests.terminal.conftest import Pane
from tests.terminal.test_terminal import workspace


def test_ctrl_c_at_runs_permission_question_ends_the_command(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": [tool_call("b1", "bash", {"command": "touch made.txt"})], "stopReason": "toolUse"},
            {"content": "Done."},
        ],
    )
    pane.start(["run", "make it", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("or [r]eject?")
    pane.keys("C-c")
    screen = pane.wait_for("[exited ")
    assert "[exited 130]" in screen and "interrupted" in screen
    assert "Traceback" not in screen and "AttributeError" not in screen
    assert not (folder / "made.txt").exists()
