"""``agentls.terminal_text``: untrusted text written out for a terminal, and the transcript that uses it."""

from __future__ import annotations

import io
import json
import re

import pytest
from agentls.cli.printer import EventPrinter, Transcript
from agentls.terminal_text import json_line, visible, visible_text
from rich.console import Console

SPOOF = "touch PWNED #\r\x1b[2K\x1b[1A\u202eRun the command: ls -la"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\rb", "a\\rb"),
        ("\x1b[2K", "\\x1b[2K"),
        ("\x00\x07\x08\x0b\x0c\x7f", "\\x00\\x07\\x08\\x0b\\x0c\\x7f"),
        ("\x85\x9b", "\\x85\\x9b"),  # C1: NEL, CSI
        ("\u202a\u202e\u2066\u2069\u061c", "\\u202a\\u202e\\u2066\\u2069\\u061c"),  # bidi
        ("\u200b\u200f\u2060\ufeff\u2028", "\\u200b\\u200f\\u2060\\ufeff\\u2028"),  # invisible
        ("tab\tand\nnewline, é ü ✓ 日本 \\r", "tab\tand\nnewline, é ü ✓ 日本 \\r"),  # kept as they are
    ],
)
def test_hidden_characters_are_written_out(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_a_question_writes_out_newlines_and_tabs_when_asked() -> None:
    assert visible("ls\nrm -rf ~\t#", newlines=False, tabs=False) == "ls\\nrm -rf ~\\t#"
    text = visible_text("a\x1bb", "bold")
    assert text.plain == "a\\x1bb" and str(text.style) == "bold"
    assert [(span.start, span.end, span.style) for span in text.spans] == [(1, 5, "dim")]


def test_json_stays_the_same_json_without_hidden_characters() -> None:
    data = {"text": SPOOF + "\x9b\x7f"}
    line = json_line(json.dumps(data, ensure_ascii=False))
    assert json.loads(line) == data
    assert not any(char in line for char in "\r\x1b\u202e\x9b\x7f")


def terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, color_system="truecolor", width=200, highlight=False), out


def update(kind: str, **fields: object) -> dict[str, object]:
    return {"type": "message_update", "assistantMessageEvent": {"type": kind, **fields}}


def run_events(text: str) -> list[dict[str, object]]:
    args = {"command": SPOOF}
    result = {"content": [{"type": "text", "text": f"out {text}"}]}
    return [
        {"type": "agent_start"},
        {"type": "message_start", "message": {"role": "user", "content": text}},
        update("thinking_start"),
        update("thinking_delta", delta=f"think {text}"),
        update("thinking_end"),
        update("text_start"),
        update("text_delta", delta=f"Here **{text}**\n\n`{text}`\n\n"),
        update("text_end"),
        {"type": "tool_execution_start", "toolCallId": "b", "toolName": "bash", "args": args},
        {
            "type": "tool_execution_end",
            "toolCallId": "b",
            "toolName": "bash",
            "isError": False,
            "result": result,
        },
        {
            "type": "message_end",
            "message": {"role": "assistant", "stopReason": "error", "errorMessage": text},
        },
        {"type": "agent_end", "messages": []},
    ]


@pytest.mark.parametrize("live", [True, False])
def test_the_transcript_on_a_terminal_sends_only_its_own_escape_sequences(live: bool) -> None:
    console, out = terminal()
    transcript = Transcript(console, live=live, show_user=True)
    for event in run_events(SPOOF):
        transcript(event)
    transcript.bash_output(f"{SPOOF}\n")
    transcript.line(SPOOF)
    transcript.close()
    shown = re.sub("\x1b\\[[0-9;]*m", "", out.getvalue())  # rich's own styles
    # (and rich's cursor moves, which redraw the live part: at the starts of lines, not after a "#")
    assert "#\r" not in shown and "#\x1b" not in shown and "\u202e" not in shown
    # the user's prompt, thinking, text, code, tool row, its output, the error, the user's command, a line
    assert shown.count("touch PWNED #") == shown.count("\\r") >= 9  # (live: some drawn more than once)


def test_the_event_printer_writes_out_what_it_quotes() -> None:
    console, out = terminal()
    printer = EventPrinter(console)
    for event in run_events(SPOOF):
        printer(event)
    shown = out.getvalue()
    assert "\x1b[2K" not in shown and "\x1b[1A" not in shown and "\u202e" not in shown
    assert "\\x1b[2K" in shown
