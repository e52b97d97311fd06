"""The kernel reproduces the golden traces recorded from the real Pi 0.85.0.

Every public scenario of ``shared/conformance`` and every scenario of the
project's own (``tests/conformance/scenarios``, goldens recorded with the
reference runner) is played by ``tests/conformance/runner.py`` in a subprocess,
exactly as the README's contract runs it, and compared with ``compare.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, shared_dir

RUNNER = PROJECT_ROOT / "tests" / "conformance" / "runner.py"
OWN_SCENARIOS = PROJECT_ROOT / "tests" / "conformance" / "scenarios"


def _scenarios(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


PUBLIC = _scenarios(shared_dir() / "conformance" / "scenarios")
OWN = _scenarios(OWN_SCENARIOS)


def run_and_compare(scenario: Path, compare: Path, tmp_path: Path) -> None:
    golden = scenario.parent.parent / "golden" / f"{scenario.stem}.jsonl"
    assert golden.is_file(), f"no golden trace for {scenario.name}"
    run = subprocess.run(
        [sys.executable, str(RUNNER), str(scenario)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, (
        f"runner failed ({run.returncode}):\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    )
    raw = tmp_path / "raw.jsonl"
    raw.write_text(run.stdout, encoding="utf-8")
    verdict = subprocess.run(
        [sys.executable, str(compare), str(golden), str(raw)], capture_output=True, text=True, timeout=60
    )
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr


def test_public_scenarios_are_present() -> None:
    assert len(PUBLIC) >= 39, f"expected the 39 public scenarios under {shared_dir()}/conformance/scenarios"


@pytest.mark.parametrize("scenario", PUBLIC, ids=[p.stem for p in PUBLIC])
def test_public_scenario(scenario: Path, conformance_dir: Path, tmp_path: Path) -> None:
    run_and_compare(scenario, conformance_dir / "compare.py", tmp_path)


@pytest.mark.parametrize("scenario", OWN, ids=[p.stem for p in OWN])
def test_own_scenario(scenario: Path, conformance_dir: Path, tmp_path: Path) -> None:
    run_and_compare(scenario, conformance_dir / "compare.py", tmp_path)
