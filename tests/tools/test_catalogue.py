"""The tool catalogue: each built-in tool's kind, title and summaries, for the arguments a model sends.

A model can send any JSON as a tool call's arguments, and the fronts describe the call before
the tool checks them: every rendering must say something for any value, and never raise.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentls.tools import coding_tools
from agentls.tools.catalogue import (
    TOOLS,
    call_argument,
    call_summary,
    first_line,
    one_line,
    progress_title,
    tool_kind,
    tool_title,
)
from agentls.tools.workspace import DiskWorkspace

LONG = "x" * 100

# name, args, (kind, ACP title, terminal summary, $/progress title, tree argument)
TYPICAL: list[tuple[str, dict[str, Any], tuple[str, str, str, str, str]]] = [
    (
        "read",
        {"path": "src/main.py", "offset": 3},
        ("read", "Read src/main.py", "src/main.py", "read: src/main.py", "src/main.py"),
    ),
    ("write", {"path": "a.txt", "content": "hi"}, ("edit", "Write a.txt", "a.txt", "write: a.txt", "a.txt")),
    (
        "edit",
        {"path": "a b.txt", "edits": []},
        ("edit", "Edit a b.txt", "a b.txt", "edit: a b.txt", "a b.txt"),
    ),
    ("ls", {"path": "src"}, ("search", "List src", "src", "ls: src", "src")),
    ("ls", {}, ("search", "List .", ".", "ls", "")),
    ("find", {"pattern": "*.py"}, ("search", "Find *.py", "*.py", "find: *.py", "*.py")),
    ("grep", {"pattern": "TODO"}, ("search", "Search TODO", "'TODO'", "grep: TODO", "TODO")),
    ("grep", {"pattern": "TODO", "path": "src"}, ("search", "Search TODO", "'TODO' src", "grep: src", "src")),
    (
        "bash",
        {"command": "pytest -q"},
        ("execute", "Run pytest -q", "pytest -q", "bash: pytest -q", "pytest -q"),
    ),
    ("bash", {"command": "ls\n  pwd"}, ("execute", "Run ls pwd", "ls…", "bash: ls", "ls\n  pwd")),
    (
        "diagnostics",
        {"path": "a.py"},
        ("read", "diagnostics", '{"path":"a.py"}', "diagnostics: a.py", "a.py"),
    ),
    (
        "mcp__time__now",
        {"zone": "Asia/Tokyo"},
        ("other", "time · now", '{"zone":"Asia/Tokyo"}', "mcp__time__now", "Asia/Tokyo"),
    ),
    (
        "mcp__files__search",
        {"query": "q", "path": "p"},
        ("other", "files · search", '{"query":"q","path":"p"}', "mcp__files__search: p", "p"),
    ),
]


def described(name: str, args: Any) -> tuple[str, str, str, str, str]:
    return (
        tool_kind(name),
        tool_title(name, args),
        call_summary(name, args),
        progress_title(name, args),
        call_argument(args),
    )


@pytest.mark.parametrize(
    ("name", "args", "expected"), TYPICAL, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(TYPICAL)]
)
def test_a_typical_call_of_each_tool(name: str, args: dict[str, Any], expected: tuple[str, ...]) -> None:
    assert described(name, args) == expected


def test_long_arguments_are_cut_as_each_front_cuts_them() -> None:
    assert tool_title("bash", {"command": LONG}) == f"Run {'x' * 79}…"
    assert call_summary("bash", {"command": LONG}) == "x" * 60 + "…"
    assert call_summary("grep", {"pattern": LONG}) == repr("x" * 40 + "…")
    assert progress_title("bash", {"command": LONG}) == f"bash: {'x' * 79}…"
    assert call_summary("mcp__a__b", {"text": LONG}) == ('{"text":"' + LONG)[:59] + "…"
    assert tool_title("read", {"path": LONG}) == f"Read {LONG}"  # a path is never cut


@pytest.mark.parametrize(
    "args", [None, 3, "read me", [1, 2], True, {"path": 3, "command": None, "pattern": ["*"]}]
)
def test_malformed_arguments_still_describe_the_call(args: Any) -> None:
    for name in [*TOOLS, "mcp__srv__tool", "mcp__srv", "unknown", ""]:
        kind, title, summary, progress, argument = described(name, args)
        assert kind in ("read", "edit", "search", "execute", "other")
        assert isinstance(title, str) and isinstance(summary, str) and isinstance(argument, str)
        assert progress == name  # no text argument: the name alone


def test_malformed_values_of_the_subject() -> None:
    # a path that is not a non-empty string: the title is the tool's name (ls: the current folder)
    assert tool_title("read", {"path": ""}) == "read"
    assert tool_title("edit", {"path": 7}) == "edit"
    assert tool_title("ls", {"path": ""}) == "List ."
    # the terminal shows what it was given
    assert call_summary("read", {"path": 7}) == "7"
    assert call_summary("read", {"path": ""}) == "."
    assert call_summary("bash", {}) == ""
    assert call_summary("bash", {"command": None}) == "None"
    assert call_summary("grep", {"pattern": 5, "path": ["a"]}) == "'5' ['a']"
    # a command or pattern that is not a string: no verb
    assert tool_title("bash", {"command": ["ls"]}) == "bash"
    assert tool_title("grep", {"pattern": 1}) == "grep"
    assert tool_title("bash", {"command": ""}) == "Run "
    assert tool_title("mcp__srv__", {}) == "srv · "
    assert tool_title("mcp__a__b__c", {}) == "a · b__c"
    assert tool_title("mcp__nameonly", {}) == "mcp__nameonly"
    assert call_argument({"n": 1, "text": "first text"}) == "first text"
    assert progress_title("bash", {"command": "\n"}) == "bash"


def test_every_built_in_tool_is_in_the_catalogue() -> None:
    names = {tool.name for tool in coding_tools(DiskWorkspace("."))} | {"diagnostics"}
    assert names == set(TOOLS)
    assert tool_kind("mcp__x__y") == "other"


def test_one_line_and_first_line() -> None:
    assert one_line("a \n b\t c") == "a b c"
    assert one_line("abcd efgh", 5) == "abcd…"
    assert one_line("abcd efgh", 7) == "abcd e…"
    assert one_line("abc defgh", 5) == "abc …"
    assert one_line("abc defgh", 5, rstrip=True) == "abc…"
    assert first_line("  one\ntwo") == "one…"
    assert first_line("a\rb") == "a\rb"  # only \n ends a line
    assert first_line("abcdef", 3) == "abc…"
