"""Benchmark: ``../shared/bench/compare.sh``'s table, with Pi, agentls and the floor run in turns.

    eval "$(bash ../shared/bench/setup-pi.sh)"
    python3 bench/compare_interleaved.py [--runs 5] [--api anthropic|openai]
        [--out /tmp/interleaved] [tool-loop big-context ...]

``compare.sh`` runs every Pi run, then every agentls run, then every floor run. On a shared
machine whose speed drifts (the CPU time of the same agentls run went from 3.8 to 5.4 s within
half an hour), each adapter is then timed in its own stretch of minutes and the ratios carry the
drift. Here each round runs one of each, in an order that rotates from round to round (so none is
always first or last), through the same harness and adapters (``harness.run_once``); the runs are
written as ``drive.py`` writes them (``<out>/<adapter>-<workload>-<api>.json``, medians by
``harness.median_summary``) and ``compare.py`` prints the table. This measures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
ADAPTERS = ("pi", "agentls", "floor")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("workloads", nargs="*", default=["long-stream", "tool-loop", "big-context"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--api", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--out", default="/tmp/agentls-interleaved")
    parser.add_argument("--bench", default=str(SHARED_BENCH), help="the shared bench folder")
    args = parser.parse_args()
    os.environ.setdefault("AGENTLS_PROJECT", str(Path(__file__).resolve().parents[1]))
    sys.path.insert(0, args.bench)
    import harness  # type: ignore[import-not-found]
    from drive import load_adapter  # type: ignore[import-not-found]

    os.makedirs(args.out, exist_ok=True)
    adapters = {name: load_adapter(name, {}) for name in ADAPTERS}
    for workload in args.workloads:
        path = os.path.join(args.bench, "workloads", f"{workload}.json")
        runs: dict[str, list[dict]] = {name: [] for name in ADAPTERS}
        for round_number in range(args.runs):
            shift = round_number % len(ADAPTERS)
            for name in ADAPTERS[shift:] + ADAPTERS[:shift]:
                run = harness.run_once(adapters[name], path, api=args.api)
                runs[name].append(run)
                print(
                    f"{workload} round {round_number + 1}/{args.runs} {name}: "
                    f"wall {run.get('wall_s', float('nan')):.3f} s, CPU {run.get('cpu_run_s')} s, "
                    f"ended {run.get('ended')}",
                    file=sys.stderr,
                    flush=True,
                )
        for name, done in runs.items():
            summary = {
                "adapter": adapters[name].name,
                "workload": workload,
                "api": args.api,
                "n": len(done),
                "median": harness.median_summary(done),
                "runs": done,
            }
            with open(
                os.path.join(args.out, f"{adapters[name].name}-{workload}-{args.api}.json"), "w"
            ) as file:
                json.dump(summary, file, indent=2)
    compare = [sys.executable, os.path.join(args.bench, "compare.py"), "--out", args.out, "--api", args.api]
    subprocess.run([*compare, *args.workloads], check=True)


if __name__ == "__main__":
    main()
