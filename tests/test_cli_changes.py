"""What chat's ``/changes`` prints of an ``agent/getChanges`` result and what ``/revert ...`` asks
for (``agentls.cli.changes``): the cases a faux run's ``bash`` does not make (binary and unrecorded
files, long diffs, checkpoints off, hidden characters in paths, paths with blanks)."""

from __future__ import annotations

from typing import Any

from agentls.cli.changes import (
    FILE_LINES,
    RevertCompleter,
    RevertRequest,
    changes_text,
    conflict_lines,
    revert_request,
)
from agentls.protocol import ChangesResult
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document


def changes(*files: dict[str, Any], checkpoints: str = "on") -> ChangesResult:
    """A result as the server sends it (wire names), one modified file by default."""
    wire = [
        {"uri": f"file:///w/{file['path']}", "status": "modified", "by": ["bash"], "hunks": [], **file}
        for file in files
    ]
    return ChangesResult.model_validate(
        {"runId": "run-1", "fromEntryId": "e1", "toEntryId": "e9", "files": wire, "checkpoints": checkpoints}
    )


HUNK = {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-old", "+new"]}


def test_binary_and_unrecorded_files_say_so_and_checkpoints_off_is_said() -> None:
    result = changes(
        {"path": "logo.png", "binary": True, "by": ["bash"]},
        {"path": "big.log", "recorded": False, "by": ["write"]},
        checkpoints="unavailable",
    )
    assert changes_text(result, whole_session=False).plain.splitlines() == [
        "checkpoints are unavailable: only the changes of write and edit are known",
        "The changes of the last run · 2 files (/revert PATH takes a file's back)",
        "modified logo.png · bash",
        "  binary file: no diff to show",
        "modified big.log · write",
        "  its content was not recorded (too large, or pruned): no diff to show",
    ]
    assert changes_text(changes(), whole_session=True).plain == "No changes in this session."


def test_a_long_diff_is_cut_and_hidden_characters_are_written_out() -> None:
    lines = [f"+line {i}" for i in range(FILE_LINES + 50)]
    long = {**HUNK, "oldLines": 0, "newLines": len(lines), "lines": lines}
    text = changes_text(
        changes({"path": "gen\x1b[2J.py", "status": "added", "by": ["bash", "edit"], "hunks": [long]}),
        whole_session=False,
    ).plain
    shown = text.splitlines()
    assert shown[1] == "added    gen\\x1b[2J.py · bash, edit"
    assert shown[2] == f"@@ -1,0 +1,{FILE_LINES + 50} @@"
    assert len(shown) == 2 + FILE_LINES + 1
    assert shown[-1] == "  … 51 more lines of this file's diff"  # the @@ line counts as one
    assert "\x1b" not in text


def test_revert_takes_all_paths_with_blanks_old_names_and_force() -> None:
    result = changes(
        {"path": "my notes.txt", "hunks": [HUNK]},
        {"path": "new.txt", "status": "renamed", "oldPath": "old.txt"},
        {"path": "z.txt"},
    )
    assert revert_request("all", result) == RevertRequest(None, False, "all")
    assert revert_request("all force", result) == RevertRequest(None, True, "all")
    assert revert_request("", result) == RevertRequest([], False, "")
    assert revert_request("my notes.txt force", result) == RevertRequest(
        ["my notes.txt"], True, "my notes.txt"
    )
    assert revert_request("./old.txt z.txt", result) == RevertRequest(
        ["new.txt", "z.txt"], False, "./old.txt z.txt"
    )
    assert revert_request("z.txt new.txt z.txt", result).files == ["z.txt", "new.txt"]  # type: ignore[union-attr]
    assert revert_request("z.txt gone.txt", result) == (
        "✗ not among the files the last run changed: gone.txt (/changes lists them)"
    )


def test_a_conflict_says_how_to_force_only_when_others_would_be_reverted() -> None:
    result = changes({"path": "a.txt"}, {"path": "b.txt"})
    data = {"kind": "fileConflict", "files": [{"path": "a.txt", "reason": "changed since"}]}
    some = conflict_lines(data, RevertRequest(None, False, "all"), result)
    assert some == [
        ("✗ these files changed since the run; nothing was reverted:", "red"),
        ("  a.txt: changed since", "yellow"),
        ("/revert all force reverts the others and leaves these as they are", "yellow"),
    ]
    alone = conflict_lines(data, RevertRequest(["a.txt"], False, "a.txt"), result)
    assert alone[-1] == ("a revert never overwrites what changed since: these stay as they are", "yellow")


def test_revert_completes_all_and_the_paths_by_name_then_the_next_path() -> None:
    completer = RevertCompleter(lambda: ["docs/notes.md", "notes.txt", "src/app.py"])

    def offered(text: str) -> list[str]:
        return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

    assert offered("/revert ") == ["all", "notes.txt", "src/app.py", "docs/notes.md"]
    assert offered("/revert not") == ["notes.txt", "docs/notes.md"]
    assert offered("/revert a") == ["all", "src/app.py"]
    assert offered("/revert notes.txt a") == ["src/app.py"]
    assert offered("/revertx") == [] and offered("/rewind ") == []
    assert list(RevertCompleter(list).get_completions(Document("/revert "), CompleteEvent())) == []
