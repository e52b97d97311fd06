"""``Transcript``: how ``agentls run`` and ``agentls chat`` show a run, off and on a terminal."""

from __future__ import annotations

import io
from typing import Any

import pytest
from agentls.cli.printer import Transcript, result_summary, split_blocks
from agentls.cli.run import final_text
from agentls.tools.catalogue import call_summary
from rich.console import Console

ASSISTANT = {"role": "assistant", "provider": "faux", "model": "faux-1"}


def update(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": "message_update", "assistantMessageEvent": {"type": kind, **fields}}


def usage(tokens_in: int, tokens_out: int, cost: float) -> dict[str, Any]:
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "cost": {"total": cost},
    }


RUN = [
    {"type": "agent_start"},
    {"type": "message_start", "message": {"role": "user", "content": "Fix calc.py"}},
    update("thinking_start", contentIndex=0),
    update("thinking_delta", contentIndex=0, delta="The bug is "),
    update("thinking_delta", contentIndex=0, delta="in add."),
    update("thinking_end", contentIndex=0),
    update("text_start", contentIndex=1),
    update("text_delta", contentIndex=1, delta="I'll **fix** it.\n\n- first"),
    update("text_delta", contentIndex=1, delta="\n- second"),
    update("text_end", contentIndex=1),
    {
        "type": "message_end",
        "message": {**ASSISTANT, "stopReason": "toolUse", "usage": usage(1200, 30, 0.01)},
    },
    {"type": "tool_execution_start", "toolCallId": "r", "toolName": "read", "args": {"path": "calc.py"}},
    {"type": "tool_execution_start", "toolCallId": "e", "toolName": "edit", "args": {"path": "calc.py"}},
    {"type": "tool_execution_start", "toolCallId": "b", "toolName": "bash", "args": {"command": "pytest -q"}},
    {
        "type": "tool_execution_update",
        "toolCallId": "b",
        "toolName": "bash",
        "partialResult": {"content": [{"type": "text", "text": "..."}]},
    },
    {
        "type": "tool_execution_end",
        "toolCallId": "r",
        "toolName": "read",
        "isError": False,
        "result": {"content": [{"type": "text", "text": "x"}], "details": {"startLine": 1, "endLine": 12}},
    },
    {
        "type": "tool_execution_end",
        "toolCallId": "e",
        "toolName": "edit",
        "isError": False,
        "result": {
            "content": [{"type": "text", "text": "Edited"}],
            "details": {
                "diff": "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-    return a - b\n+    return a + b\n"
            },
        },
    },
    {
        "type": "tool_execution_end",
        "toolCallId": "b",
        "toolName": "bash",
        "isError": True,
        "result": {"content": [{"type": "text", "text": "F.\n1 failed\n\nExit code: 1"}]},
    },
    update("text_start", contentIndex=0),
    update("text_delta", contentIndex=0, delta="Done"),
    update("text_end", contentIndex=0),
    {"type": "message_end", "message": {**ASSISTANT, "stopReason": "stop", "usage": usage(1300, 20, 0.02)}},
    {"type": "agent_end", "messages": []},
]


def render(*, terminal: bool, show_user: bool = False) -> tuple[str, Transcript]:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=terminal, color_system=None, highlight=False)
    transcript = Transcript(console, live=False, show_user=show_user)
    for event in RUN:
        transcript(event)
    return out.getvalue(), transcript


def test_off_a_terminal_the_run_is_plain_text_as_it_streamed() -> None:
    out, transcript = render(terminal=False)
    assert out == (
        "✻ The bug is in add.\n"
        "\n"
        "I'll **fix** it.\n\n- first\n- second\n"
        "\n"
        "✓ read calc.py · 12 lines\n"
        "✓ edit calc.py · +1 −1\n"
        "  -    return a - b\n"
        "  +    return a + b\n"
        "✗ bash pytest -q · Exit code: 1\n"
        "  │ F.\n"
        "  │ 1 failed\n"
        "\n"
        "Done\n"
    )
    assert transcript.usage.line(2.5) == "faux/faux-1 · ↑2.5k ↓50 · $0.0300 · 2.5s · context 1.3k"


def test_on_a_terminal_the_markdown_is_rendered_and_the_user_shown() -> None:
    out, _ = render(terminal=True, show_user=True)
    assert "› Fix calc.py" in out
    assert "I'll fix it." in out and "**" not in out  # rendered, not raw
    assert "• first" in out and "• second" in out
    assert "✓ read calc.py · 12 lines" in out and "✗ bash pytest -q · Exit code: 1" in out


def test_errors_show_in_red_when_asked() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system="standard")
    transcript = Transcript(console, live=False)
    message = {**ASSISTANT, "stopReason": "error", "errorMessage": "boom"}
    transcript({"type": "message_end", "message": message})
    assert "\x1b[1;31m✗ boom" in out.getvalue()


@pytest.mark.parametrize(
    ("text", "blocks", "rest"),
    [
        ("one\n\ntwo", ["one"], "two"),
        ("```\na\n\nb\n```\n\nafter", ["```\na\n\nb\n```"], "after"),
        ("para\nstill", [], "para\nstill"),
        ("\n\n\nx", [], "x"),
    ],
)
def test_streamed_markdown_is_cut_at_blank_lines_outside_fences(
    text: str, blocks: list[str], rest: str
) -> None:
    assert split_blocks(text) == (blocks, rest)


def test_tool_summaries() -> None:
    assert call_summary("bash", {"command": "make\nmake test"}) == "make…"
    assert call_summary("grep", {"pattern": "TODO", "path": "src"}) == "'TODO' src"
    assert call_summary("mcp_thing", {"a": 1}) == '{"a":1}'
    assert result_summary("ls", {}, {"details": {"entries": 3}}) == "3 entries"
    assert result_summary("grep", {}, {"details": {"matches": 1, "files": 1}}) == "1 match in 1 file"
    assert (
        result_summary("write", {"content": "a\nb\n"}, {"details": {"created": True}}) == "created · 2 lines"
    )
    assert result_summary("bash", {}, {"content": [{"type": "text", "text": "(no output)"}]}) == "no output"


def test_final_text_is_the_last_answer() -> None:
    messages = [
        {"role": "assistant", "content": [{"type": "text", "text": "first"}]},
        {"role": "toolResult", "content": []},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "last"}],
        },
    ]
    assert final_text(messages) == "last" and final_text([]) == ""


@pytest.mark.parametrize("terminal", [False, True])
def test_a_note_during_a_streaming_paragraph_never_splits_it(terminal: bool) -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=terminal, color_system=None, highlight=False)
    transcript = Transcript(console, live=False)
    transcript({"type": "agent_start"})
    transcript(update("text_start", contentIndex=0))
    transcript(update("text_delta", contentIndex=0, delta="Every cal"))
    transcript.line("queued (follow-up): then run the linter")
    transcript(update("text_delta", contentIndex=0, delta="ler that streams"))
    transcript(update("text_end", contentIndex=0))
    lines = [line.strip() for line in out.getvalue().splitlines() if line.strip()]
    assert "Every caller that streams" in lines
    # off a terminal the text was already out: the note follows its line; on one it goes above
    expected = ["Every caller that streams", "queued (follow-up): then run the linter"]
    assert lines == (expected if not terminal else expected[::-1])
