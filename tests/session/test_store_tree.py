"""The session file as a tree: branches, the leaf on load, damaged parents, forks and file-change records."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.ai import ToolResultMessage, user_message
from agentls.session.history.file_changes import (
    MAX_RECORDED_BYTES,
    ChangeLog,
    FileChange,
    FileChanges,
    Snapshot,
)
from agentls.session.history.store import SessionStore
from agentls.session.history.tree import FILE_CHANGES
from agentls.session.history.tree_view import tree_view

from tests.session.test_store import make_header, read_lines, session_file


def texts(store: SessionStore, session_id: str) -> list[str]:
    return [m.content[0].text for m in store.load(session_id).messages]  # type: ignore[union-attr]


async def test_appends_after_moving_the_leaf_start_a_branch_and_a_load_follows_the_last_entry(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "data")
    writer = store.create(make_header("s1", tmp_path))
    one = await writer.append_message(user_message("one"))
    await writer.append_message(user_message("two"))
    writer.move_leaf(one)
    await writer.append_message(user_message("three"))
    writer.close()
    assert texts(store, "s1") == ["one", "three"]
    loaded = store.load("s1")
    assert [node.parent_id for node in loaded.tree] == [None, one, one]

    writer = store.open_writer("s1")  # continues the branch it was on
    await writer.append_message(user_message("four"))
    writer.close()
    assert texts(store, "s1") == ["one", "three", "four"]

    store.fork("s1", one, "s2", 2_000)  # the path to the entry only, not the branch beside it
    assert texts(store, "s2") == ["one"]


async def test_an_entry_whose_parent_line_is_damaged_hangs_from_the_entry_before_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "data")
    writer = store.create(make_header("s1", tmp_path))
    for text in ("one", "two", "three"):
        await writer.append_message(user_message(text))
    writer.close()
    path = session_file(store, "s1")
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:40]  # "two" is cut: "three" names a parent that is not in the file
    path.write_text("\n".join(lines) + "\n")
    loaded = store.load("s1")
    assert texts(store, "s1") == ["one", "three"]
    assert len(loaded.warnings) == 1

    store.fork("s1", loaded.tree.leaf_id or "", "s2", 2_000)  # copied with the parent it was read with
    [_, first, second] = read_lines(session_file(store, "s2"))
    assert second["parentId"] == first["id"]
    assert texts(store, "s2") == ["one", "three"]


async def test_file_change_records_round_trip_large_and_binary_files_as_hashes(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "data")
    writer = store.create(make_header("s1", tmp_path))
    log = ChangeLog()
    await log.record("c1", tmp_path / "a.txt", b"before\n", "after\n")
    await log.record("c1", tmp_path / "new.txt", None, "created\n")
    await log.record("c1", tmp_path / "big.txt", b"x" * (MAX_RECORDED_BYTES + 1), "small\n")
    await log.record("c1", tmp_path / "bin.dat", b"\xff\xfe", "text\n")
    changes = log.take("c1")
    assert changes is not None and log.take("c1") is None
    await writer.append_custom(FILE_CHANGES, changes, changes.wire())
    writer.close()

    [record] = [n for n in store.load("s1").tree if n.custom_type == FILE_CHANGES]
    assert record.data == changes
    a, new, big, binary = record.data.changes
    assert (a.before.text, a.after.text, new.before) == ("before\n", "after\n", None)  # type: ignore[union-attr]
    assert big.before is not None and big.before.text is None and big.before.size == MAX_RECORDED_BYTES + 1
    assert binary.before is not None and binary.before.text is None
    stored = read_lines(session_file(store, "s1"))[1]["data"]["changes"]
    assert stored[2]["before"] == {
        "sha256": big.before.sha256,
        "bytes": MAX_RECORDED_BYTES + 1,
        "blob": big.before.blob,  # git's id of the content, as a snapshot of the folder names it
    }


async def test_a_damaged_file_change_record_is_skipped_with_a_warning(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "data")
    store.create(make_header("s1", tmp_path)).close()
    entry = {"type": "custom", "id": "x", "parentId": None, "timestamp": 1, "customType": FILE_CHANGES}
    bad = {**entry, "data": {"toolCallId": "c", "changes": [{"path": "/a", "before": {"text": 1}}]}}
    with session_file(store, "s1").open("a") as file:
        file.write(json.dumps(bad) + "\n")
    loaded = store.load("s1")
    assert len(loaded.tree) == 0
    [warning] = loaded.warnings
    assert "line 2: skipped" in warning and "snapshot" in warning


async def test_the_tree_view_gives_each_tool_result_the_files_of_its_own_call(tmp_path: Path) -> None:
    """Parallel calls record their changes before they write, so the records come in any order
    before the results (c2's record between c1's record and c1's result, here)."""
    store = SessionStore(tmp_path / "data")
    writer = store.create(make_header("s1", tmp_path))
    for call, name in (("c1", "a.txt"), ("c2", "b.txt"), ("c1", "c.txt")):
        changes = FileChanges(call, (FileChange(str(tmp_path / name), None, Snapshot.of(b"x\n")),))
        await writer.append_custom(FILE_CHANGES, changes, changes.wire())
    for call in ("c2", "c1"):
        await writer.append_message(ToolResultMessage(tool_call_id=call, tool_name="write", timestamp=1))
    writer.close()

    view = tree_view(store.load("s1").tree, tmp_path)
    assert [entry.files for entry in view.entries] == [["b.txt"], ["a.txt", "c.txt"]]
