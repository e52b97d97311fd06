"""Running a Lua test script in real headless Neovim and reading its ``N passed, M failed`` summary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
NVIM, AGENTLS = BIN / "nvim", BIN / "agentls"


def run_script(
    script: Path, args: list[str], cwd: Path, state: Path, timeout: float, env: dict[str, str] | None = None
) -> tuple[int, int, str]:
    """``nvim --headless --clean -l SCRIPT AGENTLS ARGS...``: (passed, failed, the whole output)."""
    for tool in (NVIM, AGENTLS):
        if not tool.exists():
            pytest.fail(f"{tool} is missing: install the dev environment with pip install -e '.[dev]'")
    # Neovim's own state (the LSP log, shada) goes to the test's folder, not the user's.
    xdg = {f"XDG_{kind}_HOME": str(state / kind.lower()) for kind in ("STATE", "DATA", "CONFIG", "CACHE")}
    try:
        result = subprocess.run(
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
    report = f"exit code {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    lines = result.stdout.strip().splitlines()
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1].strip()) if lines else None
    assert summary, "no summary line\n" + report
    assert result.returncode == 0 or int(summary[2]) > 0, report
    return int(summary[1]), int(summary[2]), report
