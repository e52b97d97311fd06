"""The ``read`` tool and the disk workspace, over real files and symlinks in a temporary folder."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pytest
from agentls.agent import Agent, AgentState, AgentToolResult
from agentls.ai import AbortController, AbortSignal, ImageContent, TextContent, ToolResultMessage
from agentls.ai.abort import AbortError
from agentls.ai.providers.faux import FauxProvider
from agentls.tools import DiskWorkspace, FileStat, ToolInputError, Workspace, coding_tools, read_tool
from agentls.tools.read import MAX_BYTES, MAX_LINES

from tests.agent.helpers import calls, text

T = TypeVar("T")


def png_bytes() -> bytes:
    """A real 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


async def run(workspace: Workspace, signal: AbortSignal | None = None, **args: Any) -> AgentToolResult:
    return await read_tool(workspace).execute("call-1", args, signal, None)


def body(result: AgentToolResult) -> str:
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


@pytest.fixture
def ws(tmp_path: Path) -> DiskWorkspace:
    return DiskWorkspace(tmp_path)


def write_lines(path: Path, count: int, width: int = 0) -> None:
    path.write_text("".join(f"line {i}{'x' * width}\n" for i in range(1, count + 1)), encoding="utf-8")


# --- text ------------------------------------------------------------------------------


async def test_text_comes_back_numbered_like_cat_n(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n\tbeta\n\ngamma", encoding="utf-8")
    result = await run(ws, path="a.txt")
    assert body(result) == "     1\talpha\n     2\t\tbeta\n     3\t\n     4\tgamma"
    assert result.details == {
        "path": str(tmp_path / "a.txt"),
        "totalLines": 4,
        "startLine": 1,
        "endLine": 4,
        "truncated": False,
        "truncatedBy": None,
        "nextOffset": None,
    }


async def test_crlf_and_a_final_newline_do_not_add_lines(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await run(ws, path="w.txt")
    assert body(result) == "     1\tone\n     2\ttwo"
    assert result.details["totalLines"] == 2


async def test_offset_and_limit_with_a_note_about_the_rest(ws: DiskWorkspace, tmp_path: Path) -> None:
    write_lines(tmp_path / "f.txt", 10)
    result = await run(ws, path="f.txt", offset=3, limit=2)
    assert (
        body(result) == "     3\tline 3\n     4\tline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
    )
    assert result.details["startLine"] == 3 and result.details["endLine"] == 4
    assert result.details["nextOffset"] == 5 and result.details["truncated"] is False

    one_left = await run(ws, path="f.txt", offset=8, limit=2)
    assert body(one_left).endswith("[1 more line in file. Use offset=10 to continue.]")

    tail = await run(ws, path="f.txt", offset=9)
    assert body(tail) == "     9\tline 9\n    10\tline 10"
    assert tail.details["nextOffset"] is None


async def test_offset_past_the_end_is_a_clear_error(ws: DiskWorkspace, tmp_path: Path) -> None:
    write_lines(tmp_path / "f.txt", 3)
    with pytest.raises(ToolInputError, match=r"Offset 4 is beyond end of file f\.txt \(3 lines total\)"):
        await run(ws, path="f.txt", offset=4)


async def test_bad_offset_or_limit_values(ws: DiskWorkspace, tmp_path: Path) -> None:
    write_lines(tmp_path / "f.txt", 3)
    (tmp_path / "one.txt").write_text("x\n", encoding="utf-8")
    with pytest.raises(ToolInputError, match=r"Offset 2 is beyond end of file one\.txt \(1 line total\)"):
        await run(ws, path="one.txt", offset=2)
    with pytest.raises(ToolInputError, match="offset must be at least 1"):
        await run(ws, path="f.txt", offset=0)
    with pytest.raises(ToolInputError, match="limit must be an integer"):
        await run(ws, path="f.txt", limit=1.5)


async def test_truncation_by_lines(ws: DiskWorkspace, tmp_path: Path) -> None:
    write_lines(tmp_path / "big.txt", 5000)
    result = await run(ws, path="big.txt")
    lines = body(result).split("\n")
    assert lines[0] == "     1\tline 1" and lines[MAX_LINES - 1] == "  2000\tline 2000"
    assert lines[-1] == "[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]"
    assert result.details["truncated"] is True and result.details["truncatedBy"] == "lines"
    assert result.details["nextOffset"] == 2001

    last = await run(ws, path="big.txt", offset=4001)
    assert body(last).endswith("  5000\tline 5000")
    assert last.details["truncated"] is False


async def test_truncation_by_bytes(ws: DiskWorkspace, tmp_path: Path) -> None:
    write_lines(tmp_path / "wide.txt", 1000, width=200)
    result = await run(ws, path="wide.txt")
    text_, note = body(result).split("\n\n")
    shown = text_.split("\n")
    assert len(text_.encode()) <= MAX_BYTES
    assert len(shown) < 1000
    assert (
        note
        == f"[Showing lines 1-{len(shown)} of 1000 (50.0KB limit). Use offset={len(shown) + 1} to continue.]"
    )
    assert result.details["truncatedBy"] == "bytes" and result.details["endLine"] == len(shown)

    nxt = await run(ws, path="wide.txt", offset=len(shown) + 1)
    assert body(nxt).startswith(f"{len(shown) + 1:>6}\tline {len(shown) + 1}x")


async def test_a_single_line_longer_than_the_limit_gets_pis_pointer_to_bash(
    ws: DiskWorkspace, tmp_path: Path
) -> None:
    (tmp_path / "min.js").write_text("é" * 100_000 + "\nnext\n", encoding="utf-8")
    result = await run(ws, path="min.js")
    assert body(result) == (
        "[Line 1 is 195.3KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    )
    assert result.details["truncatedBy"] == "bytes" and result.details["nextOffset"] == 2
    assert result.details["totalLines"] == 2
    assert body(await run(ws, path="min.js", offset=2)) == "     2\tnext"


async def test_a_long_line_after_others_ends_the_page_before_it(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "mixed.txt").write_text("short\n" + "x" * 60_000 + "\nend", encoding="utf-8")
    result = await run(ws, path="mixed.txt")
    note = "[Showing lines 1-1 of 3 (50.0KB limit). Use offset=2 to continue.]"
    assert body(result) == f"     1\tshort\n\n{note}"
    assert "exceeds 50.0KB limit" in body(await run(ws, path="mixed.txt", offset=2))
    assert body(await run(ws, path="mixed.txt", offset=3)) == "     3\tend"


async def test_windows_across_chunks_count_every_line(ws: DiskWorkspace, tmp_path: Path) -> None:
    """Lines that straddle the reading's 1 MB chunks come back whole, and the count is the whole file's."""
    lines = [f"{i}:" + "y" * (i % 700) for i in range(20_000)]
    (tmp_path / "many.txt").write_text("\n".join(lines), encoding="utf-8")  # no final newline
    result = await run(ws, path="many.txt", offset=15_001, limit=40)
    shown = body(result).split("\n\n")[0].split("\n")
    assert shown == [f"{i + 1:>6}\t{lines[i]}" for i in range(15_000, 15_040)]
    assert result.details["totalLines"] == 20_000 and result.details["nextOffset"] == 15_041
    last = await run(ws, path="many.txt", offset=20_000)
    assert body(last) == f" 20000\t{lines[-1]}"


async def test_empty_file(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    result = await run(ws, path="empty.txt")
    assert body(result) == "[The file is empty.]"
    assert result.details["totalLines"] == 0 and result.details["startLine"] is None
    with pytest.raises(ToolInputError, match="beyond end of file"):
        await run(ws, path="empty.txt", offset=2)


async def test_unicode_text_and_invalid_utf8(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_text("\ufeffgrüße 👋\n日本語\n", encoding="utf-8")
    assert body(await run(ws, path="u.txt")) == "     1\tgrüße 👋\n     2\t日本語"
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert body(await run(ws, path="latin1.txt")) == "     1\tcaf\ufffd"


# --- images and binaries ---------------------------------------------------------------


async def test_image_comes_back_as_image_content(ws: DiskWorkspace, tmp_path: Path) -> None:
    data = png_bytes()
    (tmp_path / "dot.png").write_bytes(data)
    result = await run(ws, path="dot.png")
    assert result.content is not None
    note, image = result.content
    assert isinstance(note, TextContent) and note.text == "Read image file [image/png]"
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == data
    assert result.details == {"path": str(tmp_path / "dot.png"), "mimeType": "image/png", "size": len(data)}


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("a.JPG", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        ("a.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "image/gif"),
        ("a.webp", b"RIFF\x1a\x00\x00\x00WEBPVP8 \x00\x00", "image/webp"),
    ],
)
async def test_other_image_formats(
    ws: DiskWorkspace, tmp_path: Path, name: str, data: bytes, mime: str
) -> None:
    (tmp_path / name).write_bytes(data)
    result = await run(ws, path=name)
    assert result.content is not None and isinstance(result.content[1], ImageContent)
    assert result.content[1].mime_type == mime


async def test_an_image_needs_both_extension_and_magic_bytes(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(ToolInputError, match="not a png image despite its extension"):
        await run(ws, path="fake.png")
    (tmp_path / "dot.bin").write_bytes(png_bytes())
    with pytest.raises(
        ToolInputError, match="looks like a image/png image but lacks an image file extension"
    ):
        await run(ws, path="dot.bin")


async def test_binary_file_is_a_clear_error(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "prog.o").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    with pytest.raises(ToolInputError, match=r"prog\.o is a binary file \(264B\)"):
        await run(ws, path="prog.o")
    (tmp_path / "ctl.dat").write_bytes(bytes(range(1, 32)) * 4)
    with pytest.raises(ToolInputError, match="binary file"):
        await run(ws, path="ctl.dat")


# --- errors and paths ------------------------------------------------------------------


async def test_missing_file_and_directory(ws: DiskWorkspace, tmp_path: Path) -> None:
    with pytest.raises(ToolInputError, match=r"File not found: src/nope\.py"):
        await run(ws, path="src/nope.py")
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolInputError, match="src is a directory, not a file"):
        await run(ws, path="src")


async def test_paths_resolve_against_the_root(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n", encoding="utf-8")
    assert ws.resolve("pkg/m.py") == tmp_path / "pkg" / "m.py"
    assert ws.resolve("pkg/../pkg/./m.py") == tmp_path / "pkg" / "m.py"
    assert ws.resolve(str(tmp_path / "pkg" / "m.py")) == tmp_path / "pkg" / "m.py"
    assert body(await run(ws, path=str(tmp_path / "pkg" / "m.py"))) == "     1\tx = 1"


async def test_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret\n", encoding="utf-8")
    ws = DiskWorkspace(root)
    with pytest.raises(ToolInputError, match=rf"path \.\./secret\.txt is outside the workspace {root};"):
        await run(ws, path="../secret.txt")
    with pytest.raises(ToolInputError, match="is outside the workspace"):
        await run(ws, path=str(tmp_path / "secret.txt"))
    with pytest.raises(ToolInputError, match="is outside the workspace"):
        ws.resolve("~")
    with pytest.raises(ToolInputError, match="must not be empty"):
        ws.resolve("")


async def test_symlinks_pointing_out_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "inside.txt").write_text("fine\n", encoding="utf-8")
    (root / "alias.txt").symlink_to(root / "inside.txt")
    ws = DiskWorkspace(root)
    with pytest.raises(ToolInputError, match=r"path link\.txt resolves through a symlink to .*outside"):
        await run(ws, path="link.txt")
    with pytest.raises(ToolInputError, match="outside the workspace"):
        await run(ws, path="linkdir/secret.txt")
    with pytest.raises(ToolInputError, match="outside the workspace"):
        await ws.exists("linkdir/new.txt")
    # A symlink that stays inside is fine, and keeps its own name.
    assert ws.resolve("alias.txt") == root / "alias.txt"
    assert body(await run(ws, path="alias.txt")) == "     1\tfine"


async def test_a_symlinked_root_accepts_both_spellings(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "alias").symlink_to(real)
    ws = DiskWorkspace(tmp_path / "alias")
    assert body(await run(ws, path="a.txt")) == "     1\ta"
    assert ws.resolve(str(real / "a.txt")) == real / "a.txt"


async def test_allow_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n", encoding="utf-8")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    ws = DiskWorkspace(root, allow_outside=True)
    assert body(await run(ws, path="../outside/secret.txt")) == "     1\tsecret"
    assert body(await run(ws, path=str(outside / "secret.txt"))) == "     1\tsecret"
    assert body(await run(ws, path="link.txt")) == "     1\tsecret"
    assert ws.resolve("~") == Path.home()


async def test_stat_and_exists(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc", encoding="utf-8")
    (tmp_path / "d").mkdir()
    info = await ws.stat("a.txt")
    assert info.kind == "file" and info.size == 3 and info.mtime > 0
    assert (await ws.stat("d")).kind == "directory"
    assert info == FileStat(kind="file", size=3, mtime=(tmp_path / "a.txt").stat().st_mtime)
    assert await ws.exists("a.txt") and not await ws.exists("b.txt")
    with pytest.raises(FileNotFoundError):
        await ws.stat("b.txt")
    assert isinstance(ws, Workspace)


# --- abort -----------------------------------------------------------------------------


async def test_abort_before_reading(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError, match="Operation aborted"):
        await run(ws, signal=controller.signal, path="a.txt")


async def test_abort_during_the_read(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    controller = AbortController()

    class AbortingWorkspace(DiskWorkspace):
        async def read_content(self, path: str | Path, consume: Callable[[BinaryIO], T]) -> T:
            def aborted_then_consumed(stream: BinaryIO) -> T:
                controller.abort()
                return consume(stream)

            return await super().read_content(path, aborted_then_consumed)

    with pytest.raises(AbortError, match="Operation aborted"):
        await run(AbortingWorkspace(tmp_path), signal=controller.signal, path="a.txt")


# --- through the kernel ----------------------------------------------------------------


async def test_the_agent_runs_read_and_gets_tool_results(tmp_path: Path) -> None:
    (tmp_path / "hello.py").write_text("print('hi')\n", encoding="utf-8")
    faux = FauxProvider(
        [
            calls(
                ("c1", "read", {"path": "hello.py"}),
                ("c2", "read", {"path": "../etc/passwd"}),
                ("c3", "read", {"path": "hello.py", "offset": 0}),
            ),
            text("done"),
        ]
    )
    agent = Agent(
        initial_state=AgentState(model=faux.models[0], tools=coding_tools(DiskWorkspace(tmp_path))),
        stream_fn=faux.stream,
    )
    await agent.prompt("read hello.py")
    results = {m.tool_call_id: m for m in agent.state.messages if isinstance(m, ToolResultMessage)}
    ok, outside, invalid = results["c1"], results["c2"], results["c3"]
    assert ok.tool_name == "read" and not ok.is_error
    assert ok.content == [TextContent(text="     1\tprint('hi')")]
    assert ok.details["path"] == str(tmp_path / "hello.py") and ok.details["totalLines"] == 1
    assert outside.is_error and isinstance(outside.content[0], TextContent)
    assert outside.content[0].text.startswith(f"path ../etc/passwd is outside the workspace {tmp_path};")
    # The schema's minimum is checked by the kernel before the tool runs.
    assert invalid.is_error and isinstance(invalid.content[0], TextContent)
    assert "offset" in invalid.content[0].text
    assert agent.state.messages[-1].content[0].text == "done"  # type: ignore[union-attr]
