"""The coding roles and ``convert_to_llm``: what the model is sent for each, as Pi's ``convertToLlm`` does."""

from __future__ import annotations

from typing import Any

import pytest
from agentls.ai import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
    parse_message,
    to_wire,
)
from agentls.session.messages import (
    BashExecutionMessage,
    as_coding_message,
    bash_execution_message,
    bash_execution_to_text,
    branch_summary_message,
    compaction_summary_message,
    convert_to_llm,
    custom_message,
)


def bash(**fields: Any) -> CustomMessage:
    defaults: dict[str, Any] = {"output": "hello", "exit_code": 0, "cancelled": False, "truncated": False}
    return bash_execution_message("echo hello", **{**defaults, **fields})


def only_text(messages: list[Any]) -> str:
    [message] = messages
    assert isinstance(message, UserMessage) and isinstance(message.content, list)
    [block] = message.content
    assert isinstance(block, TextContent)
    return block.text


def test_the_wire_shapes_are_pis() -> None:
    assert to_wire(bash(timestamp=5)) == {
        "role": "bashExecution",
        "command": "echo hello",
        "output": "hello",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 5,
    }
    cancelled = bash(exit_code=None, cancelled=True, full_output_path="/tmp/x.log", exclude_from_context=True)
    wire = to_wire(cancelled)
    assert wire["exitCode"] is None and "exitCode" in wire
    assert wire["fullOutputPath"] == "/tmp/x.log" and wire["excludeFromContext"] is True
    assert to_wire(custom_message("note", "hi", display=True, details={"n": 1}, timestamp=7)) == {
        "role": "custom",
        "customType": "note",
        "content": "hi",
        "display": True,
        "details": {"n": 1},
        "timestamp": 7,
    }
    assert "details" not in to_wire(custom_message("note", "hi", display=False))
    assert to_wire(branch_summary_message("went elsewhere", "e1", 8)) == {
        "role": "branchSummary",
        "summary": "went elsewhere",
        "fromId": "e1",
        "timestamp": 8,
    }
    assert to_wire(compaction_summary_message("so far", 1234, 0)) == {
        "role": "compactionSummary",
        "summary": "so far",
        "tokensBefore": 1234,
        "timestamp": 0,
    }


def test_a_bash_execution_becomes_pis_text() -> None:
    [message] = convert_to_llm([bash(timestamp=42)])
    assert isinstance(message, UserMessage) and message.timestamp == 42
    assert only_text([message]) == "Ran `echo hello`\n```\nhello\n```"


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({"output": ""}, "Ran `echo hello`\n(no output)"),
        ({"exit_code": 3}, "Ran `echo hello`\n```\nhello\n```\n\nCommand exited with code 3"),
        ({"exit_code": None, "cancelled": True}, "Ran `echo hello`\n```\nhello\n```\n\n(command cancelled)"),
        (
            {"truncated": True, "full_output_path": "/tmp/full.log"},
            "Ran `echo hello`\n```\nhello\n```\n\n[Output truncated. Full output: /tmp/full.log]",
        ),
        ({"truncated": True}, "Ran `echo hello`\n```\nhello\n```"),
        (
            {"output": "", "exit_code": 1, "truncated": True, "full_output_path": "/f"},
            "Ran `echo hello`\n(no output)\n\nCommand exited with code 1"
            "\n\n[Output truncated. Full output: /f]",
        ),
    ],
)
def test_bash_execution_to_text(fields: dict[str, Any], text: str) -> None:
    typed = as_coding_message(bash(**fields))
    assert isinstance(typed, BashExecutionMessage)
    assert bash_execution_to_text(typed) == text
    assert only_text(convert_to_llm([bash(**fields)])) == text


def test_an_excluded_bash_execution_is_dropped() -> None:
    assert convert_to_llm([bash(exclude_from_context=True)]) == []


def test_a_custom_message_becomes_a_user_message_without_its_details() -> None:
    assert only_text(convert_to_llm([custom_message("note", "remember this", display=False, details=1)])) == (
        "remember this"
    )
    blocks = [TextContent(text="see"), ImageContent(data="aGk=", mime_type="image/png")]
    [message] = convert_to_llm([custom_message("attachment", blocks, display=True, timestamp=9)])
    assert message == UserMessage(content=blocks, timestamp=9)


def test_the_summaries_are_wrapped_as_pi_wraps_them() -> None:
    assert only_text(convert_to_llm([branch_summary_message("we tried X", "e1")])) == (
        "The following is a summary of a branch that this conversation came back from:\n\n"
        "<summary>\nwe tried X</summary>"
    )
    assert only_text(convert_to_llm([compaction_summary_message("the story so far", 900)])) == (
        "The conversation history before this point was compacted into the following summary:\n\n"
        "<summary>\nthe story so far\n</summary>"
    )


def test_llm_roles_pass_and_unknown_roles_are_dropped_in_order() -> None:
    user = UserMessage(content="hi", timestamp=1)
    assistant = AssistantMessage(content=[TextContent(text="hello")])
    result = ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text="a.txt")])
    bookmark = CustomMessage(role="bookmark", content="x")
    converted = convert_to_llm([user, bookmark, assistant, bash(), result])
    assert converted[0] is user and converted[1] is assistant and converted[3] is result
    assert only_text([converted[2]]).startswith("Ran `echo hello`")


def test_a_transcript_of_llm_roles_only_is_a_new_list_of_the_same_messages() -> None:
    messages: list[Any] = [
        UserMessage(content="hi", timestamp=1),
        AssistantMessage(content=[TextContent(text="hello")]),
        ToolResultMessage(tool_call_id="c1", tool_name="ls", content=[TextContent(text="a.txt")]),
    ]
    converted = convert_to_llm(messages)
    assert converted == messages and converted is not messages
    assert all(c is m for c, m in zip(converted, messages, strict=True))
    converted.append(messages[0])  # the caller's list, not the transcript
    assert len(messages) == 3


def test_messages_read_back_from_a_session_file_convert_the_same() -> None:
    """The store reads them back as plain ``CustomMessage`` objects, the form they have in the transcript."""
    written = [
        bash(),
        bash(exclude_from_context=True),
        custom_message("note", [TextContent(text="t")], display=True),
        branch_summary_message("b", "e1"),
        compaction_summary_message("c", 10),
    ]
    loaded = [parse_message(to_wire(m)) for m in written]
    assert [to_wire(m) for m in loaded] == [to_wire(m) for m in written]
    assert all(type(m) is CustomMessage for m in written + loaded)
    assert convert_to_llm(loaded) == convert_to_llm(written)
    assert [to_wire(as_coding_message(m)) for m in loaded] == [to_wire(m) for m in written]


def test_a_coding_role_that_does_not_fit_its_shape_is_left_out() -> None:
    broken = [
        CustomMessage(role="bashExecution", content=None, timestamp=1),  # no command, no output
        parse_message({"role": "compactionSummary", "summary": 3, "timestamp": 1}),
        parse_message({"role": "custom", "content": "x", "timestamp": 1}),  # no customType, no display
    ]
    assert [as_coding_message(m) for m in broken] == [None, None, None]
    assert convert_to_llm(broken) == []
