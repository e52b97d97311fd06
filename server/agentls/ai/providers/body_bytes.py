"""A request body's JSON, each of its messages encoded once while requests keep sending it.

Every turn of a conversation sends the whole transcript again, and encoding it (even with
``orjson``) grew with it: at 1,000 messages it was most of what building a request cost.
The wire messages a provider builds are shared between its requests and never changed
(:mod:`~agentls.ai.providers.wire_forms`; a message marked for one request is a copy), so
the bytes of a message seen in the last request are the bytes it has now. Only the body
around the messages (model, system prompt, tools, options) is encoded every time.
"""

from __future__ import annotations

from typing import Any

from agentls.ai.json_codec import json_bytes

_SLOT = "\x00agentls: the messages go here\x00"
_SLOT_JSON = json_bytes(_SLOT)


class BodyEncoder:
    """Encodes request bodies, keeping the bytes of the last body's messages (by identity)."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Any, bytes]] = {}
        """Each message of the last body (held, so that its id stays its own) and its bytes."""

    def encode(self, body: dict[str, Any]) -> bytes:
        """``body`` as compact JSON: what :func:`json_bytes` makes of it (byte for byte when it needs
        no help from the standard library's encoder, as every body but one with a lone surrogate)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return json_bytes(body)
        kept, self._kept = self._kept, {}
        pieces = [b""]  # before the messages, once it is known
        for message in messages:
            key = id(message)
            entry = kept.get(key)
            if entry is None or entry[0] is not message:
                # a copy of its own size: orjson's bytes keep the buffer it wrote them in (4 KiB
                # or more), which a thousand kept messages made 12 MiB
                entry = (message, memoryview(json_bytes(message)).tobytes())
            self._kept[key] = entry
            pieces += (entry[1], b",")
        frame = json_bytes({**body, "messages": _SLOT})
        before, slot, after = frame.partition(_SLOT_JSON)
        if not slot or _SLOT_JSON in after:  # the slot's text elsewhere in the body: no splicing
            return json_bytes(body)
        pieces[0] = before + b"["
        pieces[-1] = b"]" + after
        return b"".join(pieces)  # one allocation of the body's size: a long session's bodies are MiBs
