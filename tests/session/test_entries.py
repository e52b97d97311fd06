"""The typed entries of a session file and the reading of one line: what is kept, what is skipped and why."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from agentls.ai import UserMessage
from agentls.ai.local_files import parse_strict_json
from agentls.session.history import session_lines
from agentls.session.history.entries import (
    ENTRY_TYPES,
    CompactionEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    parent_in,
    plain_custom_node,
    read_entry,
)
from agentls.session.history.session_lines import (
    Line,
    LineValues,
    Unreadable,
    exact_value,
    parse_line_roughly,
    read_lines,
)
from agentls.session.history.tree import Node, SessionTree

BASE: dict[str, Any] = {"id": "e2", "parentId": "e1", "timestamp": 2_000}


def tree_with_a_message() -> SessionTree:
    tree = SessionTree()
    tree.add(Node("e1", None, "message", 1_000, message=UserMessage(content="hi", timestamp=1_000)))
    return tree


def entry(entry_type: str, **fields: Any) -> dict[str, Any]:
    return {"type": entry_type, **BASE, **fields}


VALID = {
    "message": entry("message", message={"role": "user", "content": "x", "timestamp": 2}),
    "branch_summary": entry("branch_summary", summary="s", fromId="e1"),
    "custom": entry("custom", customType="note", data={"any": ["thing"]}),
    "label": entry("label", targetId="e1", label="start"),
    "model_change": entry("model_change", provider="p", modelId="m"),
    "thinking_level_change": entry("thinking_level_change", thinkingLevel="high"),
    "system_prompt_change": entry("system_prompt_change", systemPrompt="be brief"),
    "compaction": entry("compaction", summary="s", tokensBefore=5, firstKeptEntryId="e1"),
    "session_info": entry("session_info", name="  my session "),
}


def test_every_entry_type_has_a_valid_example() -> None:
    assert set(VALID) == set(ENTRY_TYPES)


@pytest.mark.parametrize("entry_type", VALID)
def test_a_valid_entry_of_each_type_reads_into_its_node(entry_type: str) -> None:
    read = read_entry(VALID[entry_type], tree_with_a_message())
    node = read.to_node("e1")
    assert (node.id, node.parent_id, node.type, node.timestamp) == ("e2", "e1", entry_type, 2_000)


def test_what_each_entry_puts_in_its_node() -> None:
    tree = tree_with_a_message()
    label = read_entry(VALID["label"], tree)
    assert isinstance(label, LabelEntry) and label.to_node(None).data == {"targetId": "e1", "label": "start"}
    model = read_entry(VALID["model_change"], tree)
    assert isinstance(model, ModelChangeEntry) and model.to_node(None).data == ("p", "m")
    info = read_entry(VALID["session_info"], tree)
    assert isinstance(info, SessionInfoEntry) and info.display_name == "my session"
    compaction = read_entry(VALID["compaction"], tree)
    assert isinstance(compaction, CompactionEntry)
    node = compaction.to_node("e1")
    assert node.compaction is not None and node.compaction.first_kept_entry_id == "e1"
    assert node.message is not None and node.message.role == "compactionSummary"
    custom = read_entry(entry("message", message={"role": "bookmark", "x": 1}), tree)
    assert isinstance(custom, MessageEntry) and custom.message.role == "bookmark"  # a custom message


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "not a JSON object"),
        (entry("bookmark"), "unknown entry type 'bookmark'"),
        (entry("x" * 100), "unknown entry type 'xxxxx"),
        ({**VALID["label"], "type": ["label"]}, "unknown entry type ['label']"),
        ({**VALID["label"], "id": ""}, "label entry without a string id"),
        ({**VALID["label"], "id": 3, "timestamp": -1}, "label entry without a string id"),
        ({**VALID["label"], "id": "e1", "timestamp": -1}, "label entry whose id 'e1' an earlier entry has"),
        ({**VALID["label"], "id": "e1"}, "label entry whose id 'e1' an earlier entry has"),
        ({**VALID["label"], "timestamp": True}, "label entry whose timestamp True is not a time"),
        ({**VALID["label"], "timestamp": 1e16}, "label entry whose timestamp 1e+16 is not a time"),
        ({**VALID["label"], "targetId": None}, "label entry without a string targetId and a string or"),
        ({**VALID["label"], "label": 5}, "label entry without a string targetId and a string or null"),
        ({**VALID["model_change"], "modelId": 1}, "model_change without string provider and modelId"),
        ({**VALID["thinking_level_change"], "thinkingLevel": None}, "thinking_level_change without a string"),
        ({**VALID["system_prompt_change"], "systemPrompt": []}, "system_prompt_change without a string"),
        ({**VALID["session_info"], "name": 5}, "session_info whose name is not a string"),
        ({**VALID["custom"], "customType": None}, "custom entry without a string customType"),
        (entry("custom", customType="agentls/fileChanges"), "agentls/fileChanges entry without a string"),
        (entry("message"), "the message does not parse: Field required"),
        (entry("message", message={"content": "x"}), "the message does not parse: Unable to extract tag"),
        (entry("message", message={"role": "user", "content": 5}), "the message does not parse: user.cont"),
        (entry("branch_summary", summary="s"), "branch_summary entry without a string summary and fromId"),
        ({**VALID["branch_summary"], "details": [1]}, "branch_summary entry whose details are"),
        ({**VALID["branch_summary"], "usage": 5}, "branch_summary entry whose usage does not parse"),
        (
            {**VALID["compaction"], "summary": None, "firstKeptEntryId": "e9"},
            "compaction entry without a string summary and a token count tokensBefore",
        ),
        (
            {**VALID["compaction"], "firstKeptEntryId": "e9", "details": 5},
            "compaction entry whose firstKeptEntryId 'e9' names no message entry before it",
        ),
        (
            {k: v for k, v in VALID["compaction"].items() if k != "firstKeptEntryId"},
            "compaction entry whose firstKeptEntryId None names no message entry before it",
        ),
        ({**VALID["compaction"], "details": {"modifiedFiles": None}}, "compaction entry whose details"),
    ],
)
def test_a_damaged_entry_says_what_is_wrong_first(data: Any, reason: str) -> None:
    with pytest.raises(ValueError) as info:
        read_entry(data, tree_with_a_message())
    assert str(info.value).startswith(reason), str(info.value)


CUSTOM_ENTRIES = [
    VALID["custom"],
    entry("custom", customType="agentls/run", data={"runId": "run-1"}, extra=True),
    entry("custom", customType="note"),  # no data
    entry("custom", customType="note", data=None, parentId="gone", timestamp=2_000.5),
    entry("custom", customType="note", parentId=None, timestamp=0),
    entry("custom", customType="agentls/fileChanges", data={"changes": []}),
    entry("custom", customType="agentls/workspaceChanges", data={}),
    {**VALID["custom"], "customType": 5},
    {**VALID["custom"], "id": "e1"},
    {**VALID["custom"], "id": ""},
    {**VALID["custom"], "id": None},
    {k: v for k, v in VALID["custom"].items() if k != "timestamp"},
    {**VALID["custom"], "timestamp": True},
    {**VALID["custom"], "timestamp": "2000"},
    {**VALID["custom"], "timestamp": -1},
    {**VALID["custom"], "timestamp": 1e16},
    [VALID["custom"]],
]


@pytest.mark.parametrize("data", CUSTOM_ENTRIES, ids=range(len(CUSTOM_ENTRIES)))
def test_a_plain_custom_entry_makes_the_node_that_reading_it_makes(data: Any) -> None:
    tree = tree_with_a_message()
    node = plain_custom_node(data, tree)
    try:
        read = read_entry(data, tree)
    except ValueError:
        assert node is None  # damaged: read_entry says why
        return
    if read.custom_type in ("agentls/fileChanges", "agentls/workspaceChanges"):  # type: ignore[attr-defined]
        assert node is None  # their data is read into its type
    else:
        assert node == read.to_node(parent_in(read.parent_id, tree))


def test_falsy_details_are_no_details_and_unknown_fields_are_ignored() -> None:
    for details in (None, {}, [], "", 0):
        read = read_entry({**VALID["branch_summary"], "details": details, "extra": 1}, tree_with_a_message())
        assert read.to_node(None).data.read_files == ()


def test_a_compaction_keeps_only_a_message_on_its_own_path() -> None:
    tree = tree_with_a_message()
    tree.add(Node("side", None, "message", 1_500, message=UserMessage(content="other", timestamp=1)))
    kept_elsewhere = {**VALID["compaction"], "parentId": "e1", "firstKeptEntryId": "side"}
    with pytest.raises(ValueError, match="'side' names no message entry before it"):
        read_entry(kept_elsewhere, tree)


LINES = [
    b'{"a":1}',
    b'{"big":18446744073709551616,"neg":-9223372036854775809,"max":18446744073709551615}',
    b'{"n":1234567890123456789012345678901234567890}',
    b'{"f":0.1,"g":1e-400,"h":-0.0,"i":1E5,"j":123456789012345678901234567890.5}',
    b'{"s":"\\ud800 lone","t":"\\u2028","u":"\xc3\xa9"}',
    b'{"dup":1,"dup":2}',
    b"[" * 150 + b"]" * 150,
    b"[" * 99 + b"]" * 99,
    b'{"deep":' + b"[" * 99 + b"]" * 99 + b"}",
    b'{"code":"' + b"[{" * 500 + b'"}',
    b'{"id":"00000000000000000000000000000001","n":[1,{"m":2.5}]}',  # long runs of digits in strings
    b'{"id":"00000000000000000000000000000001","big":[{"n":18446744073709551616}]}',
    b'{"id":"00000000000000000000000000000001","f":1e19,"g":-9.3e18}',
    b"null",
]


@pytest.mark.parametrize("content", LINES, ids=range(len(LINES)))
def test_a_line_reads_as_the_strict_parser_reads_it(content: bytes) -> None:
    expected = parse_strict_json(content.decode("utf-8"), finite=True)
    value = exact_value(content, parse_line_roughly(Line(1, content, len(content), True)))
    assert value == expected
    assert json.dumps(value) == json.dumps(expected)  # the same types: an int stays an int


def test_a_rough_reading_is_orjsons() -> None:
    content = b'{"big":18446744073709551616,"deep":' + b"[" * 150 + b"]" * 150 + b"}"
    line = Line(1, content, len(content), True)
    rough = parse_line_roughly(line)
    assert rough["big"] == 2.0**64 and isinstance(rough["big"], float)
    assert exact_value(content, rough)["big"] == 2**64
    not_orjsons = b'{"s":"\\ud800"}'  # a lone surrogate: only the strict parser reads it
    assert parse_line_roughly(Line(1, not_orjsons, len(not_orjsons), True)) == {"s": "\ud800"}
    with pytest.raises(ValueError, match="NaN is not a JSON value"):
        parse_line_roughly(Line(1, b'{"a":NaN}', 9, True))


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"a":NaN}', "NaN is not a JSON value"),
        (b'{"a":1e999}', "out of range"),
        (b'{"a":' + b"9" * 5000 + b"}", "not JSON that can be read"),
        (b"[" * 10_000 + b"]" * 10_000, "nests too deeply"),
        (b'{"a":"\xff"}', "not UTF-8"),
        (b'{"a":1,}', "not JSON: "),
        (b"\xef\xbb\xbf{}", "not JSON: "),
    ],
)
def test_a_line_that_is_not_json_says_why(content: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason.replace("(", r"\(")):
        parse_line_roughly(Line(1, content, len(content), True))


@pytest.mark.parametrize("ending", [b"", b"\n"])
def test_lines_are_cut_across_blocks_and_too_long_ones_not_kept(
    ending: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_lines, "_BLOCK", 7)
    monkeypatch.setattr(session_lines, "MAX_LINE_BYTES", 20)
    pieces = [b"short", b"", b"x" * 20, b"y" * 21, b"a line over blocks", b"z" * 45, b"end"]
    lines = list(read_lines(io.BytesIO(b"\n".join(pieces) + ending)))
    assert lines == [
        Line(number, piece if len(piece) <= 20 else None, len(piece), number < len(pieces) or bool(ending))
        for number, piece in enumerate(pieces, 1)
    ]
    assert list(read_lines(io.BytesIO(b""))) == []


FILES = {
    "entries": b'{"a":1}\n{"b":[1,2]}\n{"n":18446744073709551616}\n',
    "no newline at the end": b'{"a":1}\n{"b":2}',
    "blank lines": b'{"a":1}\n\n   \n{"b":2}\n',
    "damaged and truncated": b'{"a":1}\n{"b":NaN}\n{"s":"\\ud800"}\n{"c":',
    "damaged at the end": b'{"a":1}\n{"b":NaN}\n',
    "only a newline": b"\n",
    "empty": b"",
}


@pytest.mark.parametrize("name", FILES)
def test_a_file_read_at_once_gives_what_reading_it_line_by_line_gives(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES[name])

    def read() -> tuple[list[tuple[int, bytes, Any]], bool]:
        with path.open("rb") as file:
            values = LineValues(file)
            return list(values), values.ends_with_newline

    at_once = read()
    monkeypatch.setattr(session_lines, "_WHOLE_FILE", 0)  # every file read line by line
    assert repr(at_once) == repr(read())  # the same values of the same types (1 is not 1.0)
    lines = FILES[name].split(b"\n")
    assert [number for number, _, _ in at_once[0]] == [n for n, c in enumerate(lines, 1) if c.strip()]
    assert at_once[1] == (FILES[name].endswith(b"\n") and FILES[name] != b"")


def test_a_line_with_no_value_says_why_and_whether_it_ended(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(FILES["damaged and truncated"])
    with path.open("rb") as file:
        values = list(LineValues(file))
    assert values[0] == (1, b'{"a":1}', {"a": 1})
    nan = Unreadable("not JSON that can be read: NaN is not a JSON value", True)
    assert values[1] == (2, b'{"b":NaN}', nan)
    assert values[2] == (3, b'{"s":"\\ud800"}', {"s": "\ud800"})  # only the strict parser reads it
    assert values[3][:2] == (4, b'{"c":') and values[3][2].ended is False


def test_a_file_that_grew_after_its_size_was_taken_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    with path.open("rb") as file:
        before = os.fstat(file.fileno())
        with path.open("ab") as appending:
            appending.write(b'{"b":2}\n')
        monkeypatch.setattr(os, "fstat", lambda _: before)  # the size as it was before the append
        values = LineValues(file)
        assert list(values) == [(1, b'{"a":1}', {"a": 1}), (2, b'{"b":2}', {"b": 2})]
        assert values.ends_with_newline
