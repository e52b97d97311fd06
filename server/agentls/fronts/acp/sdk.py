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
from collections.abc import Callable, Iterator
from typing import Any

_ABSENT = object()


@contextlib.contextmanager
def _replaced(
    owner: Any, name: str, value: Any, usable: Callable[[Any], bool] = lambda held: True
) -> Iterator[None]:
    """``name`` of ``owner`` (a key of a dict, else an attribute of the module or class itself) set to
    ``value`` meanwhile, if it is there and what it holds is ``usable``; else nothing changes."""
    keyed = isinstance(owner, dict)
    original = (owner if keyed else vars(owner)).get(name, _ABSENT)
    if original is _ABSENT or not usable(original):
        yield
        return

    def put(held: Any) -> None:
        if keyed:
            owner[name] = held
        else:
            setattr(owner, name, held)

    put(value)
    try:
        yield
    finally:
        put(original)


def _no_docstrings(cls: type[Any], use_inspect: bool = False) -> dict[str, str]:
    return {}


def _import_sdk() -> None:
    from pydantic import TypeAdapter
    from pydantic._internal import _config, _fields

    defaults = getattr(_config, "config_defaults", None)
    with (
        _replaced(_fields, "extract_docstrings_from_cls", _no_docstrings, callable),
        _replaced(defaults if isinstance(defaults, dict) else {}, "defer_build", True),
        # the SDK's two module-level adapters (elicitation's) are of unions, which have no config
        # to say ``defer_build``
        _replaced(TypeAdapter, "_defer_build", property(lambda adapter: True), _is_property),
    ):
        import acp  # noqa: F401  (the SDK's models are made here, once)


def _is_property(held: Any) -> bool:
    return isinstance(held, property)


_import_sdk()
