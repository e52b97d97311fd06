"""What ``agentls chat``'s input line does, in a real terminal (tmux): ids, pickers, mentions, keys."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.server.conftest import tool_call, write_faux_script
from tests.terminal.conftest import WAIT, Pane
from tests.terminal.test_terminal import workspace


def store_session(data: Path, session_id: str, cwd: Path, prompt: str, answer: str) -> None:
    """A stored session of one exchange, as the server writes it (``sessions/ID.jsonl``)."""
    now = int(time.time() * 1000)
    entries = [
        {
            "type": "session",
            "version": 1,
            "id": session_id,
            "cwd": str(cwd),
            "createdAt": now,
            "systemPrompt": "",
            "model": {"provider": "faux", "id": "faux-1"},
            "thinkingLevel": "off",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": now,
            "message": {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": now},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": now,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": answer}],
                "provider": "faux",
                "model": "faux-1",
                "api": "faux",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                "stopReason": "stop",
                "timestamp": now,
            },
        },
    ]
    folder = data / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(entry) + "\n" for entry in entries)
    (folder / f"{session_id}.jsonl").write_text(lines, encoding="utf-8")


SHIFT_ENTER_CSI_U = ("1b", "5b", "31", "33", "3b", "32", "75")
"""``ESC [ 13 ; 2 u``, in hex for ``tmux send-keys -H``."""

FIRST = "abc1" + "0" * 28
SECOND = "abc2" + "0" * 28
THIRD = "def0" + "0" * 28


def test_sessions_are_resumed_by_the_start_of_their_id(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    data = tmp_path / "data"
    store_session(data, FIRST, folder, "the first question", "The first answer.")
    store_session(data, SECOND, folder, "the second question", "The second answer.")
    store_session(data, THIRD, folder, "the third question", "The third answer.")
    pane.start(["chat", "--demo", "--data-dir", str(data), "--session", "def"], folder)
    pane.wait_for(f"resumed session {THIRD} · 2 messages")
    pane.wait_for("/help for the keys")
    pane.type("/sessions abc")
    screen = pane.wait_for("): give more of the id")
    assert "✗ abc is the start of 2 sessions (abc" in screen
    assert "abc100000000" in screen and "abc200000000" in screen
    pane.type("/sessions abc2")
    screen = pane.wait_for(f"resumed session {SECOND} · 2 messages")
    assert "The second answer." in screen
    pane.wait_for(" · abc20000 · ")  # the status line: the chat goes on in that session
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def status_row(pane: Pane) -> tuple[int, list[str]]:
    """The index of the input line's row among the pane's rows, and the rows (polled while the
    screen is being redrawn and shows no input line)."""
    deadline = time.monotonic() + WAIT
    while True:
        rows = pane.rows()
        inputs = [index for index, row in enumerate(rows) if row.startswith("›")]
        if inputs:
            return inputs[-1], rows
        if time.monotonic() > deadline:
            pytest.fail(f"no input line within {WAIT} s; the screen:\n{pane.screen()}")
        time.sleep(0.05)  # polling the screen: tmux has no event to await


def test_at_80x24_the_status_line_is_under_the_input_and_fits_the_width(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    output = "a line of output long enough to fill most of the status line by itself " * 2
    call = tool_call("b1", "bash", {"command": f"echo '{output}'; sleep 30"})
    script = write_faux_script(
        tmp_path / "faux.json", [{"content": [call], "stopReason": "toolUse"}, {"content": "Stopped."}]
    )
    pane.start(
        ["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")],
        folder,
        width=80,
        height=24,
    )
    pane.wait_for("/help for the keys")
    pane.wait_for("faux/faux-1 · ")
    index, rows = status_row(pane)
    assert rows[index + 1].startswith(" faux/faux-1 · "), (
        "no empty rows kept between the input and the status line"
    )
    assert all(not row.strip() for row in rows[index + 2 :])
    pane.type("run it")
    pane.wait_for("allow? [o]nce")
    pane.keys("o")
    pane.wait_for(" bash: a line of output")  # the status line shows the command's last line
    pane.type("and then stop")
    status = status_line_with(pane, "1 queued")
    assert status.rstrip().endswith("1 queued") or "· 1 queued · " in status, status
    assert len(status.rstrip()) <= 80
    pane.keys("C-c")
    pane.wait_for("· aborted")
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_ctrl_j_and_shift_enter_write_a_newline_enter_sends_and_alt_enter_follows_up(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json",
        [{"content": "A slow answer, long enough to type during it. " * 6}, {"content": "Followed up."}],
        tokens_per_second=20,
        token_size=(1, 1),
    )
    data = tmp_path / "data"
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(data)], folder)
    pane.wait_for("/help for the keys")
    pane.keys("first line", literal=True)
    pane.keys("C-j")
    pane.keys("second line", literal=True)
    pane.keys("-H", *SHIFT_ENTER_CSI_U)  # Shift+Enter from a terminal that reports it apart
    pane.keys("third line", literal=True)
    pane.wait_for("› first line\n  second line\n  third line")
    pane.keys("Enter")
    pane.wait_for("Enter steers")  # one prompt of three lines is running
    pane.keys("and then this", literal=True)
    pane.keys("M-Enter")
    pane.wait_for("queued (follow-up): and then this")
    pane.wait_for("Followed up.")
    stored = next((data / "sessions").glob("*.jsonl")).read_text(encoding="utf-8")
    prompts = [
        entry["message"]["content"][0]["text"]
        for entry in map(json.loads, stored.splitlines())
        if entry.get("type") == "message" and entry["message"]["role"] == "user"
    ]
    assert prompts == ["first line\nsecond line\nthird line", "and then this"]
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_sessions_alone_opens_a_picker_arrows_move_enter_resumes_esc_cancels(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    data = tmp_path / "data"
    store_session(data, FIRST, folder, "the first question", "The first answer.")
    store_session(data, SECOND, folder, "the second question", "The second answer.")
    pane.start(["chat", "--demo", "--data-dir", str(data)], folder)
    pane.wait_for("/help for the keys")
    pane.type("/sessions")
    pane.wait_for("resume a session of this folder")
    screen = pane.wait_for("↑↓ choose · Enter picks · Esc cancels")
    # the picker's rows: under its title (a stray row above it, from before, is not the picker's)
    rows = screen.splitlines()
    rows = rows[max(index for index, row in enumerate(rows) if "resume a session of this folder" in row) :]
    chosen = next(index for index, row in enumerate(rows) if row.startswith("›"))
    wanted = next(index for index, row in enumerate(rows) if "abc10000" in row)
    assert "the second question" in rows[chosen] or "the first question" in rows[chosen]
    pane.keys("Up" if wanted < chosen else "Down")
    pane.wait_for("›   abc10000    2 messages")
    pane.keys("Enter")
    screen = pane.wait_for(f"resumed session {FIRST} · 2 messages")
    assert "The first answer." in screen and "↑↓ choose" not in screen  # the picker is gone
    pane.type("/sessions")
    pane.wait_for("  ● abc10000    2 messages")  # the current session is marked
    pane.keys("Escape")
    pane.wait_for_input("")
    assert "↑↓ choose" not in pane.screen()
    pane.type("/help")
    pane.wait_for("(↑↓ choose · Enter picks · Esc cancels)")
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def under_input(pane: Pane, what: str, shown: Callable[[str, list[str]], bool]) -> list[str]:
    """The rows under the input line once ``shown(input_row, rows_under)`` (polled: under load the
    screen can be caught between drawing the input line and what goes under it)."""
    deadline = time.monotonic() + WAIT
    while True:
        index, rows = status_row(pane)
        if shown(rows[index], rows[index + 1 :]):
            return rows[index + 1 :]
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {WAIT} s; the screen:\n{pane.screen()}")
        time.sleep(0.05)  # polling the screen: tmux has no event to await


def status_line_with(pane: Pane, text: str) -> str:
    """The row under the input line once it shows ``text``."""
    under = under_input(pane, f"status line with {text!r}", lambda _, rows: bool(rows) and text in rows[0])
    return under[0]


def wait_for_menu(pane: Pane, typed: str, items: list[str]) -> None:
    """Poll until the input line holds ``typed`` and the completion menu under it lists ``items``."""

    def shown(line: str, under: list[str]) -> bool:
        menu = [row.strip() for row in under if row.strip().startswith("@")]
        return line.rstrip() == f"› {typed}" and menu == items

    under_input(pane, f"menu {items} under {typed!r}", shown)


def test_at_completes_the_workspaces_files_but_ignored_ones_and_attaches_them(
    pane: Pane, tmp_path: Path
) -> None:
    folder = workspace(tmp_path)
    (folder / ".gitignore").write_text("build/\n*.secret.md\n", encoding="utf-8")
    (folder / "docs").mkdir()
    (folder / "build").mkdir()
    for name in ("notes.md", "docs/notes-guide.md", "build/notes-out.md", "notes.secret.md"):
        (folder / name).write_text(f"# {name}\n", encoding="utf-8")
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Read them."}])
    data = tmp_path / "data"
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(data)], folder)
    pane.wait_for("/help for the keys")
    pane.wait_for("faux/faux-1 · ")  # the input line runs
    pane.keys("compare @notes", literal=True)
    # the name's matches first; none of the .gitignored files
    wait_for_menu(pane, "compare @notes", ["@notes.md", "@docs/notes-guide.md"])
    pane.keys("Tab")
    pane.wait_for_input("compare @notes.md")
    pane.keys(" with @guide", literal=True)
    wait_for_menu(pane, "compare @notes.md with @guide", ["@docs/notes-guide.md"])
    pane.keys("Tab")
    pane.wait_for_input("compare @notes.md with @docs/notes-guide.md")
    pane.keys("Enter")
    screen = pane.wait_for("Read them.")
    assert "attached: notes.md (1 line), docs/notes-guide.md (1 line)" in screen
    assert "# notes.md" not in screen  # the chips, not the files' text
    stored = next((data / "sessions").glob("*.jsonl")).read_text(encoding="utf-8")
    assert '<file path=\\"notes.md\\"' in stored and '<file path=\\"docs/notes-guide.md\\"' in stored
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_shift_tab_cycles_the_permission_mode_shown_in_the_status_line(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    write = tool_call("w1", "write", {"path": "made.txt", "content": "made\n"})
    script = write_faux_script(
        tmp_path / "faux.json", [{"content": [write], "stopReason": "toolUse"}, {"content": "Tried."}]
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for(" · Accept edits (Shift+Tab) · /help")  # agentls's default
    pane.keys("BTab")
    pane.wait_for("permission mode: Read-only · Only reading and searching")
    pane.wait_for(" · Read-only (Shift+Tab) · /help")
    pane.type("write the file")
    screen = pane.wait_for("Tried.")
    assert "✗ write made.txt" in screen and not (folder / "made.txt").exists()
    for name in ("Bypass permissions", "Ask before edits", "Accept edits"):  # wrapping round
        pane.keys("BTab")
        pane.wait_for(f" · {name} (Shift+Tab) · /help")
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
