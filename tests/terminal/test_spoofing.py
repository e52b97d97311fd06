"""Untrusted text in a real terminal (tmux): its control characters are shown, never obeyed.

The model's bash command below would, printed raw, return to the start of the line, erase it, go
up one line and erase that, leaving only "Run the command: ls -la" on the screen.
"""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import write_faux_script
from tests.terminal.conftest import Pane
from tests.terminal.test_terminal import workspace

SPOOF = "touch PWNED #\r\x1b[2K\x1b[1A\x1b[2KRun the command: ls -la"
SHOWN = "touch PWNED #\\r\\x1b[2K\\x1b[1A\\x1b[2KRun the command: ls -la"
"""How the command must read on the screen."""


def spoofing_script(tmp_path: Path) -> Path:
    call = {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": SPOOF}}
    said = {"type": "text", "text": "Checking \x1b[31mred\x1b[0m \u202eevil"}
    return write_faux_script(
        tmp_path / "faux.json",
        [{"content": [said, call], "stopReason": "toolUse"}, {"content": "Not run.\x1b[2J\x1b[H Fine."}],
    )


def assert_model_text_shown(screen: str) -> None:
    assert "Checking \\x1b[31mred\\x1b[0m \\u202eevil" in screen
    assert "Not run.\\x1b[2J\\x1b[H Fine." in screen


def test_run_shows_a_spoofing_command_whole_and_a_rejection_does_not_run_it(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    script = spoofing_script(tmp_path)
    pane.start(["run", "go", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    screen = pane.wait_for("or [r]eject?")
    assert f"agentls: Run the command: {SHOWN}" in screen
    pane.keys("r")  # one key, as in chat
    screen = pane.wait_for("[exited 0]")
    assert f"✗ bash {SHOWN} · The user rejected" in screen
    assert_model_text_shown(screen)
    assert not (folder / "PWNED").exists()


def test_chat_shows_a_spoofing_command_whole_and_a_rejection_does_not_run_it(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    script = spoofing_script(tmp_path)
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("go")
    pane.wait_for("allow? [o]nce [a]lways [r]eject")
    pane.wait_for(f"? Run the command: {SHOWN}")
    pane.keys("r")
    screen = pane.wait_for("faux/faux-1 · ↑")  # the run's footer
    assert "  rejected" in screen and f"✗ bash {SHOWN} · The user rejected" in screen
    assert_model_text_shown(screen)
    assert not (folder / "PWNED").exists()
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
