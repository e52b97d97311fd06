"""Conversion between Python objects and Pi's JSON wire shapes.

Pi serialises with JavaScript's ``JSON.stringify``, and traces, tool-call deltas and
templates must match it byte for byte, so every place that writes JSON text for the
wire goes through :func:`dumps_compact` or :func:`dumps_pretty`. They follow
JavaScript, not Python, where the two differ:

* numbers: ``1`` not ``1.0``, ``1e-7`` not ``1e-07``, ``0.000001`` not ``1e-06``,
  ``NaN``/``Infinity`` as ``null``;
* key order: JavaScript objects list integer-like keys first, in ascending order,
  then the other keys in insertion order.

JavaScript also tells ``undefined`` (absent) from ``null``. The wire models keep that
distinction: a field that is ``None`` is written only if it was set explicitly.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel

_MAX_ARRAY_INDEX = 2**32 - 2


def to_wire(value: Any) -> Any:
    """Return ``value`` as plain JSON data in Pi's camelCase shapes."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="python", by_alias=True)
    if isinstance(value, dict):
        return {key: to_wire(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_wire(item) for item in value]
    return value


def js_number_to_string(value: int | float) -> str:
    """JavaScript's ``String(number)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) < 10**21:
            return str(value)
        value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent_text = text.split("e")
    exponent = int(exponent_text)
    if -7 < exponent < 21:
        digits = mantissa.replace("-", "").replace(".", "")
        sign = "-" if value < 0 else ""
        if exponent < 0:
            return f"{sign}0.{'0' * (-exponent - 1)}{digits}".rstrip("0")
        return f"{sign}{digits}{'0' * (exponent - len(digits) + 1)}"
    return f"{mantissa}e{exponent:+d}"


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def js_key_order(keys: list[str]) -> list[str]:
    """The order in which JavaScript iterates the own string keys of an object."""
    indices = sorted((k for k in keys if _is_array_index(k)), key=int)
    return indices + [k for k in keys if not _is_array_index(k)]


def _encode(value: Any, indent: str | None, depth: int) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return "null" if isinstance(value, float) and not math.isfinite(value) else js_number_to_string(value)
    if isinstance(value, BaseModel):
        return _encode(to_wire(value), indent, depth)
    inner = "" if indent is None else "\n" + indent * (depth + 1)
    outer = "" if indent is None else "\n" + indent * depth
    separator = ":" if indent is None else ": "
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [_encode(item, indent, depth + 1) or "null" for item in value]
        return "[" + inner + ("," + inner).join(items) + outer + "]"
    if isinstance(value, dict):
        parts = []
        for key in js_key_order([str(k) for k in value]):
            item = value[key] if key in value else value[int(key)]
            encoded = _encode(item, indent, depth + 1)
            if encoded is not None:
                parts.append(json.dumps(key, ensure_ascii=False) + separator + encoded)
        if not parts:
            return "{}"
        return "{" + inner + ("," + inner).join(parts) + outer + "}"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps_compact(value: Any) -> str:
    """``JSON.stringify(value)``: compact JSON as JavaScript writes it."""
    return _encode(value, None, 0) or "undefined"


def dumps_pretty(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``."""
    return _encode(value, "  ", 0) or "undefined"
