"""agentls.json_depth on its own: the bounded parse and the top-level scan (fronts drive them end to end)."""

from __future__ import annotations

import json

import pytest
from agentls.json_depth import MAX_DEPTH, TooDeep, depth_of, parse_body, top_level


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_depth_of_counts_brackets_outside_strings() -> None:
    assert depth_of(b'"[[["') == 0
    assert depth_of(b'{"a": "]]", "b": [[1], {"c": []}]}') == 4
    assert depth_of(nested(600).encode()) == 600


def test_a_body_may_nest_max_depth_levels_and_no_more() -> None:
    assert parse_body(f'{{"id": 1, "params": {nested(MAX_DEPTH - 1)}}}'.encode())["id"] == 1
    with pytest.raises(TooDeep) as deep:
        parse_body(f'{{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {nested(MAX_DEPTH)}}}'.encode())
    assert deep.value.fields == {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert deep.value.kind == "request" and deep.value.params_only


def test_a_body_deeper_than_the_stack_is_too_deep_with_its_id_after_the_deep_part() -> None:
    with pytest.raises(TooDeep) as deep:
        parse_body(f'{{"result": {nested(20_000)}, "id": "a"}}'.encode())
    assert deep.value.kind == "response" and deep.value.fields == {"id": "a"}
    assert not deep.value.params_only


def test_top_level_reads_a_line_cut_short_or_broken_as_far_as_it_goes() -> None:
    cut = top_level(b'{"jsonrpc": "2.0", "id": 5, "result": {"content": [{"text": "abc')
    assert cut.kind == "response" and cut.fields["id"] == 5
    broken = top_level(b'{"result": "a\x01b", "id": 7}')  # a control character: not JSON
    assert broken.keys == {"result", "id"} and broken.fields == {"id": 7}
    assert top_level(b'{"method": "m", "params": {"x": 1}}').kind == "notification"
    assert top_level(b'[{"id": 1, "result": 2}]').keys == set()
    assert top_level(b'{"id": 1, "id": [[2]]}').nested == {"id": 2}


def test_top_level_agrees_with_the_parser_on_json() -> None:
    message = {"jsonrpc": "2.0", "id": 'x"}', "method": "é", "params": {"a": [1, {"b": None}]}, "n": -1.5e3}
    top = top_level(json.dumps(message).encode())
    assert top.fields == {k: v for k, v in message.items() if k != "params"}
    assert top.nested == {"params": 3}
