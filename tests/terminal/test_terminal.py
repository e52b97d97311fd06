"""``agentls run`` and ``agentls chat`` in a real terminal (tmux), as a user sees them."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import LONG_TEXT, write_faux_script
from tests.terminal.conftest import Pane


def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# A project\n\nIt does one thing well.\n", encoding="utf-8")
    return folder


def test_run_demo_renders_the_answer_tools_and_footer(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    pane.start(["run", "--demo", "--data-dir", str(tmp_path / "data"), "What is this project?"], folder)
    screen = pane.wait_for("[exited 0]")
    assert "✻ The user asks about the project" in screen
    assert "✓ read README.md · 3 lines" in screen
    assert "The README introduces agentls:" in screen and "**" not in screen  # markdown, rendered
    assert "faux/faux-1 · ↑" in screen and " · session " in screen
    for raw in ("message_start", "tool_execution_start", "agent_end", "stopReason"):
        assert raw not in screen
    colours = pane.screen(colours=True)
    assert "\x1b[1magentls" in colours  # the bold of **agentls**


def test_chat_prompt_command_model_and_quit(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    pane.start(["chat", "--demo", "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("What is this project?")
    screen = pane.wait_for("faux/faux-1 · ↑")  # the run's footer
    assert "› What is this project?" in screen and "✓ read README.md · 3 lines" in screen
    pane.type("!echo from-the-user")
    pane.wait_for("  exit 0")
    assert "$ echo from-the-user\n  │ from-the-user" in pane.screen()
    mark = len(pane.screen())
    pane.type("/model")
    pane.wait_for("● faux/faux-1", after=mark - 200)
    pane.keys("C-c")
    pane.wait_for("(Ctrl+C again to quit)")
    pane.keys("C-c")
    pane.wait_for("[exited 0]")


def test_chat_asks_permission_inline(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    call = {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "echo yes > made.txt"}}
    script = write_faux_script(
        tmp_path / "faux.json", [{"content": [call], "stopReason": "toolUse"}, {"content": "Made."}]
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("make it")
    pane.wait_for("allow? [o]nce [a]lways [r]eject")
    pane.wait_for("? Run the command: echo yes > made.txt")
    pane.keys("o")
    screen = pane.wait_for("Made.")
    assert "allowed once" in screen and "✓ bash echo yes > made.txt" in screen
    assert (folder / "made.txt").read_text() == "yes\n"


def test_chat_steers_and_ctrl_c_aborts_the_run(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json", [{"content": LONG_TEXT}], tokens_per_second=20, token_size=(1, 1)
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("write a lot")
    pane.wait_for("Enter steers")  # the toolbar of a running run
    pane.type("and be brief")
    pane.wait_for("queued (steering): and be brief")
    pane.keys("C-c")
    screen = pane.wait_for("· aborted")
    assert "aborting…" in screen
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
