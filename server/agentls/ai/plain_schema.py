"""The plain tool schemas, checked without jsonschema: as it would decide, in a fraction of the time.

The built-in tools' schemas, and most MCP tools', use a handful of keywords: ``type`` (one
name), ``properties``, ``required``, ``items``, ``minItems``, ``minimum``, and annotations
(``description``, ``title``, ``default``, ``examples``). For those, :func:`plain_match` says
whether a value matches exactly as jsonschema's 2020-12 validator does (its types: an
integer is a whole number, a float like ``3.0`` included; ``true`` is not a number), so a
valid tool call needs neither jsonschema's import (30-40 ms, on a session's first tool call)
nor its validation (about half a millisecond a call). Any other keyword, a schema that is not
an object, or a type list, and it answers ``None``: jsonschema decides. The errors of an
invalid call are always jsonschema's (:mod:`agentls.ai.schema_validator`), worded as Pi words them.
"""

from __future__ import annotations

from typing import Any

_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment"})
_KEYWORDS = frozenset({"type", "properties", "required", "items", "minItems", "minimum"}) | _ANNOTATIONS


def is_number(value: Any) -> bool:
    """A JSON number: an int or a float, not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _has_type(value: Any, name: str) -> bool | None:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return is_number(value)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    return None


def plain_match(schema: Any, value: Any) -> bool | None:
    """Whether ``value`` matches ``schema``, or ``None`` when the schema is not a plain one."""
    if not isinstance(schema, dict) or not _KEYWORDS.issuperset(schema):
        return None
    verdict = True
    kind = schema.get("type")
    if kind is not None:
        if not isinstance(kind, str) or (typed := _has_type(value, kind)) is None:
            return None
        verdict = typed
    minimum = schema.get("minimum")
    if minimum is not None:
        if not is_number(minimum):
            return None
        if is_number(value) and value < minimum:
            verdict = False
    min_items = schema.get("minItems")
    if min_items is not None:
        if not isinstance(min_items, int) or isinstance(min_items, bool) or min_items < 0:
            return None
        if isinstance(value, list) and len(value) < min_items:
            verdict = False
    required = schema.get("required")
    if required is not None:
        if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
            return None
        if isinstance(value, dict) and any(name not in value for name in required):
            verdict = False
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            return None
        for name, subschema in properties.items():
            if isinstance(value, dict) and name in value:
                matched = plain_match(subschema, value[name])
            else:  # the subschema must still be plain for the verdict to be this module's
                matched = True if _is_plain(subschema) else None
            if matched is None:
                return None
            verdict = verdict and matched
    items = schema.get("items")
    if items is not None:
        if not _is_plain(items):
            return None
        if isinstance(value, list):
            for item in value:
                matched = plain_match(items, item)
                if matched is None:
                    return None
                verdict = verdict and matched
    return verdict


def _is_plain(schema: Any) -> bool:
    """Whether :func:`plain_match` can decide for ``schema`` (whatever the value)."""
    return plain_match(schema, _NOTHING) is not None


class _Nothing:
    """A value of no JSON type: it only walks a schema through :func:`plain_match`."""


_NOTHING = _Nothing()
