"""``agentls run --sandbox`` and ``--max-turns`` / ``--max-cost`` as a user runs them: subprocesses,
through the real server, with no terminal to answer the questions."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.conftest import write_faux_script
from tests.test_cli_run import agentls, answer_on_a_terminal, bash_script


def test_run_sandbox_keeps_bash_inside_the_folder_and_says_what_it_denied(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = bash_script(tmp_path / "faux.json", "echo in > in.txt && echo out > ../out.txt")
    common = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(workspace)]
    done = agentls("run", "go", "--allow", "bash", "--sandbox", "workspace-write", *common)
    assert done.returncode == 0, done.stderr
    assert (workspace / "in.txt").read_text() == "in\n" and not (tmp_path / "out.txt").exists()
    assert "The sandbox (workspace-write) may have denied this" in done.stdout
    assert "the sandbox denied a bash command and there is no terminal to ask on" in done.stderr


def test_run_max_turns_stops_the_run_and_says_so(tmp_path: Path) -> None:
    calls = [
        {
            "content": [{"type": "toolCall", "id": f"t{n}", "name": "ls", "arguments": {}}],
            "stopReason": "toolUse",
        }
        for n in range(5)
    ]
    script = write_faux_script(tmp_path / "faux.json", [*calls, {"content": "done"}])
    common = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    done = agentls("run", "go", "--max-turns", "2", "--json", *common)
    assert done.returncode == 1
    assert "the run reached its budget (maxTurns: 2 of 2) and stopped" in done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    turns = [n for n in lines if n["method"] == "agent/event" and n["params"]["event"]["type"] == "turn_end"]
    [settled] = [n["params"] for n in lines if n["method"] == "agent/settled"]
    assert len(turns) == 2
    assert settled["budget"] == {"kind": "maxTurns", "scope": "run", "limit": 2, "used": 2}


def test_bad_sandbox_and_budget_flags_are_refused(tmp_path: Path) -> None:
    for flags, said in (
        (["--sandbox", "sometimes"], "--sandbox: invalid choice: 'sometimes'"),
        (["--max-cost", "-1"], "--max-cost: expected a positive number, not '-1'"),
        (["--max-turns", "0"], "--max-turns: expected a positive whole number, not '0'"),
    ):
        done = agentls("run", "go", "--cwd", str(tmp_path), *flags)
        assert done.returncode == 2 and said in done.stderr, done.stderr


def test_on_a_terminal_a_denied_command_can_run_once_outside_and_a_budget_can_be_raised(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = bash_script(tmp_path / "faux.json", "echo out > ../out.txt")
    common = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(workspace)]
    args = ["run", "go", "--allow", "bash", "--sandbox", "workspace-write", *common]
    code, _, seen = answer_on_a_terminal(args, b"[r]eject?", b"o")
    assert b"The sandbox denied the command: echo out > ../out.txt" in seen
    assert b"run [o]nce outside the sandbox, or [r]eject?" in seen
    assert code == 0 and (tmp_path / "out.txt").read_text() == "out\n"

    calls = [
        {
            "content": [{"type": "toolCall", "id": f"t{n}", "name": "ls", "arguments": {}}],
            "stopReason": "toolUse",
        }
        for n in range(3)
    ]
    script = write_faux_script(tmp_path / "turns.json", [*calls, {"content": "All done."}])
    common = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(workspace)]
    code, stdout, seen = answer_on_a_terminal(["run", "go", "--max-turns", "2", *common], b"[r]eject?", b"c")
    assert b"[c]ontinue (the limit raised to 4 turns), or [r]eject?" in seen
    assert code == 0 and "All done." in stdout  # 4 turns in all: within the raised limit
