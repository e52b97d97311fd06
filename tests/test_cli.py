"""The ``agentls`` command line, run as a subprocess like a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT


def agentls(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_demo_json_prints_pis_event_stream_with_parallel_tools() -> None:
    run = agentls("demo", "--json", "--tokens-per-second", "0")
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    kinds = [e["type"] for e in events if e["type"] != "message_update"]
    assert kinds[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert kinds[-1] == "agent_end"
    starts = [e["toolName"] for e in events if e["type"] == "tool_execution_start"]
    ends = {e["toolName"]: e for e in events if e["type"] == "tool_execution_end"}
    assert starts == ["calculate", "count_words"]
    assert ends["calculate"]["result"]["content"][0]["text"] == "6 * 7 = 42"
    assert ends["count_words"]["result"]["details"] == {"count": 9}
    assert any(e["type"] == "tool_execution_update" for e in events)
    deltas = [e["assistantMessageEvent"]["type"] for e in events if e["type"] == "message_update"]
    assert {"thinking_delta", "text_delta", "toolcall_delta"} <= set(deltas)
    final = events[-1]["messages"][-1]
    assert final["role"] == "assistant" and final["stopReason"] == "stop"


def test_demo_human_output_shows_the_run() -> None:
    run = agentls("demo", "--tokens-per-second", "0")
    assert run.returncode == 0, run.stderr
    assert "tool_execution_end calculate done 6 * 7 = 42" in run.stdout
    assert "agent_end 5 new messages" in run.stdout


def test_demo_with_a_script_file_and_a_provider_error(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"responses": [{"content": "partial", "stopReason": "error", "errorMessage": "boom"}]})
    )
    run = agentls("demo", "--json", "--script", str(script))
    assert run.returncode == 1
    assert "the run ended with an error: boom" in run.stderr


def test_demo_with_a_broken_script_explains_and_exits_2(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text("{not json")
    run = agentls("demo", "--script", str(script))
    assert run.returncode == 2
    assert "is not valid JSON" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("arguments", [[], ["serve", "--stdio"], ["--stdio"]])
def test_serves_on_stdio_and_exits_at_end_of_input(arguments: list[str]) -> None:
    """``--stdio``, which LSP launchers such as vscode-languageclient add, is accepted."""
    run = subprocess.run(
        [sys.executable, "-m", "agentls", *arguments],
        cwd=PROJECT_ROOT,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
