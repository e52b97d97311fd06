"""The documentation's Python example runs as written; CI runs the README's test command."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import PROJECT_ROOT


def test_the_python_example_runs() -> None:
    readme = (PROJECT_ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    (example,) = [block for block in blocks if "from agentls.agent import" in block]
    run = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "agent_start" and "tool_execution_end" in lines
    assert lines[-1] == "['user', 'assistant', 'toolResult', 'assistant']"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    ci = (PROJECT_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line for line in readme.splitlines() if "pytest" in line and "python3 -m venv" in line)
    assert command in ci
