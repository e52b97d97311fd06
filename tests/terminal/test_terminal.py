"""``agentls run`` and ``agentls chat`` in a real terminal (tmux), as a user sees them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.server.conftest import LONG_TEXT, write_faux_script
from tests.terminal.conftest import Pane, environment


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
    pane.wait_for("› ● faux/faux-1", after=mark - 200)  # the picker, at the current model
    pane.keys("Escape")
    pane.wait_for_input("")
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


def write_call(call_id: str, path: str, content: str) -> dict[str, Any]:
    call = {
        "type": "toolCall",
        "id": call_id,
        "name": "write",
        "arguments": {"path": path, "content": content},
    }
    return {"content": [call], "stopReason": "toolUse"}


def test_chat_rewind_reverts_files_and_fork_continues_elsewhere(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": "First answer."},
            write_call("w1", "made.txt", "made by the agent\n"),
            {"content": "Wrote it."},
            {"content": "Second answer."},
        ],
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("first")
    pane.wait_for("First answer.")
    pane.type("make a file")
    pane.wait_for("Wrote it.")
    assert (folder / "made.txt").read_text() == "made by the agent\n"

    pane.type("/rewind")
    pane.wait_for("rewind to before which message?")
    pane.wait_for("   1  first\n›  2  make a file\n↑↓ choose · Enter picks · Esc cancels")
    pane.keys("Enter")  # the picker starts at the last message
    pane.wait_for("↶ rewound to before message 2: make a file\n  files: deleted made.txt")
    assert not (folder / "made.txt").exists()
    pane.wait_for_input("make a file")  # the message's text is back in the input line
    pane.keys("C-u")
    pane.wait_for_input("")
    pane.type("second")
    pane.wait_for("Second answer.")
    pane.type("/rewind")  # the run went on from the first answer
    pane.wait_for("   1  first\n›  2  second\n↑↓ choose")
    pane.keys("Escape")
    pane.wait_for_input("")

    pane.type("/fork 2")
    screen = pane.wait_for("before message 2 · 2 messages")
    old, _, new = screen.split("⑂ forked session ")[-1].split()[:3]
    assert old != new[:8]
    pane.wait_for_input("second")
    pane.wait_for(f"· {new[:8]} · ")  # the toolbar: the chat goes on in the new session
    pane.keys("C-u")
    pane.wait_for_input("")
    pane.type("/rewind")
    pane.wait_for("›  1  first\n↑↓ choose")
    pane.keys("Escape")
    pane.wait_for_input("")
    assert "Ignoring notification" not in pane.screen()  # agent/branch is the client's, not a stray log line
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_chat_rewind_conflicts_force_keep_files_and_summary(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            write_call("w1", "made.txt", "made by the agent\n"),
            {"content": "Wrote it."},
            write_call("w2", "kept.txt", "kept\n"),
            {"content": "Wrote another."},
            {"content": "## Goal\nWrite kept.txt."},  # the branch summary
        ],
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("make a file")
    pane.wait_for("Wrote it.")
    (folder / "made.txt").write_text("changed by hand\n")
    pane.type("/rewind 1")
    pane.wait_for("✗ these files changed since the agent's edit; nothing was rewound:")
    screen = pane.wait_for("/rewind 1 force reverts the others")
    assert "  made.txt: " in screen
    assert (folder / "made.txt").read_text() == "changed by hand\n"
    pane.type("/rewind 1 force")
    pane.wait_for("↶ rewound to before message 1: make a file")
    pane.wait_for("skipped made.txt: ")
    assert (folder / "made.txt").read_text() == "changed by hand\n"
    pane.wait_for_input("make a file")
    pane.keys("C-u")
    pane.wait_for_input("")

    pane.type("make another")
    pane.wait_for("Wrote another.")
    pane.type("/rewind 1 keep-files summarize")
    pane.wait_for("↶ rewound to before message 1: make another\n  files left as they are")
    pane.wait_for("  the branch left behind is summarised for the model")
    assert (folder / "kept.txt").read_text() == "kept\n"
    pane.wait_for_input("make another")
    pane.keys("C-u")
    pane.wait_for_input("")
    pane.type("/rewind")
    pane.wait_for("nothing to rewind: no message of yours yet")
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_chat_trusts_a_project_mcp_server_and_allows_all_its_tools(pane: Pane, tmp_path: Path) -> None:
    from tests.mcp.conftest import quirky_command

    folder = workspace(tmp_path)
    command = quirky_command()
    broken = quirky_command("--fail-start")
    servers = {
        "quirky": {"command": command[0], "args": command[1:]},
        "broken": {"command": broken[0], "args": broken[1:]},
    }
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    call = {
        "type": "toolCall",
        "id": "m1",
        "name": "mcp__quirky__echo",
        "arguments": {"text": "hi from quirky"},
    }
    again = {**call, "id": "m2", "name": "mcp__quirky__cwd", "arguments": {}}
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": [call], "stopReason": "toolUse"},
            {"content": "Echoed."},
            {"content": [again], "stopReason": "toolUse"},
            {"content": "Asked nothing."},
        ],
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("trust? [t]rust [r]eject")
    pane.wait_for("? Start the MCP servers of")
    pane.wait_for("! MCP server quirky (.mcp.json) is not started: it waits for your trust")
    pane.keys("t")
    pane.wait_for("trusted (in this folder")
    pane.wait_for("✓ MCP server quirky is ready: ")
    screen = pane.wait_for("! MCP server broken failed: ")
    assert "failing at start on purpose" in screen.replace("\n", "")
    pane.type("echo it")
    pane.wait_for("allow? [o]nce [a]lways [s] always: every tool of quirky [r]eject")
    pane.wait_for("? Allow the tool echo of the MCP server quirky?")
    pane.keys("s")
    screen = pane.wait_for("Echoed.")
    assert "allowed always: every tool of quirky (in this folder)" in screen
    assert "✓ mcp__quirky__echo" in screen and "│ hi from quirky" in screen
    pane.type("where are you")  # another tool of the server: no question now
    screen = pane.wait_for("Asked nothing.")
    assert "✓ mcp__quirky__cwd" in screen and "? Allow the tool cwd" not in screen
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_chat_shows_a_queue_notice_above_the_streaming_paragraph_never_inside_it(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    paragraph = "Every call streams slowly so that the notice of the steering message arrives in it."
    script = write_faux_script(
        tmp_path / "faux.json",
        [{"content": f"Streaming.\n\n{paragraph}"}, {"content": "Linted."}],
        tokens_per_second=8,  # 2.6 s: room to type the message on a loaded machine
        token_size=(1, 1),
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("answer slowly")
    # the answer's first paragraph is shown, so the model call is streaming (typed before it,
    # the message would go with the prompt, as in Pi, and the answer would be to both)
    pane.wait_for("Streaming.")
    pane.type("then lint")
    screen = pane.wait_for("Linted.")
    lines = [line.strip() for line in screen.splitlines()]
    assert paragraph in lines, "the paragraph is whole, on its line"
    notice = lines.index("queued (steering): then lint")
    assert notice < lines.index(paragraph)
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_sessions_on_a_terminal_never_cut_the_id_or_the_model(pane: Pane, tmp_path: Path) -> None:
    folder = tmp_path / ("a-project-folder-whose-name-is-long-" * 3)
    folder.mkdir()
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Hi."}])
    data = ["--data-dir", str(tmp_path / "data")]
    prompt = "a prompt whose title is long enough to need the room " * 3
    pane.start(["run", prompt, "--faux-script", str(script), *data], folder)
    pane.wait_for("[exited 0]")
    listed = subprocess.run(
        [sys.executable, "-m", "agentls", "sessions", "--json", *data],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
    )
    session_id = json.loads(listed.stdout)["sessionId"]
    pane.start(["sessions", *data], folder, width=80)
    screen = pane.wait_for("[exited 0]")
    assert session_id in screen and "faux/faux-1" in screen
