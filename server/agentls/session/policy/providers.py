"""Which models a session can use, and the providers that reach them.

A session's models come from these providers, in this order (the first model is the
default when a session names none):

1. ``faux``, when a faux script is named (``fauxScript`` initialization option or
   ``AGENTLS_FAUX_SCRIPT``): offline and scripted. Each session gets its own faux
   provider, so every session replays the script from its first response.
2. The providers of ``models.json`` in the data directory, in the file's order.
3. The built-in providers of the catalog (Anthropic, OpenAI) that have an API key
   (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, or ``apiKey`` in ``models.json``).

``models.json`` is read again for each new session, so edits apply without a
restart. Provider modules (and ``httpx``) are not imported when the server starts:
:func:`warm_up` imports those of the configured providers in the background once a
client has initialized (or a session needs them first).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.ai import Model, Models, Provider
from agentls.ai.providers.catalog import (
    ANTHROPIC_MESSAGES,
    CatalogError,
    ProviderSpec,
    builtin_catalog,
    load_models_file,
    resolve_providers,
)
from agentls.ai.providers.faux import FauxProvider, FauxScript, FauxScriptError
from agentls.ai.secrets import redact
from agentls.protocol import FAUX_SCRIPT_ENV
from agentls.session.errors import SessionError

logger = logging.getLogger(__name__)

FAUX_MODEL_IDS = ("faux-1",)
MODELS_FILE = "models.json"


@dataclass
class ProviderSettings:
    faux_script: str | None = None
    models_file: Path | None = None
    """The user's ``models.json`` (in the data directory); ``None`` for none."""
    env: Mapping[str, str] | None = None
    """Where API keys and base URLs are read from; ``None`` for ``os.environ``."""

    def faux_script_path(self) -> str | None:
        return self.faux_script or os.environ.get(FAUX_SCRIPT_ENV) or None

    def provider_specs(self) -> list[ProviderSpec]:
        """Every provider of the catalog and the user's file, usable or not."""
        config_file = str(self.models_file) if self.models_file else MODELS_FILE
        try:
            user = load_models_file(self.models_file) if self.models_file else None
            env = os.environ if self.env is None else self.env
            return resolve_providers(user, env, config_file=config_file)
        except CatalogError as error:
            raise SessionError("noModel", f"The model configuration cannot be used: {error}") from error


def nothing_configured(models_file: Path | None) -> str:
    where = str(models_file) if models_file else f"{MODELS_FILE} in the data directory"
    keys = " or ".join(
        entry.api_key_env for entry in builtin_catalog().providers.values() if entry.api_key_env
    )
    return (
        f"No model provider is configured. Set {keys} for a built-in provider, define a provider in "
        f"{where} (see docs/providers.md), or, for the offline faux provider, name a faux script with the "
        f"'fauxScript' initialization option or the {FAUX_SCRIPT_ENV} environment variable."
    )


def _provider(spec: ProviderSpec) -> Provider:
    """The provider object of a spec; its module is imported only now."""
    if spec.api == ANTHROPIC_MESSAGES:
        from agentls.ai.providers.anthropic import AnthropicProvider

        return AnthropicProvider(spec)
    from agentls.ai.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(spec)


WARM_UP_IDLE_SECONDS = 0.05
"""How long a front has nothing to do before it calls :func:`warm_up`: a client's next message sent at
once, such as a new session's after ``initialize``, comes first."""


def warm_up(settings: ProviderSettings) -> None:
    """Import the modules the configured providers need, in a daemon thread, now.

    Done on the first request, the imports (``httpx`` and its TLS stack) and the SSL
    context delayed the first streamed token. A broken configuration is reported by the
    session that uses it, not here.
    """

    def load() -> None:
        try:
            specs = [spec for spec in settings.provider_specs() if spec.usable]
            for spec in specs:
                _provider(spec)
            if specs:
                from agentls.http_warm_up import warm_up_http

                warm_up_http()
        except Exception as error:
            logger.debug("warming up the providers failed: %s", error)

    threading.Thread(target=load, name="agentls-warm-up", daemon=True).start()


def catalog(settings: ProviderSettings) -> list[Model]:
    """The models that sessions can select (none, rather than an error, when nothing is configured)."""
    models = list(FauxProvider(models=list(FAUX_MODEL_IDS)).models) if settings.faux_script_path() else []
    for spec in settings.provider_specs():
        if spec.usable:
            models.extend(spec.models)
    return models


def model_listing(models: Iterable[Model]) -> list[dict[str, Any]]:
    """Models as clients see them (``agent/listModels``): the wire form without their ``headers``,
    which may carry credentials, and with any credential in the base URL redacted; without their
    ``thinkingLevelMap`` too, a provider's detail that protocol.md does not list."""
    return [
        {
            **model.model_dump(by_alias=True, exclude={"headers", "thinking_level_map"}),
            "baseUrl": redact(model.base_url),
        }
        for model in models
    ]


def session_models(settings: ProviderSettings) -> Models:
    """A fresh ``Models`` collection for one session; raises ``noModel`` when it would be empty."""
    models = Models()
    path = settings.faux_script_path()
    if path is not None:
        try:
            script = FauxScript.from_file(Path(path))
        except FauxScriptError as error:
            raise SessionError("noModel", f"The faux script cannot be used: {error}") from error
        models.set_provider(FauxProvider.from_script(script, models=list(FAUX_MODEL_IDS)))
    for spec in settings.provider_specs():
        if spec.usable and spec.id not in {p.provider for p in models.get_providers()}:
            models.set_provider(_provider(spec))
    if not models.get_models():
        raise SessionError("noModel", nothing_configured(settings.models_file))
    return models


def resolve_model(models: Models, provider: str | None, model_id: str | None) -> Model:
    """The model a session asked for, or the first one available, with a clear error otherwise."""
    available = models.get_models()
    if not available:
        raise SessionError("noModel", nothing_configured(None))
    if provider is None or model_id is None:
        return available[0]
    model = models.get_model(provider, model_id)
    if model is not None:
        return model
    builtin = builtin_catalog().providers.get(provider)
    if (
        builtin is not None
        and builtin.api_key_env
        and models.get_provider(provider) is None
        and any(m.id == model_id for m in builtin.models)
    ):
        raise SessionError(
            "noModel",
            f"Model {provider}/{model_id} needs an API key: set {builtin.api_key_env} or add "
            f'"apiKey" to providers.{provider} in {MODELS_FILE} in the data directory.',
        )
    names = ", ".join(f"{m.provider}/{m.id}" for m in available)
    raise SessionError("unknownModel", f"Unknown model {provider}/{model_id}; available: {names}")
