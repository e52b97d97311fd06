"""What ``agent/listModels`` shows of the configured models: no headers, no credentials in URLs."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.ai import to_wire
from agentls.ai.secrets import REDACTED
from agentls.session.policy.providers import ProviderSettings, catalog, model_listing, session_models


def _settings(tmp_path: Path) -> ProviderSettings:
    config = {
        "providers": {
            "proxy": {
                "api": "openai-completions",
                "baseUrl": "https://team:listing-password-0123@llm.example.com/v1",
                "apiKey": "sk-listing-key-0123456789",
                "headers": {"Authorization": "Bearer sk-listing-header-0123"},
                "models": [
                    {"id": "big", "contextWindow": 64000, "headers": {"X-Model-Token": "listing-model-0123"}},
                    {"id": "small"},
                ],
            }
        }
    }
    path = tmp_path / "models.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return ProviderSettings(models_file=path, env={})


def test_listed_models_have_no_headers_and_no_credentials(tmp_path: Path) -> None:
    models = catalog(_settings(tmp_path))
    assert models[0].headers == {"X-Model-Token": "listing-model-0123"}, "the model keeps them for requests"
    listed = model_listing(models)
    assert [(m["provider"], m["id"], m["contextWindow"]) for m in listed] == [
        ("proxy", "big", 64000),
        ("proxy", "small", 128000),
    ]
    assert all("headers" not in m for m in listed)
    assert listed[0]["baseUrl"] == f"https://{REDACTED}@llm.example.com/v1"
    text = json.dumps(listed)
    for secret in ("listing-password", "sk-listing-key", "sk-listing-header", "listing-model"):
        assert secret not in text


def test_the_listing_is_the_wire_form_without_headers(tmp_path: Path) -> None:
    models = session_models(_settings(tmp_path)).get_models()
    for model, listed in zip(models, model_listing(models), strict=True):
        wire = to_wire(model)
        wire.pop("headers", None)
        wire["baseUrl"] = listed["baseUrl"]
        assert listed == wire
