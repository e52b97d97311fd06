"""The model catalog, the user's ``models.json``, and which providers a session gets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from agentls.ai.providers.anthropic import AnthropicProvider
from agentls.ai.providers.catalog import builtin_catalog, resolve_providers
from agentls.ai.providers.openai_compat import OpenAICompatProvider
from agentls.session.errors import SessionError
from agentls.session.policy.providers import ProviderSettings, catalog, resolve_model, session_models

from tests.conftest import PROJECT_ROOT

OLLAMA = {
    "api": "openai-completions",
    "baseUrl": "http://localhost:11434/v1",
    "compat": {"maxTokensField": "max_tokens", "supportsToolChoice": False},
    "idleTimeoutMs": 600000,
    "models": [{"id": "qwen3:8b", "reasoning": True, "contextWindow": 40960, "maxTokens": 8192}],
}


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


def test_the_builtin_catalog() -> None:
    providers = builtin_catalog().providers
    assert list(providers) == ["anthropic", "openai"]
    anthropic = providers["anthropic"]
    assert anthropic.api == "anthropic-messages" and anthropic.api_key_env == "ANTHROPIC_API_KEY"
    first = anthropic.models[0]
    assert first.id == "claude-sonnet-4-6" and first.reasoning and first.input == ["text", "image"]
    assert (
        first.cost.input == 3
        and first.cost.output == 15
        and first.context_window > 0
        and first.max_tokens > 0
    )
    assert (
        providers["openai"].api == "openai-completions"
        and providers["openai"].base_url == "https://api.openai.com/v1"
    )


def test_builtin_providers_are_usable_only_with_a_key() -> None:
    specs = {s.id: s for s in resolve_providers(None, {}, config_file="models.json")}
    assert not specs["anthropic"].usable and not specs["openai"].usable
    specs = {
        s.id: s
        for s in resolve_providers(
            None, {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://proxy/"}, config_file="m"
        )
    }
    assert specs["anthropic"].usable and specs["anthropic"].api_key == "k"
    assert specs["anthropic"].base_url == "http://proxy"
    assert all(m.base_url == "http://proxy" for m in specs["anthropic"].models)


def test_a_user_file_adds_providers_and_changes_builtin_ones(tmp_path: Path) -> None:
    models_file = write(
        tmp_path / "models.json",
        {
            "providers": {
                "ollama": OLLAMA,
                "anthropic": {
                    "apiKey": "literal",
                    "maxRetries": 5,
                    "headers": {"x-team": "a"},
                    "models": [
                        {
                            "id": "claude-sonnet-4-6",
                            "name": "Sonnet (proxy)",
                            "reasoning": True,
                            "maxTokens": 1000,
                        },
                        {"id": "claude-next", "reasoning": True},
                    ],
                },
            }
        },
    )
    settings = ProviderSettings(models_file=models_file, env={})
    specs = {s.id: s for s in settings.provider_specs()}
    assert list(specs) == ["ollama", "anthropic", "openai"]
    ollama, anthropic = specs["ollama"], specs["anthropic"]
    assert ollama.usable and ollama.api_key is None and ollama.timeouts.idle_ms == 600000
    assert ollama.models[0].provider == "ollama" and ollama.models[0].base_url == "http://localhost:11434/v1"
    assert anthropic.usable and anthropic.api_key == "literal" and anthropic.retry.max_retries == 5
    assert anthropic.headers == {"x-team": "a"}
    ids = [m.id for m in anthropic.models]
    assert (
        ids[0] == "claude-sonnet-4-6"
        and ids[-1] == "claude-next"
        and len(ids) == len(builtin_catalog().providers["anthropic"].models) + 1
    )
    assert anthropic.models[0].name == "Sonnet (proxy)" and anthropic.models[0].max_tokens == 1000
    assert anthropic.compat_for(anthropic.models[1]).force_adaptive_thinking is True, "built-in compat kept"

    models = session_models(settings)
    assert [p.provider for p in models.get_providers()] == ["ollama", "anthropic"]
    assert isinstance(models.get_provider("ollama"), OpenAICompatProvider)
    assert isinstance(models.get_provider("anthropic"), AnthropicProvider)
    assert resolve_model(models, None, None).id == "qwen3:8b", "the first model is the default"
    assert [f"{m.provider}/{m.id}" for m in catalog(settings)][:2] == [
        "ollama/qwen3:8b",
        "anthropic/claude-sonnet-4-6",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{oops", "is not valid JSON"),
        (
            {"providers": {"ollama": {**OLLAMA, "models": [{"id": "x", "contextWindow": 0}]}}},
            "providers.ollama.models.0.contextWindow: Input should be greater than 0",
        ),
        (
            {"providers": {"ollama": {**OLLAMA, "compat": {"maxTokenField": "max_tokens"}}}},
            "providers.ollama.compat.maxTokenField: Extra inputs are not permitted",
        ),
        ({"providers": {"ollama": {"baseUrl": "http://x", "models": []}}}, "providers.ollama.api is missing"),
        (
            {"providers": {"lm": {"api": "openai-completions", "models": []}}},
            "providers.lm.baseUrl is missing",
        ),
        ({"provider": {}}, "provider: Extra inputs are not permitted"),
    ],
)
def test_a_bad_models_file_names_the_file_and_the_field(
    tmp_path: Path, content: object, message: str
) -> None:
    models_file = write(tmp_path / "models.json", content)
    settings = ProviderSettings(models_file=models_file, env={})
    for attempt in (lambda: session_models(settings), lambda: catalog(settings)):
        with pytest.raises(SessionError) as caught:
            attempt()
        assert caught.value.kind == "noModel"
        assert str(models_file) in str(caught.value) and message in str(caught.value)


def test_with_nothing_configured_the_error_says_what_would_fix_it(tmp_path: Path) -> None:
    settings = ProviderSettings(models_file=tmp_path / "models.json", env={})
    assert catalog(settings) == []
    with pytest.raises(SessionError) as caught:
        session_models(settings)
    message = str(caught.value)
    assert caught.value.kind == "noModel"
    for fix in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        str(tmp_path / "models.json"),
        "fauxScript",
        "AGENTLS_FAUX_SCRIPT",
    ):
        assert fix in message


def test_faux_comes_first_and_a_builtin_model_without_a_key_says_so(tmp_path: Path) -> None:
    script = write(tmp_path / "faux.json", {"responses": []})
    settings = ProviderSettings(
        faux_script=str(script), models_file=tmp_path / "models.json", env={"OPENAI_API_KEY": "k"}
    )
    models = session_models(settings)
    assert [p.provider for p in models.get_providers()] == ["faux", "openai"]
    assert resolve_model(models, None, None).provider == "faux"
    assert resolve_model(models, "openai", "gpt-4.1").id == "gpt-4.1"
    with pytest.raises(SessionError) as caught:
        resolve_model(models, "anthropic", "claude-sonnet-4-6")
    assert caught.value.kind == "noModel" and "set ANTHROPIC_API_KEY" in str(caught.value)
    with pytest.raises(SessionError) as caught:
        resolve_model(models, "anthropic", "claude-nope")
    assert caught.value.kind == "unknownModel" and "faux/faux-1" in str(caught.value)


def test_the_documented_example_is_a_valid_models_file(tmp_path: Path) -> None:
    readme = (PROJECT_ROOT / "docs" / "providers.md").read_text(encoding="utf-8")
    (example,) = [b for b in re.findall(r"```json\n(.*?)```", readme, re.DOTALL) if '"providers"' in b]
    settings = ProviderSettings(
        models_file=write(tmp_path / "models.json", example),
        env={"OPENROUTER_API_KEY": "k", "ANTHROPIC_API_KEY": "a"},
    )
    specs = {s.id: s for s in settings.provider_specs()}
    assert list(specs) == ["ollama", "openrouter", "anthropic", "openai"]
    assert specs["openrouter"].api_key == "k" and specs["anthropic"].retry.max_retries == 5
    assert [p.provider for p in session_models(settings).get_providers()] == [
        "ollama",
        "openrouter",
        "anthropic",
    ]
