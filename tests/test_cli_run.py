"""``agentls run`` and ``agentls sessions`` as a user runs them: subprocesses, through the real server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROJECT_ROOT
from tests.server.conftest import write_faux_script

TIMEOUT = 30

TOOL_SCRIPT = [
    {
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "toolCall", "id": "c1", "name": "missing_one", "arguments": {"path": "a.txt"}},
        ],
        "stopReason": "toolUse",
    },
    {"content": "All done."},
]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTLS_")}
    env["COLUMNS"] = "250"  # rich's tables and lines stay whole
    return env


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentls", *args],
        cwd=PROJECT_ROOT,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def agentls(*args: str) -> subprocess.CompletedProcess[str]:
    return finish(start(*args))


def agentls_at_once(*commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Several independent commands, run side by side."""
    return [finish(p) for p in [start(*command) for command in commands]]


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


@dataclass
class Stored:
    """A data dir holding the session of one ``agentls run --json``."""

    data_dir: Path
    workspace: Path
    script: Path
    run: subprocess.CompletedProcess[str]
    session_id: str

    def options(self, data_dir: Path | None = None) -> list[str]:
        return ["--faux-script", str(self.script), "--data-dir", str(data_dir or self.data_dir)]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    root = tmp_path_factory.mktemp("stored")
    workspace = root / "workspace"
    workspace.mkdir()
    script = write_faux_script(root / "faux.json", TOOL_SCRIPT)
    data_dir = root / "data"
    run = agentls(
        "run",
        "Look at a.txt",
        "--json",
        "--cwd",
        str(workspace),
        "--faux-script",
        str(script),
        "--data-dir",
        str(data_dir),
    )
    assert run.returncode == 0, run.stderr
    session_id = json_lines(run.stdout)[-1]["params"]["sessionId"]
    return Stored(data_dir, workspace.resolve(), script, run, session_id)


def test_run_json_prints_every_notification(stored: Stored) -> None:
    lines = json_lines(stored.run.stdout)
    assert {line["method"] for line in lines} <= {"agent/event", "agent/queue", "agent/settled"}
    assert {line["params"]["sessionId"] for line in lines} == {stored.session_id}
    events = [line["params"] for line in lines if line["method"] == "agent/event"]
    assert [line["params"]["seq"] for line in lines] == list(range(1, len(lines) + 1))
    kinds = [e["event"]["type"] for e in events]
    assert kinds[:3] == ["agent_start", "turn_start", "message_start"] and kinds[-1] == "agent_end"
    assert kinds.count("tool_execution_start") == kinds.count("tool_execution_end") == 1
    end = next(e["event"] for e in events if e["event"]["type"] == "tool_execution_end")
    assert end["toolName"] == "missing_one" and end["isError"] is True
    updates = [e["event"] for e in events if e["event"]["type"] == "message_update"]
    assert updates and all(
        "partial" not in u["assistantMessageEvent"] and "message" not in u for u in updates
    )
    settled = lines[-1]
    assert settled["method"] == "agent/settled"
    assert settled["params"]["stopReason"] == "stop" and settled["params"]["runId"] == events[0]["runId"]
    assert stored.run.stderr == ""


def test_run_streams_the_text_and_shows_the_tool_calls(tmp_path: Path) -> None:
    script = write_faux_script(tmp_path / "faux.json", TOOL_SCRIPT)
    run = agentls(
        "run",
        "Look at a.txt",
        "--cwd",
        str(tmp_path),
        "--faux-script",
        str(script),
        "--data-dir",
        str(tmp_path / "d"),
    )
    assert run.returncode == 0, run.stderr
    # not a terminal: plain text, the answer as it streamed, one line per tool call, the footer on stderr
    assert (
        run.stdout
        == 'Let me look.\n\n✗ missing_one {"path":"a.txt"} · Tool missing_one not found\n\nAll done.\n'
    )
    footer, hint = run.stderr.strip().splitlines()
    session = session_of(tmp_path / "d")
    assert footer.startswith("faux/faux-1 · ↑") and footer.endswith(f" · session {session}")
    assert hint == f'go on with: agentls run --continue "..."  (or --session {session[:8]})'
    assert "\x1b" not in run.stdout + run.stderr


def test_run_exits_1_when_the_run_ends_in_an_error(tmp_path: Path) -> None:
    script = write_faux_script(
        tmp_path / "faux.json", [{"content": "partial", "stopReason": "error", "errorMessage": "boom"}]
    )
    text, as_json = agentls_at_once(
        (
            "run",
            "Hi",
            "--cwd",
            str(tmp_path),
            "--faux-script",
            str(script),
            "--data-dir",
            str(tmp_path / "a"),
        ),
        (
            "run",
            "Hi",
            "--json",
            "--cwd",
            str(tmp_path),
            "--faux-script",
            str(script),
            "--data-dir",
            str(tmp_path / "b"),
        ),
    )
    assert text.returncode == 1
    assert " · error · session " in text.stderr and "agentls run: boom" in text.stderr
    assert as_json.returncode == 1
    settled = json_lines(as_json.stdout)[-1]
    assert settled["method"] == "agent/settled"
    assert settled["params"]["stopReason"] == "error" and settled["params"]["errorMessage"] == "boom"


def test_run_with_session_continues_a_stored_session(stored: Stored, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(stored.data_dir, data_dir)
    run = agentls("run", "And now?", "--json", "--session", stored.session_id, *stored.options(data_dir))
    assert run.returncode == 0, run.stderr
    lines = json_lines(run.stdout)
    assert {line["params"]["sessionId"] for line in lines} == {stored.session_id}
    events = [line["params"]["event"] for line in lines if line["method"] == "agent/event"]
    first_user = next(e["message"] for e in events if e["type"] == "message_start")
    assert first_user["content"] == [{"type": "text", "text": "And now?"}]
    assert lines[-1]["params"]["stopReason"] == "stop"

    listing = agentls("sessions", "--json", "--data-dir", str(data_dir))
    assert listing.returncode == 0, listing.stderr
    [info] = json_lines(listing.stdout)
    assert info["sessionId"] == stored.session_id
    assert info["title"] == "Look at a.txt"
    assert info["messageCount"] == 8  # two runs of user, assistant, tool result, assistant
    assert info["loaded"] is False


def test_sessions_lists_the_stored_sessions(stored: Stored, tmp_path: Path) -> None:
    table, as_json, elsewhere, empty = agentls_at_once(
        ("sessions", *stored.options()),
        ("sessions", "--json", "--cwd", str(stored.workspace), *stored.options()),
        ("sessions", "--json", "--cwd", str(tmp_path), *stored.options()),
        ("sessions", "--json", "--data-dir", str(tmp_path / "nothing")),
    )
    assert table.returncode == 0, table.stderr
    assert (
        stored.session_id in table.stdout
        and "Look at a.txt" in table.stdout
        and "faux/faux-1" in table.stdout
    )
    assert as_json.returncode == 0, as_json.stderr
    [info] = json_lines(as_json.stdout)
    assert info["sessionId"] == stored.session_id and info["cwd"] == str(stored.workspace)
    assert info["messageCount"] == 4 and info["model"] == {"provider": "faux", "id": "faux-1"}
    assert elsewhere.returncode == 0 and elsewhere.stdout == ""
    assert empty.returncode == 0 and empty.stdout == ""


def test_run_with_a_bad_model_or_session_explains_and_fails(stored: Stored, tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    no_slash, unknown, no_session = agentls_at_once(
        ("run", "Hi", "--model", "faux", *stored.options(tmp_path / "data")),
        ("run", "Hi", "--model", "faux/faux-42", *stored.options(tmp_path / "data")),
        (
            "run",
            "Hi",
            "--session",
            "no-such-session",
            "--faux-script",
            str(stored.script),
            "--data-dir",
            data_dir,
        ),
    )
    assert no_slash.returncode == 2
    assert "--model takes PROVIDER/ID" in no_slash.stderr
    assert unknown.returncode == 2
    assert "Unknown model faux/faux-42" in unknown.stderr and "faux/faux-1" in unknown.stderr
    assert no_session.returncode == 2
    assert "no stored session no-such-session" in no_session.stderr
    for run in (no_slash, unknown, no_session):
        assert run.stdout == "" and "Traceback" not in run.stderr


def test_run_demo_reads_the_readme_with_the_real_read_tool(tmp_path: Path) -> None:
    """The README's main-job command, with its data kept in a temporary folder."""
    (tmp_path / "README.md").write_text("# A project\n\nIt does one thing well.\n", encoding="utf-8")
    data = tmp_path / "data"
    run = agentls("run", "--demo", "--cwd", str(tmp_path), "--data-dir", str(data), "What is this project?")
    assert run.returncode == 0, run.stderr
    assert "✓ read README.md · 3 lines\n" in run.stdout  # the file's 3 lines, read for real
    assert "scripted by the offline faux model" in run.stdout
    assert len(list((data / "sessions").glob("*.jsonl"))) == 1


def test_run_shows_the_servers_warnings_on_stderr(stored: Stored, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(stored.data_dir, data_dir)
    session_file = data_dir / "sessions" / f"{stored.session_id}.jsonl"
    with session_file.open("a", encoding="utf-8") as file:
        file.write('{"type": "message", "id": "cut", "parentId"')  # a line a crash cut short
    run = agentls("run", "Again", "--session", stored.session_id, *stored.options(data_dir))
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("agentls: ")]
    assert any(stored.session_id in line for line in warnings), run.stderr


def session_of(data_dir: Path) -> str:
    [file] = (data_dir / "sessions").glob("*.jsonl")
    return file.stem


def test_run_print_shows_only_the_answer_and_reads_piped_input(tmp_path: Path) -> None:
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {
                "content": [
                    {"type": "thinking", "thinking": "Hmm."},
                    {"type": "text", "text": "Looking."},
                    {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}},
                ],
                "stopReason": "toolUse",
            },
            {"content": "It looks **fine**.\n\n- one\n- two"},
        ],
    )
    common = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", "-p", "review this", *common],
        cwd=PROJECT_ROOT,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout, stderr = process.communicate("--- a/x\n+++ b/x\n", timeout=TIMEOUT)
    assert process.returncode == 0, stderr
    assert stdout == "It looks **fine**.\n\n- one\n- two\n"
    assert stderr == ""
    [session] = (tmp_path / "data" / "sessions").glob("*.jsonl")
    prompts = [
        json.loads(line)["message"]["content"]
        for line in session.read_text().splitlines()
        if '"role":"user"' in line.replace(" ", "")
    ]
    assert prompts == [[{"type": "text", "text": "review this\n\n--- a/x\n+++ b/x\n"}]]


def test_run_without_a_prompt_explains(tmp_path: Path) -> None:
    run = agentls("run", "--demo", "--data-dir", str(tmp_path))
    assert run.returncode == 2 and "give a prompt" in run.stderr and run.stdout == ""


def bash_script(path: Path, command: str) -> Path:
    call = {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": command}}
    return write_faux_script(path, [{"content": [call], "stopReason": "toolUse"}, {"content": "Ran it."}])


def test_run_allow_lets_a_tool_run_without_a_question(tmp_path: Path) -> None:
    script = bash_script(tmp_path / "faux.json", "echo made > made.txt")
    common = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    refused = agentls("run", "go", *common)  # no terminal: nobody to ask, so bash is rejected
    assert refused.returncode == 0, refused.stderr
    assert (
        "✗ bash echo made > made.txt · The bash call was rejected: no terminal to ask on; "
        "--allow bash allows it" in refused.stdout
    )
    assert not (tmp_path / "made.txt").exists()
    allowed = agentls("run", "go", "--allow", "bash", *common)
    assert allowed.returncode == 0, allowed.stderr
    assert (tmp_path / "made.txt").read_text() == "made\n"


def run_with_bash(script: Path, data_dir: Path, cwd: Path) -> subprocess.Popen[str]:
    """``agentls run go`` on a faux script, bash allowed."""
    return start(
        "run", "go", "--allow", "bash", "--faux-script", str(script), "--data-dir", str(data_dir),
        "--cwd", str(cwd),
    )  # fmt: skip


def test_run_runs_its_server_in_its_own_process(tmp_path: Path) -> None:
    """No `agentls serve` beside it: the spawner of bash's keeper (bash's parent) is the command's
    own child, and what the session did is stored once it has ended."""
    spawner = "$(ps -o ppid= -p $PPID | tr -d ' ')"  # ps pads a short pid
    command = f"echo parent=$(ps -o ppid= -p {spawner} | tr -d ' ') > parent.txt"
    script = bash_script(tmp_path / "faux.json", command)
    data_dir = tmp_path / "data"
    process = run_with_bash(script, data_dir, tmp_path)
    done = finish(process)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "parent.txt").read_text().split() == [f"parent={process.pid}"]
    listed = agentls("sessions", "--json", "--data-dir", str(data_dir))
    assert [info["messageCount"] for info in json_lines(listed.stdout)] == [4]


def test_run_killed_during_a_tool_stops_it_saves_the_run_and_dies_of_the_signal(tmp_path: Path) -> None:
    """SIGTERM: the run aborted (its tool stopped) and saved before the command dies of the signal,
    saying nothing (its server process used to do that after the command had died)."""
    import select
    import signal

    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    script = bash_script(tmp_path / "faux.json", f"echo started > {fifo}; sleep 30")
    data_dir = tmp_path / "data"
    reading = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        process = run_with_bash(script, data_dir, tmp_path)
        ready, _, _ = select.select([reading], [], [], TIMEOUT)
        assert ready and os.read(reading, 100) == b"started\n"
    finally:
        os.close(reading)
    process.send_signal(signal.SIGTERM)
    done = finish(process)
    assert done.returncode == -signal.SIGTERM, done.stderr
    assert done.stderr == ""
    [stored] = list(data_dir.rglob("*.jsonl"))
    messages = [entry["message"] for entry in json_lines(stored.read_text()) if entry["type"] == "message"]
    assert [(m["role"], m.get("stopReason")) for m in messages] == [
        ("user", None),
        ("assistant", "toolUse"),
        ("toolResult", None),
        ("assistant", "aborted"),
    ]
    assert "Command aborted" in messages[2]["content"][0]["text"]


def answer_on_a_terminal(args: list[str], question: bytes, answer: bytes) -> tuple[int, str, bytes]:
    """``agentls ARGS`` with a terminal on stdin and stderr (stdout piped): once ``question`` shows
    there, ``answer`` is typed. Its exit code, stdout, and what the terminal showed up to the question."""
    import pty
    import select

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", *args],
        cwd=PROJECT_ROOT,
        env=environment(),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
    )
    os.close(terminal)
    seen = b""
    try:
        while question not in seen:
            ready, _, _ = select.select([controller], [], [], TIMEOUT)
            assert ready, f"no question within {TIMEOUT} s; terminal showed: {seen!r}"
            seen += os.read(controller, 4096)
        os.write(controller, answer)
        stdout, _ = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    return process.returncode, stdout, seen


def test_run_on_a_terminal_asks_before_running_bash(tmp_path: Path) -> None:
    script = bash_script(tmp_path / "faux.json", "echo asked > asked.txt")
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    code, stdout, seen = answer_on_a_terminal(["run", "go", *options], b"[r]eject?", b"o\n")
    assert b"Run the command: echo asked > asked.txt" in seen
    assert code == 0
    assert "Ran it." in stdout
    assert (tmp_path / "asked.txt").read_text() == "asked\n"


def test_sessions_are_found_by_a_unique_prefix_or_as_the_folders_latest(
    stored: Stored, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(stored.data_dir, data_dir)
    options = stored.options(data_dir)
    prefix, latest, table = agentls_at_once(
        ("run", "-p", "Again", "--session", stored.session_id[:8], *options),
        ("run", "-p", "Once more", "--continue", "--cwd", str(stored.workspace), *options),
        ("sessions", *options),
    )
    assert prefix.returncode == 0 and latest.returncode == 0, (prefix.stderr, latest.stderr)
    assert "All done." in prefix.stdout and "All done." in latest.stdout
    assert stored.session_id in table.stdout  # whole, whatever the width
    nothing = agentls("run", "-p", "x", "--continue", "--cwd", str(tmp_path), *options)
    assert (
        nothing.returncode == 2 and f"no stored session in {tmp_path.resolve()} to continue" in nothing.stderr
    )
    empty = agentls("sessions", "--data-dir", str(tmp_path / "nothing"))
    assert empty.returncode == 0 and empty.stdout == "No stored sessions.\n"


def test_an_unknown_allow_is_refused_and_a_question_without_a_terminal_says_how_to_allow(
    tmp_path: Path,
) -> None:
    script = bash_script(tmp_path / "faux.json", "echo hi")
    typo = agentls("run", "x", "--allow", "bsah", "--faux-script", str(script), "--data-dir", str(tmp_path))
    assert typo.returncode == 2 and "--allow bsah: no such tool" in typo.stderr
    asked = agentls("run", "x", "--faux-script", str(script), "--data-dir", str(tmp_path / "d"))
    assert "bash needs permission and there is no terminal to ask on" in asked.stderr
    assert "pass --allow bash" in asked.stderr


def test_unquoted_words_are_one_prompt_models_are_listed_and_a_closed_pipe_ends_quietly(
    tmp_path: Path,
) -> None:
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Fixed."}])
    options = ("--faux-script", str(script), "--data-dir", str(tmp_path / "data"))
    words = agentls("run", "-p", "fix", "the", "bug", *options)
    assert words.returncode == 0 and words.stdout == "Fixed.\n"
    models = agentls("models", *options)
    assert models.returncode == 0 and "faux/faux-1" in models.stdout
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", "--json", "x", *options],
        cwd=PROJECT_ROOT,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdout.readline()  # one line, then the reader leaves
    process.stdout.close()
    _, stderr = process.communicate(timeout=TIMEOUT)
    assert b"Traceback" not in stderr and b"BrokenPipeError" not in stderr
    no_model = agentls("run", "x", "--data-dir", str(tmp_path / "empty"))
    assert no_model.returncode == 2 and "From the command line: --demo, --faux-script FILE" in no_model.stderr


# --- MCP servers: --mcp-config, --allow 'mcp__SERVER__*', status lines ------------------------


def mcp_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def quirky(*args: str) -> dict[str, Any]:
    """The quirky test server (tests/mcp/servers/quirky.py) as a configuration entry."""
    from tests.mcp.conftest import quirky_command

    command = quirky_command(*args)
    return {"command": command[0], "args": command[1:]}


def echo_script(path: Path) -> Path:
    call = {
        "type": "toolCall",
        "id": "m1",
        "name": "mcp__quirky__echo",
        "arguments": {"text": "hi from quirky"},
    }
    return write_faux_script(path, [{"content": [call], "stopReason": "toolUse"}, {"content": "Echoed."}])


def test_run_uses_the_mcp_servers_of_mcp_config_and_allow_takes_a_whole_server(tmp_path: Path) -> None:
    config = mcp_config(
        tmp_path / "servers.json",
        {"quirky": quirky(), "broken": quirky("--fail-start"), "typo": {"args": []}},
    )
    script = echo_script(tmp_path / "faux.json")
    data = tmp_path / "data"
    common = ["--faux-script", str(script), "--data-dir", str(data), "--cwd", str(tmp_path)]
    allowed = agentls("run", "go", "--mcp-config", str(config), "--allow", "mcp__quirky__*", *common)
    assert allowed.returncode == 0, allowed.stderr
    # run waits for the servers to start, so the first turn has the server's tools
    assert '✓ mcp__quirky__echo {"text":"hi from quirky"} · 1 line\n  │ hi from quirky\n' in allowed.stdout
    assert "Echoed." in allowed.stdout
    lines = allowed.stderr.splitlines()
    broken = [line for line in lines if line.startswith("! MCP server broken failed: ")]
    assert len(broken) == 1, allowed.stderr
    assert "(its stderr: quirky: failing at start on purpose)" in broken[0]
    assert broken[0].endswith(f"· log: {data.resolve() / 'mcp-logs' / 'broken.log'}")
    problems = [line for line in lines if line.startswith("! MCP configuration: ")]
    assert len(problems) == 1 and "typo" in problems[0], allowed.stderr
    assert not [line for line in lines if "MCP server broken failed" in line and not line.startswith("!")]

    refused = agentls("run", "go", "--mcp-config", str(config), *common)  # no terminal to ask on
    assert refused.returncode == 0, refused.stderr
    assert "✗ mcp__quirky__echo" in refused.stdout
    assert "· The mcp__quirky__echo call was rejected: no terminal to ask on; --allow" in refused.stdout
    assert "pass --allow mcp__quirky__echo to run it, or --allow 'mcp__quirky__*'" in refused.stderr


def test_a_missing_or_broken_mcp_config_is_an_error_before_starting(tmp_path: Path) -> None:
    not_json = tmp_path / "not.json"
    not_json.write_text("{mcpServers", encoding="utf-8")
    wrong = mcp_config(tmp_path / "wrong.json", {"x": 3})
    for file, said in [
        (tmp_path / "missing.json", "cannot read it (No such file or directory)"),
        (not_json, "not JSON (line 1, column 2"),
        (wrong, "mcpServers.x must be an object, not int"),
    ]:
        for command in ("run", "chat"):
            done = agentls(command, "--mcp-config", str(file), *(["x"] if command == "run" else []))
            assert done.returncode == 2, done.stderr
            assert done.stderr.startswith(f"agentls {command}: --mcp-config {file}: {said}"), done.stderr
    typo = agentls("run", "x", "--allow", "mcp__quirky", "--data-dir", str(tmp_path / "d"))
    assert typo.returncode == 2 and "mcp__SERVER__* for all of them" in typo.stderr


def test_a_project_mcp_json_without_a_terminal_says_it_needs_trust(tmp_path: Path) -> None:
    mcp_config(tmp_path / ".mcp.json", {"quirky": quirky()})
    script = echo_script(tmp_path / "faux.json")
    run = agentls(
        "run", "go", "--faux-script", str(script), "--data-dir", str(tmp_path / "d"), "--cwd", str(tmp_path)
    )
    assert run.returncode == 0, run.stderr
    assert "the MCP servers of" in run.stderr and "needs your trust and there is no terminal" in run.stderr
    assert "project files" not in run.stderr  # the folder has none
    assert "! MCP server quirky (.mcp.json) is not started: it waits for your trust" in run.stderr


def test_project_files_without_a_terminal_are_left_out_unless_approved(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Project rules.\n")
    skill = tmp_path / ".agentls" / "skills" / "hello"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: hello\ndescription: Says hello\n---\nSKILL BODY MARKER\n")
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Done."}] * 3)

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        options = ("--faux-script", str(script), "--data-dir", str(tmp_path / "d"), "--cwd", str(tmp_path))
        return agentls("run", "--json", *flags, *options, "/skill:hello go")

    def user_text(done: subprocess.CompletedProcess[str]) -> str:
        events = [n["params"]["event"] for n in json_lines(done.stdout) if n.get("method") == "agent/event"]
        ends = [e["message"] for e in events if e["type"] == "message_end"]
        return json.dumps([message for message in ends if message["role"] == "user"])

    unasked, approved, declined = run(), run("--approve"), run("--no-approve")
    for done in (unasked, approved, declined):
        assert done.returncode == 0, done.stderr
    assert "the project files of" in unasked.stderr and "pass --approve to load them" in unasked.stderr
    assert "MCP servers" not in unasked.stderr  # the folder has none
    assert "SKILL BODY MARKER" not in user_text(unasked)
    assert "SKILL BODY MARKER" in user_text(approved) and "trust" not in approved.stderr
    assert "SKILL BODY MARKER" not in user_text(declined) and "trust" not in declined.stderr


def test_run_on_a_terminal_asks_to_trust_a_project_mcp_server_and_remembers_it(tmp_path: Path) -> None:
    mcp_config(tmp_path / ".mcp.json", {"quirky": quirky()})
    script = echo_script(tmp_path / "faux.json")
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    args = ["run", "-p", "go", "--allow", "mcp__quirky__*", *options]
    code, _, seen = answer_on_a_terminal(args, b"[r]eject? ", b"t\n")  # the trust question
    assert b"Start the MCP servers of " in seen and b"[t]rust (in this folder), or [r]eject? " in seen
    assert code == 0
    again = agentls("run", "go", "--allow", "mcp__quirky__*", *options)  # trusted: no question, it starts
    assert again.returncode == 0, again.stderr
    assert "│ hi from quirky" in again.stdout and "trust" not in again.stderr, again.stderr


def test_untrusted_text_shows_its_control_characters_off_a_terminal_too(tmp_path: Path) -> None:
    """A command, the model's text and a session's title, with escapes, as ``agentls run`` and
    ``agentls sessions`` print them into a pipe: written out, never raw."""
    command = "touch PWNED #\r\x1b[2K"
    call = {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": command}}
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {"content": [{"type": "text", "text": "Red \x1b[31mtext\u202e"}, call], "stopReason": "toolUse"},
            {"content": "Done.\x1b]0;title\x07"},
        ],
    )
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    run = agentls("run", "go \x1b[2J\x9b1m", *options)
    assert run.returncode == 0, run.stderr
    assert "✗ bash touch PWNED #\\r\\x1b[2K · The bash call was rejected: no terminal to ask on" in run.stdout
    assert "Red \\x1b[31mtext\\u202e" in run.stdout and "Done.\\x1b]0;title\\x07" in run.stdout
    sessions = agentls("sessions", *options[2:4])
    assert "go \\x1b[2J\\x9b1m" in sessions.stdout
    for output in (run.stdout, run.stderr, sessions.stdout):
        assert not any(char in output for char in "\r\x1b\x07\x9b\u202e")
    assert not (tmp_path / "PWNED").exists()


def test_models_and_sessions_into_a_pipe_are_tab_separated_whole_values(tmp_path: Path) -> None:
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Hi."}])
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data")]
    title = "a prompt long enough that a table would cut it " * 4
    assert agentls("run", title, *options, "--cwd", str(tmp_path)).returncode == 0
    [stored] = [json.loads(line) for line in agentls("sessions", "--json", *options).stdout.splitlines()]
    sessions = agentls("sessions", *options)
    assert sessions.returncode == 0
    header, row = [line.split("\t") for line in sessions.stdout.splitlines()]
    assert header == ["session", "updated", "msgs", "model", "cwd", "title"]
    assert row[0] == stored["sessionId"] and row[2] == "2" and row[3] == "faux/faux-1"
    assert row[4] == str(tmp_path) and row[5] == stored["title"]
    models = agentls("models", *options)
    assert [line.split("\t") for line in models.stdout.splitlines()] == [
        ["model", "name", "context", "max output", "input"],
        ["faux/faux-1", "faux-1", "128,000", "16,384", "text, image"],
    ]


def test_a_missing_faux_script_says_so_and_points_at_the_flag_not_at_every_option(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent.json"
    done = agentls("run", "hi", "--faux-script", str(missing), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2
    assert f"cannot read faux script {missing}: No such file or directory" in done.stderr
    assert "Check the file given to --faux-script" in done.stderr
    assert "--demo, --faux-script FILE" not in done.stderr
