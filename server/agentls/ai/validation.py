"""Tool-argument validation as pi-ai 0.85.0 does it.

Models often send ``"3"`` for a number or ``null`` for an argument they mean to
leave out. Pi first drops ``null`` optional properties whose schema does not allow
``null``, then coerces values towards the schema's types (``"3"`` -> ``3``,
``"true"`` -> ``true``, ``7`` -> ``"7"``, through ``anyOf``/``oneOf``/``allOf``,
object properties and array items), and only then validates. The tool and the
hooks get the converted arguments; error messages show the raw ones.

This is a port of ``normalizeOptionalNulls`` and ``coerceWithJsonSchema`` from
``pi-ai/dist/utils/validation.js`` (TypeBox's own ``Value.Convert`` does nothing
for plain JSON schemas, which is what tools here declare), with ``jsonschema``
as the validator.
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from agentls.ai.plain_schema import is_number, plain_match
from agentls.ai.types import Tool, ToolCall
from agentls.ai.wire import dumps_pretty, js_number_to_string


class ToolArgumentsError(ValueError):
    """The arguments of a tool call do not match the tool's schema."""


def _check(schema: Any, value: Any) -> bool | None:
    """Whether ``value`` matches ``schema``; ``None`` when the schema cannot be used on its own."""
    plain = plain_match(schema, value)
    if plain is not None:
        return plain
    from agentls.ai import schema_validator  # jsonschema is imported on the first validation it makes

    return schema_validator.check(schema, value)


# --- JavaScript number semantics ---------------------------------------------------------

_JS_WHITESPACE = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_RADIX = {"0x": 16, "0o": 8, "0b": 2}


def _as_number(value: float) -> int | float:
    if math.isfinite(value) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value


def js_number(text: str) -> float | int:
    """JavaScript's ``Number(text)`` for a string: ``nan`` where JavaScript gives ``NaN``."""
    stripped = text.strip(_JS_WHITESPACE)
    if stripped == "":
        return 0
    prefix = stripped[:2].lower()
    if prefix in _RADIX:
        try:
            return int(stripped[2:], _RADIX[prefix])
        except ValueError:
            return math.nan
    if not _DECIMAL.fullmatch(stripped):
        return math.nan
    return _as_number(float(stripped.replace("Infinity", "inf")))


def _js_is_integer(value: Any) -> bool:
    return is_number(value) and math.isfinite(value) and float(value).is_integer()


# --- coercion (pi-ai's coerceWithJsonSchema) ----------------------------------------------


def _schema_types(schema: dict[str, Any]) -> list[str]:
    schema_type = schema.get("type")
    if isinstance(schema_type, str):
        return [schema_type]
    if isinstance(schema_type, list):
        return [t for t in schema_type if isinstance(t, str)]
    return []


def _matches_json_type(value: Any, schema_type: str) -> bool:
    match schema_type:
        case "number":
            return is_number(value)
        case "integer":
            return _js_is_integer(value)
        case "boolean":
            return isinstance(value, bool)
        case "string":
            return isinstance(value, str)
        case "null":
            return value is None
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
    return False


def _coerce_primitive(value: Any, schema_type: str) -> Any:
    match schema_type:
        case "number" | "integer":
            if value is None:
                return 0
            if isinstance(value, bool):
                return 1 if value else 0
            if isinstance(value, str) and value.strip() != "":
                parsed = js_number(value)
                ok = _js_is_integer(parsed) if schema_type == "integer" else math.isfinite(parsed)
                if ok:
                    return parsed
            return value
        case "boolean":
            if value is None:
                return False
            if isinstance(value, str):
                if value == "true":
                    return True
                if value == "false":
                    return False
            if is_number(value):
                if value == 1:
                    return True
                if value == 0:
                    return False
            return value
        case "string":
            if value is None:
                return ""
            if isinstance(value, bool) or is_number(value):
                return js_number_to_string(value)
            return value
        case "null":
            if value == "" or (is_number(value) and value == 0) or value is False:
                return None
            return value
    return value


def _coerce_object(value: dict[str, Any], schema: dict[str, Any]) -> None:
    properties = schema.get("properties")
    defined = set(properties) if isinstance(properties, dict) else set()
    if isinstance(properties, dict):
        for key, property_schema in properties.items():
            if key in value:
                value[key] = coerce_with_json_schema(value[key], property_schema)
    additional = schema.get("additionalProperties")
    if additional and isinstance(additional, dict):
        for key in list(value):
            if key not in defined:
                value[key] = coerce_with_json_schema(value[key], additional)


def _coerce_array(value: list[Any], schema: dict[str, Any]) -> None:
    items = schema.get("items")
    if isinstance(items, list):
        for index in range(min(len(value), len(items))):
            if items[index]:
                value[index] = coerce_with_json_schema(value[index], items[index])
    elif isinstance(items, dict):
        for index, item in enumerate(value):
            value[index] = coerce_with_json_schema(item, items)


def _coerce_union(value: Any, schemas: list[Any]) -> Any:
    for schema in schemas:
        if _check(schema, value):
            return value
    for schema in schemas:
        candidate = coerce_with_json_schema(copy.deepcopy(value), schema)
        if _check(schema, candidate):
            return candidate
    return value


def coerce_with_json_schema(value: Any, schema: Any) -> Any:
    """Coerce ``value`` towards ``schema``; objects and arrays are changed in place."""
    if not isinstance(schema, dict):
        return value
    result = value
    for nested in schema.get("allOf") or []:
        result = coerce_with_json_schema(result, nested)
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            result = _coerce_union(result, schema[keyword])
    types = _schema_types(schema)
    matches_union_member = len(types) > 1 and any(_matches_json_type(result, t) for t in types)
    if types and not matches_union_member:
        for schema_type in types:
            candidate = _coerce_primitive(result, schema_type)
            if candidate is not result and not _same_js_value(candidate, result):
                result = candidate
                break
    if "object" in types and isinstance(result, dict):
        _coerce_object(result, schema)
    if "array" in types and isinstance(result, list):
        _coerce_array(result, schema)
    return result


def _same_js_value(a: Any, b: Any) -> bool:
    """JavaScript's ``===`` for primitives (``1 === 1.0``, ``true !== 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False


def normalize_optional_nulls(value: Any, schema: Any) -> None:
    """Delete ``null`` values of optional properties whose schema does not accept ``null``."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, list):
            for index in range(min(len(value), len(items))):
                if items[index]:
                    normalize_optional_nulls(value[index], items[index])
        elif items:
            for item in value:
                normalize_optional_nulls(item, items)
        return
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, dict):
        return
    required = set(schema.get("required") or [])
    for key, property_schema in properties.items():
        if key not in value:
            continue
        if (
            value[key] is None
            and key not in required
            and not (isinstance(property_schema, dict) and isinstance(property_schema.get("$ref"), str))
            and _check(property_schema, None) is False
        ):
            del value[key]
        else:
            normalize_optional_nulls(value[key], property_schema)


# --- validation --------------------------------------------------------------------------


def validate_tool_arguments(tool: Tool, tool_call: ToolCall) -> Any:
    """Return the converted arguments of ``tool_call``, or raise :class:`ToolArgumentsError`.

    The message is ``Validation failed for tool "NAME":`` followed by one
    ``  - path: problem`` line per error, a blank line, ``Received arguments:`` and
    the raw arguments as indented JSON.
    """
    args = copy.deepcopy(tool_call.arguments)
    schema = tool.parameters
    normalize_optional_nulls(args, schema)
    coerced = coerce_with_json_schema(args, schema)
    if coerced is not args:
        if isinstance(args, dict) and isinstance(coerced, dict):
            args.clear()
            args.update(coerced)
        else:
            return coerced if _check(schema, coerced) else args
    if plain_match(schema, args):
        return args
    from agentls.ai import schema_validator

    errors = schema_validator.error_lines(schema, args)
    if not errors:
        return args
    lines = "\n".join(errors)
    raise ToolArgumentsError(
        f'Validation failed for tool "{tool_call.name}":\n{lines}\n\nReceived arguments:\n'
        f"{dumps_pretty(tool_call.arguments)}"
    )


def validate_tool_call(tools: list[Tool], tool_call: ToolCall) -> Any:
    """Find the tool named by ``tool_call`` and validate its arguments."""
    tool = next((t for t in tools if t.name == tool_call.name), None)
    if tool is None:
        raise ToolArgumentsError(f'Tool "{tool_call.name}" not found')
    return validate_tool_arguments(tool, tool_call)
