"""``plain_match`` decides as jsonschema (with TypeBox's keywords) does, or leaves it to jsonschema."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from agentls.ai.plain_schema import plain_match
from agentls.ai.schema_validator import check, error_lines
from agentls.ai.types import Tool, ToolCall
from agentls.ai.validation import ToolArgumentsError, validate_tool_arguments
from agentls.tools.bash import BASH_PARAMETERS
from agentls.tools.diagnostics import DIAGNOSTICS_PARAMETERS
from agentls.tools.edit import EDIT_PARAMETERS, WRITE_PARAMETERS
from agentls.tools.find import FIND_PARAMETERS
from agentls.tools.grep import GREP_PARAMETERS
from agentls.tools.ls import LS_PARAMETERS
from agentls.tools.read import READ_PARAMETERS

BUILT_IN = [
    BASH_PARAMETERS,
    DIAGNOSTICS_PARAMETERS,
    EDIT_PARAMETERS,
    WRITE_PARAMETERS,
    FIND_PARAMETERS,
    GREP_PARAMETERS,
    LS_PARAMETERS,
    READ_PARAMETERS,
]

TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]
PLAIN = [
    *({"type": name} for name in TYPES),
    {"type": "integer", "minimum": 1},
    {"type": "number", "minimum": -0.5},
    {"minimum": 0},
    {"type": "array", "minItems": 1, "items": {"type": "string"}},
    {
        "type": "array",
        "items": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    },
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]},
    {"required": ["a"]},
    {"description": "anything", "title": "t"},
    {},
]
NOT_PLAIN = [
    {"type": ["string", "null"]},
    {"type": "string", "pattern": "^a"},
    {"type": "string", "minLength": 1},
    {"enum": [1, 2]},
    {"anyOf": [{"type": "string"}]},
    {"type": "object", "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}},
    {"type": "array", "items": [{"type": "string"}]},
    {"type": "array", "items": {"enum": ["x"]}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
    {"type": "whatever"},
    True,
]
VALUES: list[Any] = [
    None, True, False, 0, 1, -1, 2**60, 1.0, 1.5, -0.5, float("inf"), "", "a", "3", [], [1], ["a", "b"],
    [{"a": 1}], [{"a": "x"}], [{}], {}, {"a": "x"}, {"a": 1}, {"a": "x", "b": 2}, {"a": "x", "b": 2.0},
    {"a": "x", "b": 2.5}, {"b": 1}, {"path": "f", "offset": 0}, {"path": "f", "offset": 1},
    {"path": "f", "edits": []}, {"path": "f", "edits": [{"oldText": "a", "newText": "b"}]},
    {"path": "f", "edits": [{"oldText": "a"}]}, {"command": "ls", "timeout": True},
    {"command": "ls", "timeout": 3},
    {"pattern": "x", "context": -1}, {"pattern": "x", "ignoreCase": 1},
]  # fmt: skip


@pytest.mark.parametrize("schema", BUILT_IN + PLAIN, ids=lambda schema: str(schema)[:60])
def test_a_plain_schema_is_decided_as_jsonschema_decides(schema: Any) -> None:
    for value in VALUES:
        assert plain_match(schema, value) == check(schema, value), value


@pytest.mark.parametrize("schema", NOT_PLAIN, ids=lambda schema: str(schema)[:60])
def test_any_other_schema_is_left_to_jsonschema(schema: Any) -> None:
    assert all(plain_match(schema, value) is None for value in VALUES)


def test_nested_schemas_of_every_plain_form_agree() -> None:
    for outer, inner in itertools.product(PLAIN, PLAIN):
        for schema in (
            {"type": "object", "properties": {"a": inner}, **outer},
            {"type": "array", "items": inner},
        ):
            for value in VALUES:
                assert plain_match(schema, value) == check(schema, value), (schema, value)


def test_an_invalid_call_still_gets_jsonschemas_errors() -> None:
    tool = Tool(name="read", description="", parameters=READ_PARAMETERS)
    call = ToolCall(id="t1", name="read", arguments={"offset": 0})
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(tool, call)
    errors = error_lines(READ_PARAMETERS, {"offset": 0})
    assert len(errors) == 2  # the missing path, the offset below its minimum
    assert str(caught.value).splitlines()[:3] == ['Validation failed for tool "read":', *errors]
