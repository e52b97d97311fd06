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

from agentls.ai.types import Message


class WireForms:
    def __init__(self) -> None:
        self._settings: Hashable = None
        self._entries: dict[int, tuple[Message, Any]] = {}
        self._next: dict[int, tuple[Message, Any]] = {}
        self.resume: Any = None
        """What the conversion left for the next request to go on from (its own business)."""

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


class MessageForms:
    """A provider's forms of messages: ``target`` for the model, ``wire`` for its API."""

    def __init__(self) -> None:
        self.target = WireForms()
        self.wire = WireForms()


class WirePrefix:
    """A request's first messages and what a conversion made of them, for a next request that begins
    with them (the transform's target forms, a provider's wire messages)."""

    def __init__(
        self, settings: Hashable, messages: list[Message], ids: list[int], forms: list[Any], state: Any = None
    ) -> None:
        self.settings = settings
        self.messages = messages
        """Kept alive, so that their ids stay theirs."""
        self.ids = ids
        self.forms = forms
        self.state = state
        """What the conversion knew at that point (the converter's own business)."""

    def matches(self, settings: Hashable, ids: list[int]) -> bool:
        """Whether a request with these settings and message ids begins with these messages."""
        return settings == self.settings and len(ids) >= len(self.ids) and ids[: len(self.ids)] == self.ids
