"""The pieces the providers parse streams with: tolerant JSON and server-sent events."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import pytest
from agentls.ai.providers.json_parse import (
    parse_json_with_repair,
    parse_partial_json,
    parse_streaming_json,
    repair_json,
)
from agentls.ai.providers.sse import ServerSentEvent, iter_sse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("   ", {}),
        ("{", {}),
        ('{"pa', {}),
        ('{"path":', {}),
        ('{"path": "src/ma', {"path": "src/ma"}),
        ('{"path": "a\\', {"path": "a"}),
        ('{"path": "a\\u00', {"path": "a"}),
        ('{"n": 1', {"n": 1}),
        ('{"n": 1.', {}),
        ('{"n": 1e', {"n": 1}),
        ('{"n": -', {}),
        ('{"ok": tr', {"ok": True}),
        ('{"v": nu', {"v": None}),
        ('{"list": [1, 2, {"a": "b', {"list": [1, 2, {"a": "b"}]}),
        ('{"a": {"b": [', {"a": {"b": []}}),
        ('{"done": true}', {"done": True}),
        ("[1, 2", [1, 2]),
        ('"text', "text"),
        ("12", 12),
        ("null", None),
    ],
)
def test_streaming_json_parses_as_far_as_it_goes(text: str, expected: object) -> None:
    """Expected: what pi-ai's ``parseStreamingJson`` returns for the same text (checked with Node)."""
    assert parse_streaming_json(text) == expected


def test_literals_cut_short() -> None:
    assert parse_partial_json("[Infin") == [math.inf]
    assert parse_partial_json("[-Inf") == [-math.inf]
    assert parse_partial_json("[fal") == [False]


def test_repair_escapes_control_characters_and_invalid_escapes_inside_strings_only() -> None:
    assert repair_json('{"a": "line\nbreak\tand \\q"}\n') == '{"a": "line\\nbreak\\tand \\\\q"}\n'
    assert repair_json('{"a": "\\u00e9 \\n \\" \x01"}') == '{"a": "\\u00e9 \\n \\" \\u0001"}'
    assert repair_json('{"a": "end\\') == '{"a": "end\\\\'
    assert parse_json_with_repair('{"path": "C:\\Users\\me"}') == {"path": "C:\\Users\\me"}
    assert parse_json_with_repair('{"text": "two\nlines"}') == {"text": "two\nlines"}
    with pytest.raises(ValueError):
        parse_json_with_repair("{nope")


def test_long_streamed_arguments_parse_after_every_delta_as_a_growing_prefix() -> None:
    """Parsed again after every delta, as pi-ai does: each partial parse holds a prefix of the content.

    (How long this takes for a big file is a benchmark's figure, not a test's.)"""
    text = '{"path": "big.txt", "content": "' + r"line of text \n with \"quotes\" " * 2000
    final = parse_streaming_json(text + '"}')["content"]
    assert final.count("\n") == 2000
    seen = ""
    for end in range(40, len(text), 64):
        partial = parse_streaming_json(text[:end])
        assert partial["path"] == "big.txt"
        content = partial.get("content", "")
        assert final.startswith(content) and len(content) >= len(seen)
        seen = content
    assert len(seen) > len(final) - 64


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def events(*parts: bytes) -> list[ServerSentEvent]:
    return [event async for event in iter_sse(chunks(*parts))]


async def test_sse_events_split_anywhere() -> None:
    parsed = await events(
        b"event: message_start\r\nda",
        b'ta: {"a":\r',
        b"\ndata: 1}\r\n\r\n: a comment\n\nevent: ping\ndata:\n\n",
        "data: caf\u00e9 ".encode()[:-2],
        "data: caf\u00e9 ".encode()[-2:] + b"\ndata: second line\nid: 7\nretry: 5\n\n",
        b"data: [DONE]",
    )
    assert [(e.event, e.data) for e in parsed] == [
        ("message_start", '{"a":\n1}'),
        ("ping", ""),
        (None, "caf\u00e9 \nsecond line"),
        (None, "[DONE]"),
    ]


async def test_sse_lines_ending_with_a_lone_carriage_return() -> None:
    parsed = await events(b"data: one\r\rdata: two\r", b"\r")
    assert [e.data for e in parsed] == ["one", "two"]


async def test_a_line_that_is_not_a_field_is_ignored() -> None:
    parsed = await events(b"this is not sse\ndata: x\n\n")
    assert [(e.event, e.data) for e in parsed] == [(None, "x")]
