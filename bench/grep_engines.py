"""Benchmark: the ``grep`` tool with ``rg`` picking the files, and in pure Python.

    .venv/bin/python bench/grep_engines.py [--files 3000] [--lines 200] [--hits 20] [--repeat 3]

Builds a tree of FILES text files of LINES lines each in a temporary folder, HITS of
which contain the needle, and runs the real ``grep`` tool over it with ``rg`` (when one
is found) and without. It prints the best time of REPEAT runs of each, and their ratio.
Both must return the same text (it checks that, and says so). This measures; it asserts
nothing about speed.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from agentls.tools import DiskWorkspace
from agentls.tools.ripgrep import find_rg
from agentls.tools.search import grep_tool


def build_tree(root: Path, files: int, lines: int, hits: int) -> float:
    """Write the tree; its size in MiB."""
    filler = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(lines))
    for index in range(files):
        folder = root / f"pkg{index % 50:02}"
        folder.mkdir(exist_ok=True)
        text = filler + (f"needle_{index} = True\n" if index < hits else "")
        (folder / f"module{index:05}.py").write_text(text)
    return sum(path.stat().st_size for path in root.rglob("*.py")) / 1024 / 1024


async def best_time(workspace: DiskWorkspace, rg: str | None, repeat: int) -> tuple[float, str]:
    tool = grep_tool(workspace, rg=rg)
    best, text = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        result = await tool.execute("bench", {"pattern": r"needle_\d+", "limit": 1000}, None, None)
        best = min(best, time.perf_counter() - started)
        text = result.content[0].text  # type: ignore[union-attr]
    return best, text


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--hits", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentls-grep-bench-") as folder:
        root = Path(folder)
        size = build_tree(root, args.files, args.lines, args.hits)
        print(f"tree: {args.files} files, {args.lines} lines each, {size:.1f} MiB, {args.hits} with a match")
        workspace = DiskWorkspace(root)
        python_time, python_text = await best_time(workspace, None, args.repeat)
        print(f"pure Python:      {python_time * 1000:8.1f} ms")
        rg = find_rg()
        if rg is None:
            print("rg: not found (pip install 'agentls[rg]' or put rg on PATH); no comparison")
            return
        rg_time, rg_text = await best_time(workspace, rg, args.repeat)
        print(f"rg picks files:   {rg_time * 1000:8.1f} ms   ({rg})")
        print(f"ratio: {python_time / rg_time:.1f}x faster with rg; same output: {rg_text == python_text}")


if __name__ == "__main__":
    asyncio.run(main())
