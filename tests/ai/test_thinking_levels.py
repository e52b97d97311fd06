"""The thinking levels: one list, and the levels a model supports (pi-ai's ``getSupportedThinkingLevels``)."""

from __future__ import annotations

from typing import get_args

import pytest
from agentls.ai import THINKING_LEVELS, Model, clamp_thinking_level, supported_thinking_levels
from agentls.ai.providers.catalog import resolve_providers
from agentls.ai.providers.faux import FauxProvider
from agentls.protocol import ThinkingLevelName
from agentls.session.providers import model_listing

UP_TO_HIGH = ["off", "minimal", "low", "medium", "high"]


def catalog_model(provider: str, model_id: str) -> Model:
    specs = resolve_providers(
        None, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, config_file="models.json"
    )
    [spec] = [s for s in specs if s.id == provider]
    [model] = [m for m in spec.models if m.id == model_id]
    return model


def test_the_wire_names_the_same_levels() -> None:
    # protocol.py is imported before agentls.ai (agentls serve answers initialize without it): its own
    # Literal must stay the same list
    assert get_args(ThinkingLevelName) == THINKING_LEVELS


@pytest.mark.parametrize(
    ("provider", "model_id", "levels"),
    [
        ("anthropic", "claude-sonnet-4-6", [*UP_TO_HIGH, "max"]),
        ("anthropic", "claude-opus-5", ["minimal", "low", "medium", "high", "xhigh", "max"]),
        ("anthropic", "claude-haiku-4-5", UP_TO_HIGH),
        ("openai", "gpt-5.1", ["off", "low", "medium", "high"]),
        ("openai", "gpt-4.1", ["off"]),
    ],
)
def test_a_catalog_model_supports_the_levels_its_map_names(
    provider: str, model_id: str, levels: list[str]
) -> None:
    assert supported_thinking_levels(catalog_model(provider, model_id)) == levels


def test_the_faux_model_reasons_without_a_level_map() -> None:
    [faux] = FauxProvider().models
    assert supported_thinking_levels(faux) == UP_TO_HIGH
    assert clamp_thinking_level(faux, "max") == "high"
    assert clamp_thinking_level(catalog_model("openai", "gpt-5.1"), "minimal") == "low"


def test_the_level_map_stays_off_the_listing() -> None:
    model = catalog_model("anthropic", "claude-sonnet-4-6")
    assert model.thinking_level_map == {"max": "max"}
    [listed] = model_listing([model])
    assert "thinkingLevelMap" not in listed and listed["reasoning"] is True
