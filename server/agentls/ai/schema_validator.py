"""A jsonschema validator with TypeBox's semantics for tool arguments, made on first use.

:mod:`agentls.ai.validation` imports this module when it first validates: jsonschema and
the TypeBox formats (with the ``regex`` module) cost a server's start about 40 ms, and a
session needs them only at its first tool call.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

from agentls.ai.formats import FORMATS, js_regex

_VALIDATOR_CACHE_SIZE = 256
_validators: OrderedDict[int, tuple[Any, Validator]] = OrderedDict()


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


def cached_validator(schema: Any) -> Validator:
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


def check(schema: Any, value: Any) -> bool | None:
    """Whether ``value`` matches ``schema``; ``None`` when the schema cannot be used on its own."""
    if not isinstance(schema, dict | bool):
        return None
    try:
        return bool(cached_validator(schema).is_valid(value))
    except Exception:
        return None


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


def error_lines(schema: Any, value: Any) -> list[str]:
    """One ``  - path: problem`` line per way ``value`` does not match ``schema`` (none: it matches)."""
    return [f"  - {_error_path(e)}: {_error_message(e)}" for e in cached_validator(schema).iter_errors(value)]
