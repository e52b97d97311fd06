"""The ACP SDK, imported without the docstrings of its models' attributes.

The SDK's schema module declares 273 pydantic models with ``use_attribute_docstrings``: to
find each attribute's docstring pydantic reads and parses the class's source, which is most
of the SDK's import (0.2-0.5 s of ``agentls acp``'s start). The docstrings only become
descriptions in JSON schemas, which agentls never makes of these models, so the import skips
that step (when pydantic still has it where this looks: otherwise it imports as it is).
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


with _without_attribute_docstrings():
    import acp  # noqa: F401  (the SDK's models are made here, once)
