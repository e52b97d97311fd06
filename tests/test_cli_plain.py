"""``agentls run`` into a pipe: lines go as they are, never wrapped or cut at a width."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import PROJECT_ROOT
from tests.server.conftest import tool_call, write_faux_script
from tests.test_cli_run import TIMEOUT, environment


def test_plain_output_is_never_wrapped_or_cut(tmp_path: Path) -> None:
    sentence = (
        "This sentence is long enough to pass the eighty columns a console assumes when it is no terminal."
    )
    command = "echo " + "a-long-argument " * 10
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": [tool_call("b1", "bash", {"command": command})], "stopReason": "toolUse"},
            {
                "content": f"{sentence} {sentence}",
                "stopReason": "error",
                "errorMessage": f"Failed: {sentence}",
            },
        ],
    )
    options = ["--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "agentls", "run", "go", "--faux-script", str(script), *options],
        cwd=PROJECT_ROOT,
        env={**environment(), "COLUMNS": "80"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1, done.stderr
    stdout, stderr = done.stdout.splitlines(), done.stderr.splitlines()
    [tool] = [line for line in stdout if line.startswith("✗ bash echo a-long-argument")]
    assert tool.endswith(" · The bash call was rejected: no terminal to ask on; --allow bash allows it"), (
        done.stdout
    )  # one line, whole
    assert f"{sentence} {sentence}" in stdout, done.stdout
    assert f"agentls run: Failed: {sentence}" in stderr, done.stderr
    assert any(line.startswith("faux/faux-1 · ↑") and " · error · session " in line for line in stderr)
