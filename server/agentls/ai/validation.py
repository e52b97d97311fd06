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
from collections import OrderedDict
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

from agentls.ai.formats import FORMATS, js_regex
from agentls.ai.types import Tool, ToolCall
from agentls.ai.wire import dumps_pretty, js_number_to_string

_VALIDATOR_CACHE_SIZE = 256
_validators: OrderedDict[int, tuple[Any, Validator]] = OrderedDict()


class ToolArgumentsError(ValueError):
    """The arguments of a tool call do not match the tool's schema."""


_SCHEMA_KEYWORDS = ("items", "additionalItems", "contains", "not", "if", "then", "else")
_SCHEMA_KEYWORDS += ("additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties")
_SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAP_KEYWORDS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")


def _modernize(schema: Any) -> Any:
    """Rewrite the draft-7 tuple form (``items`` as a list, ``additionalItems``) as 2020-12's.

    TypeBox accepts both spellings; jsonschema's 2020-12 validator only the new one.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if isinstance(out.get("items"), list) and "prefixItems" not in out:
        out["prefixItems"] = out.pop("items")
        if "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
    for keyword in _SCHEMA_KEYWORDS:
        if keyword in out:
            out[keyword] = _modernize(out[keyword])
    for keyword in _SCHEMA_LIST_KEYWORDS:
        if isinstance(out.get(keyword), list):
            out[keyword] = [_modernize(item) for item in out[keyword]]
    for keyword in _SCHEMA_MAP_KEYWORDS:
        if isinstance(out.get(keyword), dict):
            out[keyword] = {name: _modernize(item) for name, item in out[keyword].items()}
    return out


# --- TypeBox's keyword semantics on top of jsonschema --------------------------------------


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _code_point_at(units: list[int], index: int) -> int:
    first = units[index]
    if 0xD800 <= first <= 0xDBFF and index + 1 < len(units) and 0xDC00 <= units[index + 1] <= 0xDFFF:
        return 0x10000 + ((first - 0xD800) << 10) + (units[index + 1] - 0xDC00)
    return first


def _is_modifier(point: int) -> bool:
    return (
        0x0300 <= point <= 0x036F
        or 0x1AB0 <= point <= 0x1AFF
        or 0x1DC0 <= point <= 0x1DFF
        or 0xFE20 <= point <= 0xFE2F
        or 0xFE00 <= point <= 0xFE0F
    )


def grapheme_count(text: str) -> int:
    """TypeBox's grapheme count (``guard/string.mjs``), which ``minLength``/``maxLength`` compare."""
    units = _utf16_units(text)

    def width(point: int) -> int:
        return 2 if point > 0xFFFF else 1

    def skip_modifiers(index: int) -> int:
        while index < len(units) and _is_modifier(point := _code_point_at(units, index)):
            index += width(point)
        return index

    count = index = 0
    while index < len(units):
        start = _code_point_at(units, index)
        index = skip_modifiers(index + width(start))
        while index < len(units) - 1 and units[index] == 0x200D:
            index = skip_modifiers(index + 1 + width(_code_point_at(units, index + 1)))
        if 0x1F1E6 <= start <= 0x1F1FF and index < len(units):
            following = _code_point_at(units, index)
            if 0x1F1E6 <= following <= 0x1F1FF:
                index += width(following)
        count += 1
    return count


def _js_search(pattern: str, text: str) -> bool:
    return js_regex(pattern).search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not _js_search(pattern, instance):
        yield jsonschema.ValidationError(f'must match pattern "{pattern}"')


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _js_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key for key in instance if key not in properties and not any(_js_search(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        yield jsonschema.ValidationError("must not have additional properties " + ", ".join(extras))


def _min_length(validator: Any, limit: int, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and grapheme_count(instance) < limit:
        yield jsonschema.ValidationError(f"must not have fewer than {limit} characters")


def _max_length(validator: Any, limit: int, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and grapheme_count(instance) > limit:
        yield jsonschema.ValidationError(f"must not have more than {limit} characters")


def _format(validator: Any, format_name: str, instance: Any, schema: Any) -> Any:
    check = FORMATS.get(format_name)
    if check is not None and isinstance(instance, str) and not check(instance):
        yield jsonschema.ValidationError(f'must match format "{format_name}"')


_TYPEBOX_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "minLength": _min_length,
    "maxLength": _max_length,
    "format": _format,
}
_typebox_classes: dict[type, type] = {}


def _typebox_class(base: type) -> type:
    """``base`` with TypeBox's semantics for patterns, string lengths and formats."""
    if base not in _typebox_classes:
        _typebox_classes[base] = jsonschema.validators.extend(base, _TYPEBOX_KEYWORDS)
    return _typebox_classes[base]


def _validator(schema: Any) -> Validator:
    """A cached validator for ``schema`` (the cache entry keeps the schema alive, so ids stay unique)."""
    key = id(schema)
    cached = _validators.get(key)
    if cached is not None and cached[0] is schema:
        _validators.move_to_end(key)
        return cached[1]
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    modern = _modernize(schema) if cls is jsonschema.Draft202012Validator else schema
    validator = _typebox_class(cls)(modern)
    _validators[key] = (schema, validator)
    if len(_validators) > _VALIDATOR_CACHE_SIZE:
        _validators.popitem(last=False)
    return validator


def _check(schema: Any, value: Any) -> bool | None:
    """Whether ``value`` matches ``schema``; ``None`` when the schema cannot be used on its own."""
    if not isinstance(schema, dict | bool):
        return None
    try:
        return bool(_validator(schema).is_valid(value))
    except Exception:
        return None


# --- JavaScript number semantics ---------------------------------------------------------

_JS_WHITESPACE = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_RADIX = {"0x": 16, "0o": 8, "0b": 2}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


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
    return _is_number(value) and math.isfinite(value) and float(value).is_integer()


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
            return _is_number(value)
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
            if _is_number(value):
                if value == 1:
                    return True
                if value == 0:
                    return False
            return value
        case "string":
            if value is None:
                return ""
            if isinstance(value, bool) or _is_number(value):
                return js_number_to_string(value)
            return value
        case "null":
            if value == "" or (_is_number(value) and value == 0) or value is False:
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
    if _is_number(a) and _is_number(b):
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


def _error_path(error: jsonschema.ValidationError) -> str:
    base = ".".join(str(part) for part in error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        if missing:
            return f"{base}.{missing[0]}" if base else str(missing[0])
    return base or "root"


def _error_message(error: jsonschema.ValidationError) -> str:
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        return "must have required properties " + ", ".join(missing)
    if error.validator == "type":
        expected = error.validator_value
        expected_text = " or ".join(expected) if isinstance(expected, list) else expected
        return f"must be {expected_text}"
    return error.message


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
    validator = _validator(schema)
    errors = list(validator.iter_errors(args))
    if not errors:
        return args
    lines = (
        "\n".join(f"  - {_error_path(e)}: {_error_message(e)}" for e in errors) or "Unknown validation error"
    )
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
