"""``PROVIDER/ID``, a model reference as text, read with the standard library only: the command line
checks ``--model`` before it imports :mod:`agentls.protocol` (whose :class:`~agentls.protocol.ModelRef`
reads it with this)."""

from __future__ import annotations


def split_model_ref(text: str) -> tuple[str, str]:
    """``(provider, id)`` of ``PROVIDER/ID`` (the id may hold ``/``); ``ValueError`` if a part is missing."""
    provider, _, model_id = text.partition("/")
    if not provider or not model_id:
        raise ValueError(f"{text!r} is not PROVIDER/ID")
    return provider, model_id
