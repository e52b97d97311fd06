"""What `agentls run` and `chat` ask, in a real terminal (tmux): one key answers, the question
comes where it is read, and it shows what it is about."""

from __future__ import annotations

import json
from pathlib import Path

from tests.server.conftest import tool_call, write_faux_script
from tests.terminal.conftest import Pane
from tests.terminal.test_terminal import workspace


def test_one_key_answers_runs_question_and_other_keys_are_ignored(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    script = write_faux_script(
        tmp_path / "faux.json",
        [
            {
                "content": [tool_call("b1", "bash", {"command": "echo one > one.txt"})],
                "stopReason": "toolUse",
            },
            {
                "content": [tool_call("b2", "bash", {"command": "echo two > two.txt"})],
                "stopReason": "toolUse",
            },
            {"content": "Both asked."},
        ],
    )
    pane.start(
        ["run", "make them", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder
    )
    pane.wait_for("echo one > one.txt\nallow [o]nce, [a]lways (in this folder), or [r]eject?")
    pane.keys("x")  # no answer: the question waits
    pane.keys("o")  # no Enter
    screen = pane.wait_for("echo two > two.txt\nallow")
    assert "or [r]eject? allowed once" in screen
    pane.keys("n")
    screen = pane.wait_for("[exited 0]")
    assert "or [r]eject? rejected" in screen and "Both asked." in screen
    assert (folder / "one.txt").read_text() == "one\n" and not (folder / "two.txt").exists()


def test_chats_trust_question_and_mcp_notice_come_after_the_banner(pane: Pane, tmp_path: Path) -> None:
    from tests.mcp.conftest import quirky_command

    folder = workspace(tmp_path)
    command = quirky_command()
    servers = {"quirky": {"command": command[0], "args": command[1:]}}
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Hi."}])
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("trust? [t]rust [r]eject")
    screen = pane.wait_for("? Start the MCP servers of")
    lines = screen.splitlines()
    banner = next(i for i, line in enumerate(lines) if line.startswith("agentls chat · faux/faux-1"))
    question = next(i for i, line in enumerate(lines) if line.startswith("? Start the MCP servers of"))
    notice = next(i for i, line in enumerate(lines) if "MCP server quirky (.mcp.json) is not started" in line)
    assert banner < question and banner < notice, screen
    pane.keys("r")
    pane.wait_for("not trusted: the servers stay stopped")
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def mcp_echo(tmp_path: Path) -> tuple[Path, Path]:
    """An MCP server's configuration (``--mcp-config``) and a script calling its echo with a
    control character and a bidi override in the text."""
    from tests.mcp.conftest import quirky_command

    command = quirky_command()
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"quirky": {"command": command[0], "args": command[1:]}}}))
    call = tool_call("m1", "mcp__quirky__echo", {"text": "hi\u202e from\x07 quirky", "times": 2})
    script = write_faux_script(
        tmp_path / "faux.json", [{"content": [call], "stopReason": "toolUse"}, {"content": "Echoed."}]
    )
    return config, script


ECHO_ARGUMENTS = '{"text":"hi\\u202e from\\u0007 quirky","times":2}'
"""The call's arguments as the question shows them: compact JSON, its hidden characters written out."""


def mcp_echo_options(tmp_path: Path) -> list[str]:
    config, script = mcp_echo(tmp_path)
    return ["--mcp-config", str(config), "--faux-script", str(script), "--data-dir", str(tmp_path / "data")]


def test_runs_question_for_an_mcp_tool_shows_its_arguments(pane: Pane, tmp_path: Path) -> None:
    pane.start(["run", "echo it", *mcp_echo_options(tmp_path)], workspace(tmp_path))
    screen = pane.wait_for("or [r]eject?")
    assert f"agentls: Allow the tool echo of the MCP server quirky?\n  {ECHO_ARGUMENTS}\nallow" in screen
    pane.keys("r")
    pane.wait_for("[exited 0]")


def test_chats_question_for_an_mcp_tool_shows_its_arguments(pane: Pane, tmp_path: Path) -> None:
    pane.start(["chat", *mcp_echo_options(tmp_path)], workspace(tmp_path))
    pane.wait_for("✓ MCP server quirky is ready")
    pane.type("echo it")
    pane.wait_for("allow? [o]nce")
    pane.wait_for(f"? Allow the tool echo of the MCP server quirky?\n  {ECHO_ARGUMENTS}")
    pane.keys("r")
    pane.wait_for("faux/faux-1 · ↑")
    pane.keys("C-d")
    pane.wait_for("[exited 0]")


def footer_context(line: str) -> str:
    """``84.3k`` of a footer's ``· context 84.3k`` (or of ``compaction (manual) context 84.3k → …``)."""
    return line.split("context ", 1)[1].split()[0]


def last_footer(screen: str) -> str:
    """The last footer line (``faux/faux-1 · ↑…``) on the screen, or "" when none is."""
    return next((line for line in reversed(screen.splitlines()) if "faux/faux-1 · ↑" in line), "")


def test_chats_compact_says_the_footers_context_size_and_a_failure_once(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    long_answer = "word " * 20_000  # 25 000 tokens: the first exchange is summarised, the second kept
    summary = "## Goal\nTwo long answers."
    script = write_faux_script(
        tmp_path / "faux.json",
        [{"content": long_answer}, {"content": long_answer}, {"content": summary}, {"content": summary}],
    )
    pane.start(["chat", "--faux-script", str(script), "--data-dir", str(tmp_path / "data")], folder)
    pane.wait_for("/help for the keys")
    pane.type("/compact")
    screen = pane.wait_for("Nothing to compact")
    assert screen.count("Nothing to compact") == 1, screen
    pane.type("first")
    first_footer = last_footer(pane.wait_for("faux/faux-1 · ↑"))
    pane.type("second")
    # the second answer scrolls the first footer (and "› second") out of the captured scrollback
    footer = last_footer(
        pane.wait_until(
            lambda screen: last_footer(screen) not in ("", first_footer), "the second answer's footer"
        )
    )
    pane.type("/compact")
    compaction = next(
        line
        for line in pane.wait_for("compaction (manual) context").splitlines()
        if "compaction (manual)" in line
    )
    assert footer_context(compaction) == footer_context(footer), (compaction, footer)
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
