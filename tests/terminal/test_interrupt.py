"""Ctrl+C at a permission question: `agentls run` ends at once (it hung), `chat` aborts the run."""

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


def test_ctrl_c_at_chats_permission_question_aborts_the_run_and_the_chat_goes_on(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": [tool_call("b1", "bash", {"command": "touch made.txt"})], "stopReason": "toolUse"},
            {"content": "Still here."},  # the aborted run may or may not have asked the model again
            {"content": "Still here."},
        ],
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("make it")
    pane.wait_for("allow? [o]nce [a]lways [r]eject")
    pane.keys("C-c")
    screen = pane.wait_for("faux/faux-1 · ↑")  # the aborted run's footer
    pane.type("are you there")
    screen = pane.wait_for("Still here.")
    # the server's $/cancelRequest of the question is read, and its late answer taken quietly
    for noise in ("Traceback", "AttributeError", "not a pending request"):
        assert noise not in screen
    assert not (folder / "made.txt").exists()
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
