"""The model catalog: providers, their models and their settings.

The built-in catalog (``catalog.json`` beside this module, taken from pi-ai 0.85.0's)
and a user's ``models.json`` have one format::

    {"providers": {
        "ollama": {"api": "openai-completions", "baseUrl": "http://localhost:11434/v1",
                   "compat": {"maxTokensField": "max_tokens"},
                   "models": [{"id": "qwen3:8b", "reasoning": true, "contextWindow": 40960}]},
        "anthropic": {"baseUrl": "http://localhost:8080", "maxRetries": 5}}}

A user entry with the id of a built-in provider changes what it sets (models with
the id of a built-in model replace it, others are added); any other id defines a
new provider, which needs ``api`` and ``baseUrl``. Names are camelCase; unknown
names are errors, so a typo is reported rather than ignored.

:func:`resolve_providers` turns the merged entries into :class:`ProviderSpec`: the
concrete settings one provider object needs (API key and base URL read from the
environment where the entry names a variable, retry policy, timeouts, models).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from agentls.ai.local_files import read_json_file
from agentls.ai.providers.retry import RetryPolicy, Timeouts
from agentls.ai.secrets import CredentialError, clean_credential
from agentls.ai.types import Model, ModelCost, StreamOptions
from agentls.thinking_levels import ModelThinkingLevel

ANTHROPIC_MESSAGES = "anthropic-messages"
OPENAI_COMPLETIONS = "openai-completions"
Api: TypeAlias = Literal["anthropic-messages", "openai-completions"]
LevelName: TypeAlias = ModelThinkingLevel
D = TypeVar("D")


class _Config(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Compat(_Config):
    """Per-server differences, by setting rather than by fork; ``None`` means "the provider's default".

    The first group applies to ``anthropic-messages``, the second to ``openai-completions``
    (whose defaults depend on the server, see :mod:`agentls.ai.providers.openai_compat`).
    """

    force_adaptive_thinking: bool | None = None
    """Thinking by effort (``thinking: {type: "adaptive"}``) instead of a token budget."""
    supports_temperature: bool | None = None
    supports_eager_tool_input_streaming: bool | None = None
    supports_long_cache_retention: bool | None = None
    supports_cache_control_on_tools: bool | None = None
    allow_empty_signature: bool | None = None

    supports_store: bool | None = None
    supports_developer_role: bool | None = None
    supports_reasoning_effort: bool | None = None
    supports_usage_in_streaming: bool | None = None
    """Send ``stream_options: {include_usage: true}`` (the usage comes in the last chunk)."""
    supports_finish_reason: bool | None = None
    supports_tool_choice: bool | None = None
    supports_strict_mode: bool | None = None
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None
    requires_tool_result_name: bool | None = None
    requires_assistant_after_tool_result: bool | None = None
    requires_thinking_as_text: bool | None = None
    requires_reasoning_content_on_assistant_messages: bool | None = None
    thinking_format: Literal["openai", "openrouter", "deepseek", "qwen", "qwen-chat-template"] | None = None
    """How reasoning is asked for: ``reasoning_effort``, OpenRouter's ``reasoning``, DeepSeek's
    ``thinking``, Qwen's ``enable_thinking`` or its chat template's ``enable_thinking``."""

    def apply_to(self, defaults: D) -> D:
        """A provider's resolved settings (a dataclass): its ``defaults`` with the settings given here."""
        given = {f.name: value for f in fields(defaults) if (value := getattr(self, f.name)) is not None}  # type: ignore[arg-type]
        return dataclasses.replace(defaults, **given)  # type: ignore[type-var]

    def over(self, base: Compat | None) -> Compat:
        """These settings over ``base``'s."""
        if base is None:
            return self
        return base.model_copy(update={name: getattr(self, name) for name in self.model_fields_set})


class CostConfig(_Config):
    input: float = Field(default=0, ge=0)
    output: float = Field(default=0, ge=0)
    cache_read: float = Field(default=0, ge=0)
    cache_write: float = Field(default=0, ge=0)


class ModelConfig(_Config):
    id: str = Field(min_length=1)
    name: str | None = None
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=lambda: ["text"])
    cost: CostConfig = Field(default_factory=CostConfig)
    """Dollars per million tokens."""
    context_window: int = Field(default=128_000, gt=0)
    max_tokens: int = Field(default=16_384, gt=0)
    headers: dict[str, str] | None = None
    thinking_level_map: dict[LevelName, str | None] | None = None
    """What each thinking level is called on the wire; ``null`` for a level the model lacks."""
    compat: Compat | None = None


class ProviderConfig(_Config):
    api: Api | None = None
    name: str | None = None
    base_url: str | None = Field(default=None, min_length=1)
    base_url_env: str | None = None
    """An environment variable that, when set, overrides ``baseUrl``."""
    api_key: str | None = None
    api_key_env: str | None = None
    """The environment variable holding the API key (``apiKey`` wins when both are given)."""
    headers: dict[str, str] | None = None
    compat: Compat | None = None
    max_retries: int | None = Field(default=None, ge=0)
    retry_base_delay_ms: int | None = Field(default=None, ge=0)
    max_retry_delay_ms: int | None = Field(default=None, ge=0)
    connect_timeout_ms: int | None = Field(default=None, gt=0)
    idle_timeout_ms: int | None = Field(default=None, gt=0)
    models: list[ModelConfig] = Field(default_factory=list)

    def over(self, base: ProviderConfig) -> ProviderConfig:
        """This (user) entry over a built-in one."""
        update: dict[str, Any] = {name: getattr(self, name) for name in self.model_fields_set}
        if self.compat is not None:
            update["compat"] = self.compat.over(base.compat)
        if self.headers is not None:
            update["headers"] = {**(base.headers or {}), **self.headers}
        if "models" in self.model_fields_set:
            own = {m.id: m for m in self.models}
            models = [own.pop(m.id, m) for m in base.models]
            update["models"] = models + list(own.values())
        return base.model_copy(update=update)


class ModelsFile(_Config):
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)


class CatalogError(ValueError):
    """A models file is unreadable or invalid; the message names the file and the field."""


def parse_models_file(data: Any, source: str) -> ModelsFile:
    try:
        return ModelsFile.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"]) or "(top level)"
            problems.append(f"{where}: {item['msg']}")
        raise CatalogError(f"{source} is invalid: " + "; ".join(problems)) from None


def load_models_file(path: Path) -> ModelsFile | None:
    """The user's models file, ``None`` if there is none."""
    try:
        data = read_json_file(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CatalogError(f"cannot read {path}: {error.strerror}") from error
    except ValueError as error:
        raise CatalogError(f"{path} is not valid JSON: {error}") from error
    return parse_models_file(data, str(path))


@cache
def builtin_catalog() -> ModelsFile:
    text = resources.files(__package__).joinpath("catalog.json").read_text(encoding="utf-8")
    return parse_models_file(json.loads(text), "the built-in catalog")


def merge_catalogs(builtin: ModelsFile, user: ModelsFile | None) -> dict[str, ProviderConfig]:
    """Every provider: the user's first, in their order, then the remaining built-in ones."""
    merged: dict[str, ProviderConfig] = {}
    for provider_id, entry in (user.providers if user else {}).items():
        base = builtin.providers.get(provider_id)
        merged[provider_id] = entry.over(base) if base is not None else entry
    for provider_id, entry in builtin.providers.items():
        merged.setdefault(provider_id, entry)
    return merged


# --- what a provider object is built from ---------------------------------------------------


@dataclass(frozen=True)
class ProviderSpec:
    id: str
    api: Api
    name: str
    base_url: str
    api_key: str | None
    key_hint: str
    """How to give this provider a key, for error messages: "set ANTHROPIC_API_KEY or ..."."""
    key_source: str | None = None
    """Where ``api_key`` was read from: "the environment variable ANTHROPIC_API_KEY", or the models
    file's field."""
    headers: dict[str, str] = field(default_factory=dict)
    compat: Compat = field(default_factory=Compat)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeouts: Timeouts = field(default_factory=Timeouts)
    models: list[Model] = field(default_factory=list)
    model_configs: dict[str, ModelConfig] = field(default_factory=dict)
    builtin: bool = False
    credential_error: str | None = None
    """Why the key or a header value cannot be sent (naming its field or variable, not its value);
    every request then fails with this message."""

    def compat_for(self, model: Model) -> Compat:
        """The provider's compat settings with the model's over them."""
        config = self.model_configs.get(model.id)
        own = config.compat if config is not None else None
        return own.over(self.compat) if own is not None else self.compat

    def thinking_level_map(self, model: Model) -> dict[str, str | None]:
        return dict(model.thinking_level_map or {})

    @property
    def usable(self) -> bool:
        """Listed for sessions: defined by the user, or built in with an API key (one that is wrong too,
        so that a request reports what is wrong with it)."""
        return not self.builtin or self.api_key is not None or self.credential_error is not None

    def refused_key(self, options: StreamOptions | None) -> str:
        """What an API that refuses the request's credentials (401) is told about them: where the
        key sent was read from, or how to give one when none was."""
        if options and options.api_key:
            return f"The API key of provider '{self.id}' given with the request was refused."
        if self.key_source is not None:
            return f"The API key of provider '{self.id}', read from {self.key_source}, was refused: check it."
        return f"No API key was sent to provider '{self.id}': {self.key_hint}."

    def credentials(self, model: Model, options: StreamOptions | None) -> tuple[str | None, dict[str, str]]:
        """The API key and extra headers of one request: the options' over the model's over the provider's.

        Raises :class:`CredentialError` when this provider's configuration has a bad value, or the
        options have one (they are cleaned as the configuration's are).
        """
        if self.credential_error is not None:
            raise CredentialError(self.credential_error)
        given_key = options.api_key if options else None
        api_key = clean_credential(given_key, "The API key of the request options") if given_key else None
        headers = {**self.headers, **(model.headers or {})}
        for name, value in ((options.headers if options else None) or {}).items():
            headers[name] = clean_credential(value, f'Header "{name}" of the request options')
        return api_key or self.api_key, headers


def _model(provider_id: str, api: Api, base_url: str, config: ModelConfig, headers: dict[str, str]) -> Model:
    model = Model(
        id=config.id,
        name=config.name or config.id,
        api=api,
        provider=provider_id,
        base_url=base_url,
        reasoning=config.reasoning,
        input=list(config.input),
        cost=ModelCost(**config.cost.model_dump()),
        context_window=config.context_window,
        max_tokens=config.max_tokens,
    )
    if config.thinking_level_map:
        model.thinking_level_map = dict(config.thinking_level_map)
    if headers:
        model.headers = headers
    return model


class _Credentials:
    """A provider's key and header values, cleaned (:func:`clean_credential`), with every problem found."""

    def __init__(self, provider_id: str, config_file: str) -> None:
        self.provider_id = provider_id
        self.config_file = config_file
        self.problems: list[str] = []
        self.key_source: str | None = None
        """Where the key :meth:`api_key` found was read from."""

    def _in_file(self, field: str) -> str:
        return f"{self.config_file} (providers.{self.provider_id}.{field})"

    def clean(self, value: str, source: str) -> str | None:
        try:
            return clean_credential(value, source)
        except CredentialError as error:
            self.problems.append(str(error))
            return None

    def api_key(self, entry: ProviderConfig, env: Mapping[str, str]) -> str | None:
        """``apiKey``, else the variable ``apiKeyEnv`` names; blank counts as not given."""
        if entry.api_key and entry.api_key.strip():
            value, self.key_source = entry.api_key, self._in_file("apiKey")
        elif entry.api_key_env and (env.get(entry.api_key_env) or "").strip():
            value, self.key_source = env[entry.api_key_env], f"the environment variable {entry.api_key_env}"
        else:
            return None
        return self.clean(value, f"The API key in {self.key_source}")

    def headers(self, headers: dict[str, str] | None, field: str) -> dict[str, str]:
        cleaned: dict[str, str] = {}
        for name, value in (headers or {}).items():
            clean = self.clean(value, f'Header "{name}" in {self._in_file(field)}')
            if clean is not None:
                cleaned[name] = clean
        return cleaned


def resolve_provider(
    provider_id: str, entry: ProviderConfig, env: Mapping[str, str], *, builtin: bool, config_file: str
) -> ProviderSpec:
    """The settings of one provider, with the environment read; raises :class:`CatalogError`.

    The key and the header values lose their surrounding whitespace (a pasted key often ends
    with a newline); one that still cannot be sent sets ``credential_error`` rather than
    raising, so that only this provider's requests fail, saying which field is wrong.
    """
    where = f"{config_file}: providers.{provider_id}"
    if entry.api is None:
        raise CatalogError(
            f"{where}.api is missing: say which API it speaks ({ANTHROPIC_MESSAGES} or {OPENAI_COMPLETIONS})"
        )
    base_url = (env.get(entry.base_url_env) if entry.base_url_env else None) or entry.base_url
    if base_url is None:
        raise CatalogError(f"{where}.baseUrl is missing: the URL of the server's API")
    credentials = _Credentials(provider_id, config_file)
    api_key = credentials.api_key(entry, env)
    headers = credentials.headers(entry.headers, "headers")
    model_headers = [credentials.headers(m.headers, f'models["{m.id}"].headers') for m in entry.models]
    hints = [f"set {entry.api_key_env}"] if entry.api_key_env else []
    hints.append(f'add "apiKey" to providers.{provider_id} in {config_file}')
    retry_defaults = RetryPolicy()
    timeout_defaults = Timeouts()
    base_url = base_url.rstrip("/")
    return ProviderSpec(
        id=provider_id,
        api=entry.api,
        name=entry.name or provider_id,
        base_url=base_url,
        api_key=api_key,
        key_hint=" or ".join(hints),
        key_source=credentials.key_source,
        headers=headers,
        compat=entry.compat or Compat(),
        retry=RetryPolicy(
            max_retries=_given(entry.max_retries, retry_defaults.max_retries),
            base_delay_ms=_given(entry.retry_base_delay_ms, retry_defaults.base_delay_ms),
            max_delay_ms=_given(entry.max_retry_delay_ms, retry_defaults.max_delay_ms),
        ),
        timeouts=Timeouts(
            connect_ms=_given(entry.connect_timeout_ms, timeout_defaults.connect_ms),
            idle_ms=_given(entry.idle_timeout_ms, timeout_defaults.idle_ms),
        ),
        models=[
            _model(provider_id, entry.api, base_url, m, own)
            for m, own in zip(entry.models, model_headers, strict=True)
        ],
        model_configs={m.id: m for m in entry.models},
        builtin=builtin,
        credential_error="; ".join(credentials.problems) or None,
    )


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


def resolve_providers(
    user: ModelsFile | None, env: Mapping[str, str], *, config_file: str
) -> list[ProviderSpec]:
    """Every provider of the built-in catalog and the user's file, in order (see :func:`merge_catalogs`)."""
    builtin = builtin_catalog()
    return [
        resolve_provider(
            provider_id,
            entry,
            env,
            builtin=provider_id in builtin.providers,
            config_file=config_file,
        )
        for provider_id, entry in merge_catalogs(builtin, user).items()
    ]
