"""Each message's forms for a model, made once: finished messages do not change.

Converting the whole transcript again for every request was most of a long session's
per-turn cost. A provider keeps one :class:`MessageForms`: what each message becomes for
the target model (:func:`~agentls.ai.providers.transform.transform_messages`) and its
wire form. Each request names the settings a conversion depends on (a changed setting
starts afresh) and asks for each message's form. Entries hold their message, so that
its ``id`` is not reused, and are kept only for the messages of the latest request.
The forms are shared between requests: nothing may change them (a request that marks
one, as a prompt-cache breakpoint, marks a copy).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from agentls.ai.json_codec import json_bytes
from agentls.ai.types import Message


class WireForms:
    def __init__(self) -> None:
        self._settings: Hashable = None
        self._entries: dict[int, tuple[Message, Any]] = {}
        self._next: dict[int, tuple[Message, Any]] = {}

    def start(self, settings: Hashable) -> None:
        """A request begins; its conversion depends on ``settings`` and on nothing else."""
        if settings != self._settings:
            self._settings = settings
            self._entries.clear()
        self._next = {}

    def get(self, message: Message, convert: Callable[[Message], Any]) -> Any:
        """``convert(message)``, or what it gave for this very message before."""
        key = id(message)
        entry = self._entries.get(key)
        if entry is None or entry[0] is not message:
            entry = (message, convert(message))
        self._next[key] = entry
        return entry[1]

    def done(self) -> None:
        """The request is built: forget the messages it did not have."""
        self._entries, self._next = self._next, {}


class BodyEncoder:
    """A request body as JSON, reusing the bytes of the messages' wire forms from the request before.

    Encoding a long transcript again for every request was a good part of a turn's cost.
    A form kept in :class:`WireForms` is the same object from one request to the next and
    is never changed, so its JSON is too; other dicts (a user message grouping tool
    results, a form copied to carry a cache mark) are encoded afresh, their kept parts
    reused. The ``messages`` go last in the body.
    """

    def __init__(self) -> None:
        self._bytes: dict[int, tuple[Any, bytes]] = {}
        self._next: dict[int, tuple[Any, bytes]] = {}

    def encode(self, payload: dict[str, Any]) -> bytes:
        """The body; a payload an ``on_payload`` hook returned must go to :func:`json_bytes` instead
        (the hook may have changed forms in place)."""
        messages = payload.get("messages")
        if not isinstance(messages, list):
            return json_bytes(payload)
        head = json_bytes({key: value for key, value in payload.items() if key != "messages"})
        listed = b",".join(self._message(message) for message in messages)
        self._bytes, self._next = self._next, {}
        separator = b"," if head != b"{}" else b""
        return head[:-1] + separator + b'"messages":[' + listed + b"]}"

    def _message(self, message: Any) -> bytes:
        kept = self._bytes.get(id(message))
        if kept is not None and kept[0] is message:
            self._next[id(message)] = kept
            return kept[1]
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return self._kept(message)
        rest = json_bytes({key: value for key, value in message.items() if key != "content"})
        blocks = b",".join(self._kept(block) for block in content)
        separator = b"," if rest != b"{}" else b""
        encoded = rest[:-1] + separator + b'"content":[' + blocks + b"]}"
        self._next[id(message)] = (message, encoded)
        return encoded

    def _kept(self, value: Any) -> bytes:
        kept = self._bytes.get(id(value))
        if kept is None or kept[0] is not value:
            kept = (value, json_bytes(value))
        self._next[id(value)] = kept
        return kept[1]


class MessageForms:
    """A provider's forms of messages: ``target`` for the model, ``wire`` for its API, ``body`` as JSON."""

    def __init__(self) -> None:
        self.target = WireForms()
        self.wire = WireForms()
        self.body = BodyEncoder()


def request_body(forms: MessageForms, payload: dict[str, Any], hooked: bool) -> bytes:
    """The JSON of a request: from the kept forms, unless an ``on_payload`` hook had the payload."""
    return json_bytes(payload) if hooked else forms.body.encode(payload)
