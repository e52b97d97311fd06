"""Tool-argument conversion and validation match pi-ai's rules."""

from __future__ import annotations

import math

import pytest
from agentls.ai import Tool, ToolArgumentsError, ToolCall, validate_tool_arguments, validate_tool_call
from agentls.ai.schema_validator import grapheme_count
from agentls.ai.validation import js_number
from agentls.ai.wire import js_number_to_string as js_string


def validate(schema: dict, args: dict) -> object:
    return validate_tool_arguments(
        Tool(name="t", parameters=schema), ToolCall(id="c1", name="t", arguments=args)
    )


def obj(properties: dict, required: list[str] | None = None, **extra: object) -> dict:
    return {"type": "object", "properties": properties, "required": required or [], **extra}


@pytest.mark.parametrize(
    ("schema", "raw", "expected"),
    [
        ({"type": "number"}, "3", 3),
        ({"type": "number"}, " 2.5 ", 2.5),
        ({"type": "number"}, True, 1),
        ({"type": "integer"}, "42", 42),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, "false", False),
        ({"type": "boolean"}, 1, True),
        ({"type": "boolean"}, 0, False),
        ({"type": "string"}, 7, "7"),
        ({"type": "string"}, 1.5, "1.5"),
        ({"type": "string"}, True, "true"),
        ({"type": "string"}, False, "false"),
    ],
)
def test_primitives_are_coerced_towards_the_schema(schema: dict, raw: object, expected: object) -> None:
    result = validate(obj({"v": schema}), {"v": raw})
    assert result == {"v": expected}
    assert type(result["v"]) is type(expected)  # type: ignore[index]


def test_optional_null_is_dropped_but_required_null_is_an_error() -> None:
    schema = obj({"a": {"type": "string"}, "b": {"type": "number"}}, ["a"])
    assert validate(schema, {"a": "x", "b": None}) == {"a": "x"}
    # A required null is coerced like any value: "" for a string.
    assert validate(schema, {"a": None}) == {"a": ""}


def test_nullable_optional_property_keeps_its_null() -> None:
    schema = obj({"b": {"type": ["number", "null"]}})
    assert validate(schema, {"b": None}) == {"b": None}


def test_nested_arrays_and_objects_are_coerced() -> None:
    schema = obj(
        {
            "items": {"type": "array", "items": {"type": "integer"}},
            "inner": obj({"flag": {"type": "boolean"}}),
            "extra": obj({}, additionalProperties={"type": "number"}),
        }
    )
    result = validate(schema, {"items": ["1", "2"], "inner": {"flag": "true"}, "extra": {"x": "4"}})
    assert result == {"items": [1, 2], "inner": {"flag": True}, "extra": {"x": 4}}


def test_any_of_keeps_a_matching_value_and_coerces_to_the_first_member_that_fits() -> None:
    schema = obj({"v": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}})
    assert validate(schema, {"v": False}) == {"v": False}
    assert validate(schema, {"v": "5"}) == {"v": 5}


def test_raw_arguments_are_not_mutated() -> None:
    call = ToolCall(id="c", name="t", arguments={"n": "3"})
    assert validate_tool_arguments(Tool(name="t", parameters=obj({"n": {"type": "number"}})), call) == {
        "n": 3
    }
    assert call.arguments == {"n": "3"}


def test_error_message_has_pi_shape_with_raw_arguments() -> None:
    schema = obj({"text": {"type": "string"}, "count": {"type": "number"}}, ["text"])
    with pytest.raises(ToolArgumentsError) as caught:
        validate(schema, {"count": "many", "ü": 1})
    message = str(caught.value)
    header, rest = message.split("\n", 1)
    assert header == 'Validation failed for tool "t":'
    errors, received = rest.split("\n\nReceived arguments:\n")
    assert "  - text: must have required properties text" in errors.splitlines()
    assert "  - count: must be number" in errors.splitlines()
    assert received == '{\n  "count": "many",\n  "ü": 1\n}'


def test_validate_tool_call_names_a_missing_tool() -> None:
    with pytest.raises(ToolArgumentsError, match='Tool "nope" not found'):
        validate_tool_call([Tool(name="t")], ToolCall(id="c", name="nope"))


def test_javascript_number_and_string_semantics() -> None:
    assert js_number("0x10") == 16
    assert js_number("1e3") == 1000
    assert math.isnan(js_number("1_000"))
    assert math.isnan(js_number("abc"))
    assert js_number("") == 0
    assert js_string(1e-7) == "1e-7"
    assert js_string(0.00001) == "0.00001"
    assert js_string(2.0) == "2"
    assert js_string(1e21) == "1e+21"


@pytest.mark.parametrize(
    ("text", "count"),
    # Recorded from TypeBox 1.3.7's GraphemeCount on Node 20.
    [
        ("abc", 3),
        ("e\u0301", 1),
        ("👍🏽", 2),
        ("👨\u200d👩\u200d👧", 1),
        ("🇩🇪🇫🇷", 2),
        ("a\ufe0f", 1),
        ("", 0),
        ("x\u200d", 2),
    ],
)
def test_string_lengths_count_graphemes_as_typebox_does(text: str, count: int) -> None:
    assert grapheme_count(text) == count
    assert validate(obj({"s": {"type": "string", "minLength": count, "maxLength": count}}), {"s": text}) == {
        "s": text
    }


def test_patterns_are_javascript_unicode_regexes_and_formats_are_enforced() -> None:
    schema = obj(
        {"name": {"type": "string", "pattern": "^\\p{L}+$"}, "mail": {"type": "string", "format": "email"}}
    )
    assert validate(schema, {"name": "Zoë", "mail": "a@example.com"}) == {
        "name": "Zoë",
        "mail": "a@example.com",
    }
    with pytest.raises(ToolArgumentsError) as caught:
        validate(schema, {"name": "Zoë1", "mail": "not-an-email"})
    assert '  - name: must match pattern "^\\p{L}+$"' in str(caught.value)
    assert '  - mail: must match format "email"' in str(caught.value)


def test_tuple_items_in_draft_7_form_are_coerced_and_validated() -> None:
    schema = obj({"pair": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]}})
    assert validate(schema, {"pair": ["1", 2, 3]}) == {"pair": [1, "2", 3]}
