"""Benchmark: two agentls servers (a change and the tree before it, or one tree two ways) in alternated pairs.

    python3 bench/alternate.py --b "env PYTHONPATH=/tmp/before/server .venv/bin/python -m agentls serve" \\
        [--a "COMMAND"] [--runs 6] [--api anthropic|openai] [tool-loop big-context ...]

``A`` is this tree's ``.venv/bin/agentls serve`` unless ``--a`` says otherwise; each command is a
whole server command line (shell-split), as ``../shared/bench``'s ``AGENTLS_CMD``. Each pair runs
one of each on the same workload through the shared harness (``harness.run_once``, its mock and
its measurements), the order swapped from pair to pair, so that both share every stretch of this
machine's speed, which drifts by a third within half an hour: the medians of separate runs minutes
apart carry that drift, a pair's ratio much less of it. Prints, per workload, the medians of A and
B and their ratio B/A (with ``--out``, every run as JSON too). This measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"

FIGURES = (
    ("wall_s", "wall s (prompt->end)"),
    ("cpu_run_s", "server CPU s during run"),
    ("ttft_s", "first token s"),
    ("session_s", "initialize->session s"),
    ("startup_to_prompt_s", "spawn->session s"),
    ("turn_gap_first10pct_ms", "turn gap ms, first 10 %"),
    ("turn_gap_last10pct_ms", "turn gap ms, last 10 %"),
    ("peak_rss_kb", "peak RSS kB"),
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "workloads", nargs="*", default=["tool-loop", "big-context"], help="shared workload names, or files"
    )
    parser.add_argument("--a", help="server command A (default: this tree's .venv/bin/agentls serve)")
    parser.add_argument("--b", required=True, help="server command B")
    parser.add_argument("--runs", type=int, default=6, help="pairs per workload (default 6)")
    parser.add_argument("--api", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--out", type=Path, help="also write every run here, as JSON")
    parser.add_argument("--bench", default=str(SHARED_BENCH), help="the shared bench folder")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    os.environ.setdefault("AGENTLS_PROJECT", str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, args.bench)
    import harness  # type: ignore[import-not-found]
    from adapters.agentls_adapter import AgentlsAdapter  # type: ignore[import-not-found]

    paths = {name: _workload_path(name, args.bench) for name in args.workloads}
    if missing := [name for name, path in paths.items() if path is None]:
        parser.error(f"no such workload: {', '.join(missing)} (a name in {args.bench}/workloads, or a file)")
    servers = {"A": AgentlsAdapter(cmd=args.a), "B": AgentlsAdapter(cmd=args.b)}
    print(f"A: {' '.join(servers['A'].cmd or ['agentls serve'])}\nB: {' '.join(servers['B'].cmd)}\n")
    print("| workload | figure | A | B | B/A |\n|---|---|---|---|---|")
    every: dict[str, dict[str, list[dict]]] = {}
    for workload, path in paths.items():
        runs: dict[str, list[dict]] = {"A": [], "B": []}
        for pair in range(args.runs):
            for name in ("A", "B") if pair % 2 == 0 else ("B", "A"):
                run = harness.run_once(servers[name], path, api=args.api)
                if not run.get("ended"):
                    sys.exit(f"{workload}: server {name} did not finish the run: {run.get('stderr_tail')}")
                runs[name].append(run)
        every[workload] = runs
        for key, label in FIGURES:
            values = {name: [r[key] for r in done if r.get(key) is not None] for name, done in runs.items()}
            if not values["A"] or not values["B"]:
                continue
            a, b = statistics.median(values["A"]), statistics.median(values["B"])
            ratio = f"{b / a:.3f}" if a else "-"
            print(f"| {workload} | {label} | {a:.4g} | {b:.4g} | {ratio} |", flush=True)
    print(f"\nMedians of {args.runs} alternated pairs each, --api {args.api}.")
    if args.out is not None:
        args.out.write_text(json.dumps(every, indent=1))


def _workload_path(name: str, bench: str) -> str | None:
    for path in (name, os.path.join(bench, "workloads", f"{name}.json")):
        if os.path.isfile(path):
            return path
    return None


if __name__ == "__main__":
    main()
