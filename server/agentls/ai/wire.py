"""Conversion between Python objects and Pi's JSON wire shapes.

Pi serialises with JavaScript's ``JSON.stringify``: compact, keys in insertion
order, non-ASCII unescaped, and integral numbers without a fraction (``1``, not
``1.0``). Traces and templates must match that byte for byte, so every place that
produces JSON text for the wire goes through :func:`dumps_compact`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel


def to_wire(value: Any) -> Any:
    """Return ``value`` as plain JSON data in Pi's camelCase shapes.

    Pydantic models are dumped by alias with unset optional fields left out (Pi
    leaves ``undefined`` fields out of its JSON); containers are converted
    recursively; everything else is returned as is.
    """
    if isinstance(value, BaseModel):
        return value.model_dump(mode="python", by_alias=True, exclude_none=True)
    if isinstance(value, dict):
        return {key: to_wire(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_wire(item) for item in value]
    return value


def _js_numbers(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_js_numbers(item) for item in value]
    return value


def dumps_compact(value: Any) -> str:
    """``JSON.stringify(value)``: compact JSON as JavaScript writes it."""
    return json.dumps(_js_numbers(to_wire(value)), separators=(",", ":"), ensure_ascii=False)


def dumps_pretty(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``."""
    return json.dumps(_js_numbers(to_wire(value)), indent=2, ensure_ascii=False)
