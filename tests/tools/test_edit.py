"""The ``write`` and ``edit`` tools over real files in a temporary folder."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentToolResult
from agentls.ai import AbortController, AbortSignal, TextContent
from agentls.ai.abort import AbortError
from agentls.tools import DiskWorkspace, ToolInputError, Workspace
from agentls.tools.edit import edit_tool, write_tool
from agentls.tools.files import write_text_atomic
from agentls.tools.text_diff import unified_diff
from agentls.tools.workspace import Document


async def write(ws: Workspace, signal: AbortSignal | None = None, **args: Any) -> AgentToolResult:
    return await write_tool(ws).execute("call-1", args, signal, None)


async def edit(ws: Workspace, path: str, *pairs: tuple[str, str], signal: AbortSignal | None = None) -> Any:
    args = {"path": path, "edits": [{"oldText": old, "newText": new} for old, new in pairs]}
    return await edit_tool(ws).execute("call-1", args, signal, None)


def body(result: AgentToolResult) -> str:
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def ws(tmp_path: Path) -> DiskWorkspace:
    return DiskWorkspace(tmp_path)


# --- write -----------------------------------------------------------------------------


async def test_write_creates_the_file_and_its_parent_folders(ws: DiskWorkspace, tmp_path: Path) -> None:
    result = await write(ws, path="a/b/c.txt", content="héllo\n")
    target = tmp_path / "a" / "b" / "c.txt"
    assert target.read_bytes() == "héllo\n".encode()
    assert body(result) == "Wrote 7 bytes to a/b/c.txt (new file)"
    assert result.details == {"path": str(target), "created": True, "bytes": 7}
    assert leftovers(target.parent) == []


async def test_write_replaces_an_existing_file_and_keeps_its_mode(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old\n")
    os.chmod(target, 0o751)
    result = await write(ws, path="run.sh", content="echo new\n")
    assert target.read_text() == "echo new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert body(result) == "Wrote 9 bytes to run.sh (replaced the existing file)"
    assert result.details["created"] is False
    assert leftovers(tmp_path) == []


async def test_a_new_file_gets_the_usual_mode_not_the_private_temp_file_mode(
    ws: DiskWorkspace, tmp_path: Path
) -> None:
    await write(ws, path="n.txt", content="x")
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "n.txt").stat().st_mode) == 0o666 & ~mask


async def test_write_writes_line_endings_as_given(ws: DiskWorkspace, tmp_path: Path) -> None:
    await write(ws, path="w.txt", content="a\r\nb\n")
    assert (tmp_path / "w.txt").read_bytes() == b"a\r\nb\n"


async def test_write_is_atomic_a_failed_write_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("original")

    def failing_replace(src: str, dst: str, **dir_fds: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_text_atomic(target, "new content")
    assert target.read_text() == "original"
    assert leftovers(tmp_path) == []


async def test_write_text_atomic_replaces_by_rename(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    before = target.stat().st_ino
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_ino != before  # a new inode renamed over the old one, not an in-place rewrite


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
async def test_write_through_a_symlink_replaces_the_target_and_keeps_the_link(
    ws: DiskWorkspace, tmp_path: Path
) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await write(ws, path="link.txt", content="new")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


async def test_write_refuses_paths_outside_the_workspace(ws: DiskWorkspace, tmp_path: Path) -> None:
    with pytest.raises(ToolInputError, match="outside the workspace"):
        await write(ws, path="../escape.txt", content="x")
    assert not (tmp_path.parent / "escape.txt").exists()


async def test_write_refuses_a_directory(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolInputError, match="is a directory"):
        await write(ws, path="d", content="x")


async def test_write_checks_its_arguments(ws: DiskWorkspace) -> None:
    with pytest.raises(ToolInputError, match="'content'"):
        await write(ws, path="a.txt")


async def test_write_aborted_writes_nothing(ws: DiskWorkspace, tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError):
        await write(ws, controller.signal, path="a.txt", content="x")
    assert not (tmp_path / "a.txt").exists()


# --- edit ------------------------------------------------------------------------------


async def test_edit_replaces_one_match_and_returns_a_unified_diff(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "src" / "m.py"
    target.parent.mkdir()
    target.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    os.chmod(target, 0o640)
    result = await edit(ws, "src/m.py", ("line 5\n", "five\n"))
    assert target.read_text() == "".join(f"line {i}\n" if i != 5 else "five\n" for i in range(1, 11))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    diff = result.details["diff"]
    assert diff == (
        "--- a/src/m.py\n+++ b/src/m.py\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n"
        "-line 5\n+five\n line 6\n line 7\n line 8\n"
    )
    assert result.details == {"path": str(target), "diff": diff, "replacements": 1}
    assert diff in body(result)
    assert leftovers(target.parent) == []


async def test_edit_applies_several_edits_in_order(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    # The second edit matches text the first one produced.
    result = await edit(ws, "a.txt", ("alpha", "ALPHA"), ("ALPHA\nbeta", "A-B"), ("gamma", "G"))
    assert target.read_text() == "A-B\nG\n"
    assert result.details["replacements"] == 3
    assert body(result).startswith("Edited a.txt (3 replacements):")


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("alpha", "A"), ("nope", "x"), ("gamma", "G")], "edit 2 of 3: oldText not found in a.txt"),
        ([("beta", "B"), ("x", "y")], "edit 1 of 2: oldText found 3 times in a.txt; add more context"),
        ([("", "x")], "edit 1 of 1: oldText is empty"),
        ([("alpha", "A"), ("gamma", "gamma")], r"edit 2 of 2: .*\(no change\)"),
    ],
)
async def test_failed_edits_name_the_edit_and_write_nothing(
    ws: DiskWorkspace, tmp_path: Path, pairs: list[tuple[str, str]], message: str
) -> None:
    target = tmp_path / "a.txt"
    original = "alpha\nbeta\nbeta\nbeta\ngamma\n".replace("beta\nbeta\nbeta", "beta x\nbeta x\nbeta x")
    target.write_text(original)
    mtime = target.stat().st_mtime_ns
    with pytest.raises(ToolInputError, match=message):
        await edit(ws, "a.txt", *pairs)
    assert target.read_text() == original
    assert target.stat().st_mtime_ns == mtime
    assert leftovers(tmp_path) == []


async def test_overlapping_matches_are_not_unique(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("aaa")
    with pytest.raises(ToolInputError, match="found 2 times"):
        await edit(ws, "a.txt", ("aa", "b"))


async def test_edit_keeps_crlf_line_endings(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "w.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await edit(ws, "w.txt", ("one\ntwo", "uno\ndos\nmas"))
    assert target.read_bytes() == b"uno\r\ndos\r\nmas\r\nthree\r\n"
    assert "\r" not in result.details["diff"]
    # oldText written with CRLF matches too.
    await edit(ws, "w.txt", ("dos\r\nmas", "two"))
    assert target.read_bytes() == b"uno\r\ntwo\r\nthree\r\n"


async def test_edit_keeps_a_utf8_bom(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "b.txt"
    target.write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    result = await edit(ws, "b.txt", ("hello", "salut"))
    assert target.read_bytes() == b"\xef\xbb\xbfsalut\r\nworld\r\n"
    assert "\ufeff" not in result.details["diff"]


async def test_edit_matches_mixed_line_endings_exactly(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "m.txt"
    target.write_bytes(b"a\r\nb\nc\n")
    await edit(ws, "m.txt", ("b\n", "B\n"))
    assert target.read_bytes() == b"a\r\nB\nc\n"


async def test_edit_refuses_paths_outside_the_workspace(ws: DiskWorkspace, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret")
    try:
        with pytest.raises(ToolInputError, match="outside the workspace"):
            await edit(ws, str(outside), ("secret", "x"))
        assert outside.read_text() == "secret"
    finally:
        outside.unlink()


async def test_edit_of_a_missing_file_fails(ws: DiskWorkspace, tmp_path: Path) -> None:
    with pytest.raises(ToolInputError, match=r"File not found: nope\.txt"):
        await edit(ws, "nope.txt", ("a", "b"))
    assert not (tmp_path / "nope.txt").exists()


async def test_edit_needs_at_least_one_edit(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(ToolInputError, match="non-empty list"):
        await edit_tool(ws).execute("c", {"path": "a.txt", "edits": []}, None, None)


async def test_edit_refuses_binary_files(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x00\x01abc")
    with pytest.raises(ToolInputError, match="binary"):
        await edit(ws, "b.bin", ("abc", "x"))


async def test_edit_aborted_before_writing_leaves_the_file(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("alpha\n")
    controller = AbortController()

    class AbortingWorkspace(DiskWorkspace):
        async def read_document(self, path: str | Path) -> Document:
            document = await super().read_document(path)
            controller.abort()  # aborted after reading, before writing
            return document

    with pytest.raises(AbortError):
        await edit(AbortingWorkspace(tmp_path), "a.txt", ("alpha", "beta"), signal=controller.signal)
    assert target.read_text() == "alpha\n"


async def test_edit_accepts_the_single_edit_argument_shape(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    tool = edit_tool(ws)
    assert tool.prepare_arguments is not None
    args = tool.prepare_arguments({"path": "a.txt", "oldText": "alpha", "newText": "beta"})
    await tool.execute("c", args, None, None)
    assert (tmp_path / "a.txt").read_text() == "beta"


async def test_parallel_edits_of_one_file_do_not_lose_updates(ws: DiskWorkspace, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("".join(f"k{i}\n" for i in range(10)))
    await asyncio.gather(*(edit(ws, "a.txt", (f"k{i}\n", f"v{i}\n")) for i in range(10)))
    assert target.read_text() == "".join(f"v{i}\n" for i in range(10))


def test_unified_diff_marks_a_missing_final_newline() -> None:
    assert unified_diff("a\nb", "a\nc", "f") == (
        "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
        "\\ No newline at end of file\n"
    )


def test_the_diff_of_a_large_file_is_bounded_and_numbered_as_in_the_whole_file() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 100_001))
    new = old.replace("line 50000\n", "changed\n").replace("line 99999\n", "x" * 5000 + "\n")
    diff = unified_diff(old, new, "big.txt")
    assert diff.startswith("--- a/big.txt\n+++ b/big.txt\n@@ -49997,7 +49997,7 @@\n line 49997\n")
    assert "-line 50000\n+changed\n" in diff
    assert "@@ -99996,5 +99996,5 @@" in diff and f"+{'x' * 1000}… [4000 more characters]\n" in diff
    huge = unified_diff(old, "".join(f"other {n}\n" for n in range(1, 100_001)), "big.txt")
    assert len(huge.encode()) <= 50 * 1024 + 100
    assert huge.endswith(" more lines not shown.]\n")
