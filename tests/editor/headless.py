"""Running a Lua test script in real headless Neovim and reading its ``N passed, M failed`` summary."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
NVIM, AGENTLS = BIN / "nvim", BIN / "agentls"


@dataclass(frozen=True)
class FeatureResult:
    """One feature of a suite run (``run.lua FEATURE...``): its tests' counts and its own output."""

    passed: int
    failed: int
    report: str


def run_script(
    script: Path,
    args: list[str],
    cwd: Path,
    state: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    killed: bool = False,
) -> tuple[int, int, str]:
    """``nvim --headless --clean -l SCRIPT AGENTLS ARGS...``: (passed, failed, the whole output).
    ``killed``: the script ends by killing its Neovim with SIGKILL (after its summary)."""
    result = _run(script, args, cwd, state, timeout, env)
    report = _report(result, result.stdout, result.stderr)
    lines = result.stdout.strip().splitlines()
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1].strip()) if lines else None
    assert summary, "no summary line\n" + report
    if killed:
        assert result.returncode == -signal.SIGKILL, report
    else:
        assert result.returncode == 0 or int(summary[2]) > 0, report
    return int(summary[1]), int(summary[2]), report


def run_features(
    script: Path, features: list[str], cwd: Path, state: Path, timeout: float
) -> dict[str, FeatureResult]:
    """``nvim --headless --clean -l SCRIPT AGENTLS FEATURE...`` (a suite that prints ``== FEATURE``
    before each feature's lines, on stdout and stderr, and ``FEATURE: N passed, M failed`` after
    them): each feature that started, with its part of both streams. A feature that never
    printed its counts (the suite crashed in it) has none passed."""
    result = _run(script, features, cwd, state, timeout, None)
    stdout, stderr = _sections(result.stdout), _sections(result.stderr)
    results = {}
    for feature, text in stdout.items():
        counts = re.search(rf"^{re.escape(feature)}: (\d+) passed, (\d+) failed$", text, re.MULTILINE)
        passed, failed = (int(counts[1]), int(counts[2])) if counts else (0, 0)
        results[feature] = FeatureResult(passed, failed, _report(result, text, stderr.get(feature, "")))
    return results


def _run(
    script: Path, args: list[str], cwd: Path, state: Path, timeout: float, env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    for tool in (NVIM, AGENTLS):
        if not tool.exists():
            pytest.fail(f"{tool} is missing: install the dev environment with pip install -e '.[dev]'")
    # Neovim's own state (the LSP log, shada) goes to the test's folder, not the user's.
    xdg = {f"XDG_{kind}_HOME": str(state / kind.lower()) for kind in ("STATE", "DATA", "CONFIG", "CACHE")}
    try:
        return subprocess.run(
            [str(NVIM), "--headless", "--clean", "-l", str(script), str(AGENTLS), *args],
            cwd=cwd,
            env={**os.environ, **xdg, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{script.name} ran for more than {timeout} s:\n{error.stdout}\n{error.stderr}")


def _report(result: subprocess.CompletedProcess[str], stdout: str, stderr: str) -> str:
    return f"exit code {result.returncode}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"


_FEATURE_HEADER = re.compile(r"^== (\S+)$", re.MULTILINE)


def _sections(text: str) -> dict[str, str]:
    """The text after each ``== FEATURE`` line, up to the next one, by feature."""
    parts = _FEATURE_HEADER.split(text)
    return dict(zip(parts[1::2], parts[2::2], strict=True))
