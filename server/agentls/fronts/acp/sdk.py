"""The ACP SDK, imported without the docstrings of its models' attributes, its validators built on use.

The SDK's schema module declares 273 pydantic models with ``use_attribute_docstrings``: to
find each attribute's docstring pydantic reads and parses the class's source, which is most
of the SDK's import (0.2-0.5 s of ``agentls acp``'s start). The docstrings only become
descriptions in JSON schemas, which agentls never makes of these models, so the import skips
that step. And it makes the models as ``defer_build`` ones: each builds its validator when a
message first needs it (a session uses a few dozen of the 273), not at import (0.06 s more), and
so are its two module-level ``TypeAdapter``s (elicitation's, which agentls never uses; ~4 ms).
Each step is done only when pydantic still has what it changes where it looks; otherwise the
SDK imports as it is. The SDK's models are used on the event loop only (a
deferred build is not safe from two threads at once).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def _without_attribute_docstrings() -> Iterator[None]:
    from pydantic._internal import _fields

    original = getattr(_fields, "extract_docstrings_from_cls", None)
    if original is None:
        yield
        return

    def no_docstrings(cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
        return {}

    _fields.extract_docstrings_from_cls = no_docstrings
    try:
        yield
    finally:
        _fields.extract_docstrings_from_cls = original


@contextlib.contextmanager
def _deferred_builds() -> Iterator[None]:
    from pydantic._internal import _config

    defaults = getattr(_config, "config_defaults", None)
    if not isinstance(defaults, dict) or "defer_build" not in defaults:
        yield
        return
    original = defaults["defer_build"]
    defaults["defer_build"] = True
    try:
        yield
    finally:
        defaults["defer_build"] = original


@contextlib.contextmanager
def _deferred_type_adapters() -> Iterator[None]:
    """``TypeAdapter``s made meanwhile build their validators when first used, as deferred models do
    (the SDK makes two at import, for elicitation messages, whose types are unions: a union has no
    config to say ``defer_build``)."""
    from pydantic import TypeAdapter

    original = TypeAdapter.__dict__.get("_defer_build")
    if not isinstance(original, property):
        yield
        return
    TypeAdapter._defer_build = property(lambda self: True)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        TypeAdapter._defer_build = original  # type: ignore[method-assign]


with _without_attribute_docstrings(), _deferred_builds(), _deferred_type_adapters():
    import acp  # noqa: F401  (the SDK's models are made here, once)
