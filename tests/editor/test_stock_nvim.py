"""Stock Neovim without the plugin: an agent edit lands in the open buffer, ``u`` undoes it, the disk matches.

Neovim advertises ``workspace.applyEdit`` but not ``workspaceEdit.documentChanges``, so
the server sends the ``changes`` form of the edit. ``stock_nvim.lua`` runs in
``nvim --headless --clean`` against ``agentls serve`` on the faux provider and ends
its output with ``N passed, M failed``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.conftest import tool_call, write_faux_script

SCRIPT = Path(__file__).with_name("stock_nvim.lua")
BIN = Path(sys.executable).parent
TIMEOUT = 60


def test_an_agent_edit_lands_in_a_stock_neovim_buffer(tmp_path: Path) -> None:
    nvim, agentls = BIN / "nvim", BIN / "agentls"
    for tool in (nvim, agentls):
        if not tool.exists():
            pytest.fail(f"{tool} is missing: install the dev environment with pip install -e '.[dev]'")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "m.py").write_text("a = 1\nb = 2\n")
    edit = tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "b = 2", "newText": "b = 'two'"}]})
    faux = write_faux_script(
        tmp_path / "faux.json", [{"content": [edit], "stopReason": "toolUse"}, {"content": "Done."}]
    )
    xdg = {f"XDG_{kind}_HOME": str(tmp_path / kind.lower()) for kind in ("STATE", "DATA", "CONFIG", "CACHE")}
    keys = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    try:
        result = subprocess.run(
            [str(nvim), "--headless", "--clean", "-l", str(SCRIPT), str(agentls), str(faux), str(workspace)],
            cwd=workspace,
            env={**os.environ, **xdg, **keys},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"stock Neovim ran for more than {TIMEOUT} s:\n{error.stdout}\n{error.stderr}")
    report = f"exit code {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    lines = result.stdout.strip().splitlines()
    summary = re.fullmatch(r"(\d+) passed, (\d+) failed", lines[-1].strip()) if lines else None
    assert summary, "no summary line\n" + report
    assert int(summary[2]) == 0 and int(summary[1]) == 3, report
    assert (workspace / "m.py").read_text() == "a = 1\nb = 'two'\n"
