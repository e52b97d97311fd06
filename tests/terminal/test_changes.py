"""``agentls chat``'s ``/changes`` and ``/revert`` in a real terminal (tmux), against the real server on
the faux model: a run's ``bash`` edits (``sed -i``), deletes, renames and creates files; the chat
shows each with who did it, puts files back, and refuses (then forces) a revert over a hand edit."""

from __future__ import annotations

import re
from pathlib import Path

from tests.server.conftest import tool_call, write_faux_script
from tests.terminal.conftest import Pane
from tests.terminal.test_terminal import workspace

A_BEFORE = "".join(f"line {i}\n" for i in range(1, 21))
SHELL = "sed -i 's/line 2$/LINE TWO/' a.txt && rm b.txt && mv c.txt d.txt && echo made > e.txt"


def coloured(screen: str, colour: int, text: str) -> bool:
    """Whether ``text`` shows in the foreground colour ``colour`` (31 red, 32 green, 36 cyan) on the
    screen (``capture-pane -e``: tmux writes the colour before the text, maybe with other codes)."""
    return re.search(rf"\x1b\[{colour}m(?:\x1b\[[0-9;]*m)*{re.escape(text)}", screen) is not None


def bash_folder(tmp_path: Path) -> Path:
    folder = workspace(tmp_path)
    (folder / "a.txt").write_text(A_BEFORE)
    (folder / "b.txt").write_text("bee\n")
    (folder / "c.txt").write_text("sea\n")
    return folder


def chat_with_bash(pane: Pane, tmp_path: Path, folder: Path) -> None:
    """A chat whose first run's bash runs :data:`SHELL` (allowed), its second answers only."""
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": [tool_call("b1", "bash", {"command": SHELL})], "stopReason": "toolUse"},
            {"content": "Changed them."},
            {"content": "Nothing to change."},
        ],
    )
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--allow", "bash"]
    pane.start(["chat", *options], folder)
    pane.wait_for("/help for the keys")
    pane.type("change them")
    pane.wait_for("Changed them.")


def test_chat_changes_shows_what_bash_did_and_revert_puts_a_file_back(pane: Pane, tmp_path: Path) -> None:
    folder = bash_folder(tmp_path)
    chat_with_bash(pane, tmp_path, folder)

    pane.type("/changes")
    screen = pane.wait_for("The changes of the last run · 4 files")
    shown = screen[screen.rindex("The changes of the last run") :]
    assert (
        "modified a.txt · bash\n@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE TWO\n line 3\n line 4\n line 5\n"
        "deleted  b.txt · bash\n@@ -1,1 +0,0 @@\n-bee\n"
        "renamed  c.txt -> d.txt · bash\n"
        "added    e.txt · bash\n@@ -0,0 +1,1 @@\n+made\n"
    ) in shown, shown
    colours = pane.screen(colours=True)
    assert coloured(colours, 32, "+LINE TWO") and coloured(colours, 31, "-line 2"), colours
    assert coloured(colours, 36, "@@ -1,5 +1,5 @@") and not coloured(colours, 32, " line 3"), colours

    pane.keys("/revert ", literal=True)  # the menu lists the last run's files once chat has them
    pane.wait_for("everything the last run changed")
    pane.keys("b", literal=True)  # Tab completes them
    pane.wait_for_input("/revert b")
    pane.keys("Tab")
    pane.wait_for_input("/revert b.txt")
    pane.keys("Enter")
    screen = pane.wait_for("↶ reverted: restored b.txt")
    assert (folder / "b.txt").read_text() == "bee\n"
    assert "The user reverted" not in screen  # the message for the model: the report above says it

    pane.type("/revert c.txt")  # a renamed file goes by its old name too
    pane.wait_for("↶ reverted: deleted d.txt, restored c.txt")
    assert (folder / "c.txt").read_text() == "sea\n" and not (folder / "d.txt").exists()

    pane.type("/revert nowhere.txt")
    pane.wait_for("✗ not among the files the last run changed: nowhere.txt (/changes lists them)")

    pane.type("/changes")
    screen = pane.wait_for("The changes of the last run · 2 files")
    shown = screen[screen.rindex("The changes of the last run · 2 files") :]
    assert "modified a.txt · bash" in shown and "added    e.txt · bash" in shown
    assert "b.txt" not in shown and "d.txt" not in shown

    pane.type("thanks")  # a run that changes nothing
    pane.wait_for("Nothing to change.")
    pane.type("/changes")
    pane.wait_for("No changes in the last run.")
    pane.type("/revert")
    pane.wait_for("nothing to revert: no changes in the last run")
    pane.type("/changes all")
    screen = pane.wait_for("The changes of this session · 2 files")
    shown = screen[screen.rindex("The changes of this session") :]
    assert "modified a.txt · bash" in shown and "added    e.txt · bash" in shown
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def test_chat_revert_refuses_over_a_hand_edit_and_force_reverts_the_others(
    pane: Pane, tmp_path: Path
) -> None:
    folder = bash_folder(tmp_path)
    chat_with_bash(pane, tmp_path, folder)
    (folder / "a.txt").write_text("changed by hand\n")

    pane.type("/revert a.txt")
    pane.wait_for("✗ these files changed since the run; nothing was reverted:\n  a.txt: ")
    pane.wait_for("a revert never overwrites what changed since: these stay as they are")
    assert (folder / "a.txt").read_text() == "changed by hand\n"

    pane.type("/revert")  # a list to pick from: everything first
    pane.wait_for("revert what the last run did to which file? (/revert PATH | all [force])")
    pane.wait_for(
        "› everything the last run changed (4 files)\n"
        "  modified a.txt · bash\n  deleted  b.txt · bash\n  renamed  c.txt -> d.txt · bash\n"
        "  added    e.txt · bash\n↑↓ choose"
    )
    pane.keys("Enter")
    pane.wait_for("✗ these files changed since the run; nothing was reverted:\n  a.txt: ")
    pane.wait_for("/revert all force reverts the others and leaves these as they are")
    assert not (folder / "b.txt").exists() and (folder / "e.txt").exists()

    pane.type("/revert all force")
    pane.wait_for("↶ reverted: ")
    screen = pane.wait_for("  skipped a.txt: ")
    done = screen[screen.rindex("↶ reverted: ") :].splitlines()[0]
    assert all(
        part in done for part in ("restored b.txt", "deleted d.txt", "restored c.txt", "deleted e.txt")
    )
    assert (folder / "a.txt").read_text() == "changed by hand\n"
    assert (folder / "b.txt").read_text() == "bee\n" and (folder / "c.txt").read_text() == "sea\n"
    assert not (folder / "d.txt").exists() and not (folder / "e.txt").exists()
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
