"""Which models a session can use, and the stream function that reaches them.

Today the offline ``faux`` provider is the one provider: its responses come from
the faux script named by the ``fauxScript`` initialization option or the
``AGENTLS_FAUX_SCRIPT`` environment variable. Each session gets its own faux
provider, so every session replays the script from its first response.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agentls.ai import Model, Models
from agentls.ai.providers.faux import FauxProvider, FauxScript, FauxScriptError
from agentls.session.errors import SessionError

FAUX_SCRIPT_ENV = "AGENTLS_FAUX_SCRIPT"
FAUX_MODEL_IDS = ("faux-1",)


@dataclass
class ProviderSettings:
    faux_script: str | None = None

    def faux_script_path(self) -> str | None:
        return self.faux_script or os.environ.get(FAUX_SCRIPT_ENV) or None


def catalog(settings: ProviderSettings) -> list[Model]:
    """The models that sessions can select."""
    if settings.faux_script_path() is None:
        return []
    return FauxProvider(models=list(FAUX_MODEL_IDS)).models


def session_models(settings: ProviderSettings) -> Models:
    """A fresh ``Models`` collection for one session."""
    models = Models()
    path = settings.faux_script_path()
    if path is not None:
        try:
            script = FauxScript.from_file(Path(path))
        except FauxScriptError as error:
            raise SessionError("noModel", f"The faux script cannot be used: {error}") from error
        models.set_provider(FauxProvider.from_script(script, models=list(FAUX_MODEL_IDS)))
    return models


def resolve_model(models: Models, provider: str | None, model_id: str | None) -> Model:
    """The model a session asked for, or the first one available, with a clear error otherwise."""
    available = models.get_models()
    if not available:
        raise SessionError(
            "noModel",
            "No model provider is configured. For the offline faux provider, name a faux script "
            f"with the 'fauxScript' initialization option or the {FAUX_SCRIPT_ENV} environment variable.",
        )
    if provider is None or model_id is None:
        return available[0]
    model = models.get_model(provider, model_id)
    if model is None:
        names = ", ".join(f"{m.provider}/{m.id}" for m in available)
        raise SessionError("unknownModel", f"Unknown model {provider}/{model_id}; available: {names}")
    return model
