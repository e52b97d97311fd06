"""The conversation as the summariser reads it: Pi's ``[User]:`` / ``[Assistant]:`` text."""

from __future__ import annotations

from agentls.ai import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from agentls.session.compaction.serialize import serialize_conversation


def test_each_role_becomes_labelled_text() -> None:
    messages = [
        UserMessage(content="Fix the bug"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="Look first."),
                TextContent(text="Reading."),
                ToolCall(id="c1", name="read", arguments={"path": "a.py", "10": 1}),
                ToolCall(id="c2", name="ls", arguments={}),
            ]
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="def f(): ...")]),
        UserMessage(content=[TextContent(text="")]),  # nothing to say: left out
    ]
    assert serialize_conversation(messages) == (
        "[User]: Fix the bug\n\n"
        "[Assistant thinking]: Look first.\n\n"
        "[Assistant]: Reading.\n\n"
        # integer-like keys first, as in JavaScript
        '[Assistant tool calls]: read(10=1, path="a.py"); ls()\n\n'
        "[Tool result]: def f(): ..."
    )


def test_tool_results_are_cut_to_2000_characters() -> None:
    long = ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="x" * 2500)])
    assert serialize_conversation([long]) == (
        "[Tool result]: " + "x" * 2000 + "\n\n[... 500 more characters truncated]"
    )
