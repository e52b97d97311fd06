"""The ``Models`` collection: registered providers, their models, and one ``stream_simple`` entry point;
the thinking levels a model supports (pi-ai's ``models.js``).

A :data:`StreamFn` must never raise for a failed request: it returns a stream
whose last event is ``error`` and whose result is an assistant message with
``stop_reason`` ``"error"`` (or ``"aborted"``) and an ``error_message``. The
kernel only survives a raising stream function as a run failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias

from agentls.ai.event_stream import AssistantMessageEventStream
from agentls.ai.events import ErrorEvent
from agentls.ai.secrets import redact
from agentls.ai.types import AssistantMessage, Context, Model, StreamOptions
from agentls.thinking_levels import THINKING_LEVELS

StreamFn: TypeAlias = Callable[
    [Model, Context, StreamOptions | None],
    AssistantMessageEventStream | Awaitable[AssistantMessageEventStream],
]


class Provider(Protocol):
    """What :class:`Models` needs of a provider."""

    provider: str
    models: list[Model]

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream: ...


REQUEST_ABORTED = "Request was aborted"
"""The ``errorMessage`` of a response cut short by the abort signal (pi-ai's wording)."""


def error_message(model: Model, text: str) -> AssistantMessage:
    """The final message of a request that failed before any content: ``stop_reason`` ``"error"``.

    Credentials are redacted from ``text``, as from the failures of a request under way
    (:meth:`~agentls.ai.providers.streaming.ResponseBuilder.fail`).
    """
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="error",
        error_message=redact(text),
    )


def error_stream(model: Model, message: str) -> AssistantMessageEventStream:
    """A stream that fails at once with ``message`` (how a stream function reports errors)."""
    failure = error_message(model, message)
    stream = AssistantMessageEventStream()
    stream.push(ErrorEvent(reason="error", error=failure))
    stream.end(failure)
    return stream


def supported_thinking_levels(model: Model) -> list[str]:
    """The levels ``model`` supports (pi-ai's ``getSupportedThinkingLevels``): only ``off`` without
    reasoning; else every level but those its map sets to ``null``, and ``xhigh`` and ``max`` only
    where its map names them."""
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    return [
        level
        for level in THINKING_LEVELS
        if not (level in level_map and level_map[level] is None)
        and (level not in ("xhigh", "max") or level in level_map)
    ]


def clamp_thinking_level(model: Model, level: str) -> str:
    """``level`` if ``model`` supports it, else the nearest higher level it supports, else the nearest
    lower one (pi-ai's ``clampThinkingLevel``)."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    requested = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[requested:], *reversed(THINKING_LEVELS[:requested])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


class Models:
    """Providers by id, and the models they offer."""

    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}

    def set_provider(self, provider: Provider) -> None:
        self._providers[provider.provider] = provider

    def delete_provider(self, provider_id: str) -> None:
        self._providers.pop(provider_id, None)

    def get_provider(self, provider_id: str) -> Provider | None:
        return self._providers.get(provider_id)

    def get_providers(self) -> list[Provider]:
        return list(self._providers.values())

    def get_models(self, provider_id: str | None = None) -> list[Model]:
        if provider_id is not None:
            entry = self._providers.get(provider_id)
            return list(entry.models) if entry else []
        return [model for entry in self._providers.values() for model in entry.models]

    def get_model(self, provider_id: str, model_id: str) -> Model | None:
        return next((m for m in self.get_models(provider_id) if m.id == model_id), None)

    def stream_simple(
        self, model: Model, context: Context, options: StreamOptions | None = None
    ) -> AssistantMessageEventStream:
        """Stream one response from the provider that owns ``model`` (a :data:`StreamFn`)."""
        provider = self._providers.get(model.provider)
        if provider is None:
            known = ", ".join(sorted(self._providers)) or "none"
            return error_stream(model, f"No provider '{model.provider}' is registered (registered: {known})")
        return provider.stream(model, context, options)
