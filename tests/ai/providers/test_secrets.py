"""Credentials stay inside the process: cleaning keys and header values, and redacting error texts.

The registry of :mod:`agentls.ai.secrets` is global, so every test uses values of its own.
The provider tests run the real providers (httpx, the ``anthropic`` SDK) against a
:class:`MockServer` on 127.0.0.1.
"""

from __future__ import annotations

import logging

import pytest
from agentls.ai import StreamOptions
from agentls.ai.providers.catalog import (
    ProviderConfig,
    ProviderSpec,
    parse_models_file,
    resolve_provider,
    resolve_providers,
)
from agentls.ai.secrets import (
    REDACTED,
    CredentialError,
    RedactingFilter,
    clean_credential,
    redact,
    register,
)

from tests.ai.providers.helpers import (
    a_end,
    a_reply,
    a_start,
    a_text,
    anthropic_provider,
    collect,
    context,
    o_chunk,
    openai_provider,
)
from tests.ai.providers.mock_http import MockServer, Reply, json_reply, openai_sse

# --- redact ---------------------------------------------------------------------------------


def test_a_registered_secret_is_redacted_wherever_it_appears() -> None:
    register("sk-unit-plain-0123456789")
    assert redact("key sk-unit-plain-0123456789 refused") == f"key {REDACTED} refused"
    assert redact("sk-unit-plain-0123456789sk-unit-plain-0123456789") == REDACTED * 2


def test_the_repr_forms_of_a_secret_are_redacted() -> None:
    secret = "sk-unit-repr-first\nsecond-part-4242"
    register(secret)
    texts = [
        f"Illegal header value {secret.encode()!r}",  # h11: b'sk-...\\nsecond...'
        f"bad value {secret!r}",
        secret,
        '{"key": "sk-unit-repr-first\\nsecond-part-4242"}',  # JSON
    ]
    for text in texts:
        redacted = redact(text)
        assert "sk-unit-repr-first" not in redacted and "second-part-4242" not in redacted, redacted
        assert REDACTED in redacted


def test_each_line_of_a_secret_is_redacted_on_its_own() -> None:
    register("sk-unit-lines-first\nsk-unit-lines-second")
    assert redact("first: sk-unit-lines-first.") == f"first: {REDACTED}."
    assert redact("then sk-unit-lines-second") == f"then {REDACTED}"


def test_surrounding_whitespace_of_a_registered_value_does_not_matter() -> None:
    register("  sk-unit-padded-0123456789\r\n")
    assert redact("sent sk-unit-padded-0123456789") == f"sent {REDACTED}"


def test_short_values_are_not_registered() -> None:
    register("ollama", "true", "")
    assert redact("ollama said true") == "ollama said true"


def test_credentials_are_redacted_by_their_shape_without_being_registered() -> None:
    cases = {
        "Illegal header value b'Bearer sk-unit-shape-0123'": f"Illegal header value b'Bearer {REDACTED}'",
        "authorization: Bearer abcdefgh12345": f"authorization: Bearer {REDACTED}",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==": f"Authorization: Basic {REDACTED}",
        "{'x-api-key': 'sk-unit-shape-4567', 'n': 1}": f"{{'x-api-key': '{REDACTED}', 'n': 1}}",
        "X-Api-Key=abcdefgh123": f"X-Api-Key={REDACTED}",
        '"api_key": "abcdefgh123"': f'"api_key": "{REDACTED}"',
        "GET https://user:hunter22@example.com/v1 failed": f"GET https://{REDACTED}@example.com/v1 failed",
    }
    for text, expected in cases.items():
        assert redact(text) == expected


def test_ordinary_error_texts_are_left_alone() -> None:
    texts = [
        "429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit",
        "Connection error: [Errno 111] Connection refused",
        "Missing bearer token",
        "the server sent no data for 300 s (idle timeout)",
        "http://127.0.0.1:8080/v1/chat/completions returned 500",
        "",
    ]
    for text in texts:
        assert redact(text) == text


def test_redacting_twice_changes_nothing_more() -> None:
    register("sk-unit-twice-0123456789")
    once = redact("Bearer sk-unit-twice-0123456789 and x-api-key: sk-unit-twice-0123456789")
    assert redact(once) == once
    assert "sk-unit-twice" not in once


# --- clean_credential -----------------------------------------------------------------------


def test_surrounding_whitespace_is_stripped() -> None:
    assert clean_credential(" sk-unit-clean-0123\r\n", "The key") == "sk-unit-clean-0123"
    assert clean_credential("Bearer a\tb c", "The header") == "Bearer a\tb c"


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("sk-unit-bad-first\nsecond-half", "a line break at character 18"),
        ("sk-unit-bad\r\nthen", "a line break at character 12"),
        ("sk-unit-\x00bad-zero", "a control character at character 9"),
        ("sk-unit-\x7fdel-char", "a control character at character 9"),
        ("sk-unit-s\u00e9cret-latin", "a non-ASCII character at character 10"),
        ("sk-unit-\u20acuro-sign", "a non-ASCII character at character 9"),
    ],
)
def test_a_value_that_cannot_be_a_header_is_refused_without_showing_it(value: str, what: str) -> None:
    with pytest.raises(CredentialError) as caught:
        clean_credential(value, "The API key in the environment variable UNIT_KEY")
    message = str(caught.value)
    assert message.startswith("The API key in the environment variable UNIT_KEY cannot be sent")
    assert what in message
    assert "sk-unit" not in message
    assert "sk-unit" not in redact(f"oops {value!r} {value.encode('utf-8')!r}"), (
        "the refused value is registered"
    )


# --- the providers' configuration -----------------------------------------------------------


def _resolve(config: dict, env: dict[str, str] | None = None) -> ProviderSpec:
    entry = ProviderConfig.model_validate({"api": "openai-completions", "baseUrl": "http://x/v1", **config})
    return resolve_provider("p", entry, env or {}, builtin=False, config_file="/data/models.json")


def test_keys_and_header_values_from_the_file_and_the_environment_are_stripped() -> None:
    spec = _resolve(
        {
            "apiKeyEnv": "UNIT_KEY",
            "headers": {"X-Team": " team-a \n"},
            "models": [{"id": "m", "headers": {"X-Model": "model-token-0123\n"}}],
        },
        {"UNIT_KEY": "sk-unit-env-0123456789\n"},
    )
    assert spec.api_key == "sk-unit-env-0123456789" and spec.credential_error is None
    assert spec.headers == {"X-Team": "team-a"}
    assert spec.models[0].headers == {"X-Model": "model-token-0123"}
    assert _resolve({"apiKey": "\tsk-unit-file-0123456789 \n"}).api_key == "sk-unit-file-0123456789"


def test_a_blank_key_counts_as_none() -> None:
    spec = _resolve({"apiKey": " \n", "apiKeyEnv": "UNIT_KEY"}, {"UNIT_KEY": "sk-unit-blank-0123456789"})
    assert spec.api_key == "sk-unit-blank-0123456789"
    assert _resolve({"apiKeyEnv": "UNIT_KEY"}, {"UNIT_KEY": "\n"}).api_key is None


def test_every_bad_value_is_named_by_its_field_or_variable() -> None:
    spec = _resolve(
        {
            "apiKey": "sk-unit-field-first\nsecond-0123",
            "headers": {"X-Proxy": "proxy-unit-\x01-token"},
            "models": [{"id": "m", "headers": {"X-Model": "model-unit-\u00e9-token"}}],
        }
    )
    error = spec.credential_error or ""
    assert "The API key in /data/models.json (providers.p.apiKey) cannot be sent" in error
    assert 'Header "X-Proxy" in /data/models.json (providers.p.headers) cannot be sent' in error
    assert 'Header "X-Model" in /data/models.json (providers.p.models["m"].headers) cannot be sent' in error
    assert "unit" not in error.replace("/data/", "")
    assert spec.api_key is None and spec.headers == {} and spec.models[0].headers is None
    env_spec = _resolve({"apiKeyEnv": "UNIT_KEY"}, {"UNIT_KEY": "sk-unit-var-first\nsecond"})
    assert env_spec.credential_error is not None
    assert env_spec.credential_error.startswith(
        "The API key in the environment variable UNIT_KEY cannot be sent"
    )


def test_a_built_in_provider_with_a_bad_key_stays_listed_so_that_its_requests_say_why() -> None:
    specs = resolve_providers(
        None, {"ANTHROPIC_API_KEY": "sk-ant-unit-first\nsecond"}, config_file="models.json"
    )
    anthropic = next(s for s in specs if s.id == "anthropic")
    assert anthropic.usable and anthropic.api_key is None
    assert "environment variable ANTHROPIC_API_KEY" in (anthropic.credential_error or "")
    openai = next(s for s in specs if s.id == "openai")
    assert not openai.usable


def test_a_bad_file_value_is_named_by_the_file_passed_in() -> None:
    user = parse_models_file({"providers": {"anthropic": {"apiKey": "sk-unit-named-first\nsecond"}}}, "f")
    specs = resolve_providers(user, {}, config_file="/home/me/.agentls/models.json")
    anthropic = next(s for s in specs if s.id == "anthropic")
    assert "/home/me/.agentls/models.json (providers.anthropic.apiKey)" in (anthropic.credential_error or "")


# --- requests -------------------------------------------------------------------------------

OPENAI_TEXT = openai_sse([o_chunk({"role": "assistant", "content": "Hi"}), o_chunk({}, "stop")])


async def test_a_key_with_a_trailing_newline_is_sent_stripped_by_the_openai_provider() -> None:
    async with MockServer([Reply(body=OPENAI_TEXT)]) as server:
        provider = openai_provider(
            server.url, apiKey="sk-unit-oa-trailing-0123\n", headers={"X-Team": "team-unit-0123\r\n"}
        )
        _, message = await collect(provider.stream(provider.models[0], context()))
    assert message.stop_reason == "stop", message.error_message
    request = server.requests[0]
    assert request.headers["authorization"] == "Bearer sk-unit-oa-trailing-0123"
    assert request.headers["x-team"] == "team-unit-0123"


async def test_a_key_with_a_trailing_newline_is_sent_stripped_by_the_anthropic_provider() -> None:
    reply = a_reply(a_start(), a_text(0, "Hi"), a_end())
    async with MockServer([reply]) as server:
        provider = anthropic_provider(server.url, apiKey="sk-unit-an-trailing-0123 \n")
        _, message = await collect(provider.stream(provider.models[0], context()))
    assert message.stop_reason == "stop", message.error_message
    headers = server.requests[0].headers  # the SDK sends the key as x-api-key or as a bearer token
    assert headers.get("x-api-key", headers.get("authorization")) in (
        "sk-unit-an-trailing-0123",
        "Bearer sk-unit-an-trailing-0123",
    )


@pytest.mark.parametrize("make", [openai_provider, anthropic_provider])
async def test_a_key_with_an_inner_newline_fails_without_a_request_and_without_the_key(make: object) -> None:
    async with MockServer([]) as server:
        provider = make(server.url, apiKey="sk-unit-inner-first\nsk-unit-inner-second")  # type: ignore[operator]
        _, message = await collect(provider.stream(provider.models[0], context()))
    assert message.stop_reason == "error" and not server.requests
    error = message.error_message or ""
    assert error.startswith(
        f"The API key in models.json (providers.{provider.provider}.apiKey) cannot be sent"
    )
    assert "line break" in error and "sk-unit-inner" not in error


@pytest.mark.parametrize("make", [openai_provider, anthropic_provider])
async def test_a_bad_key_of_the_request_options_is_refused_too(make: object) -> None:
    async with MockServer([]) as server:
        provider = make(server.url)  # type: ignore[operator]
        options = StreamOptions(api_key="sk-unit-option-first\nsecond-0123")
        _, message = await collect(provider.stream(provider.models[0], context(), options))
    assert not server.requests
    assert (message.error_message or "").startswith("The API key of the request options cannot be sent")
    assert "sk-unit-option" not in (message.error_message or "")


async def test_the_request_options_key_and_headers_are_stripped_and_win() -> None:
    async with MockServer([Reply(body=OPENAI_TEXT)]) as server:
        provider = openai_provider(server.url, headers={"X-Team": "team-from-file"})
        options = StreamOptions(api_key=" sk-unit-option-0123\n", headers={"X-Team": "team-from-options\n"})
        _, message = await collect(provider.stream(provider.models[0], context(), options))
    assert message.stop_reason == "stop", message.error_message
    assert server.requests[0].headers["authorization"] == "Bearer sk-unit-option-0123"
    assert server.requests[0].headers["x-team"] == "team-from-options"


@pytest.mark.parametrize("make", [openai_provider, anthropic_provider])
async def test_a_key_echoed_by_the_server_is_redacted_from_the_error_message(make: object) -> None:
    key = "sk-unit-echoed-0123456789"
    body = {"error": {"type": "authentication_error", "message": f"Incorrect API key provided: {key}"}}
    async with MockServer([json_reply(401, body)]) as server:
        provider = make(server.url, apiKey=key)  # type: ignore[operator]
        _, message = await collect(provider.stream(provider.models[0], context()))
    error = message.error_message or ""
    assert message.stop_reason == "error" and error.startswith("401")
    assert key not in error and f"Incorrect API key provided: {REDACTED}" in error


async def test_a_header_value_echoed_by_the_server_is_redacted_from_the_error_message() -> None:
    token = "proxy-unit-echoed-0123"
    body = {"error": {"message": f"proxy token {token} expired"}}
    async with MockServer([json_reply(403, body)]) as server:
        provider = openai_provider(server.url, headers={"X-Proxy-Token": token})
        _, message = await collect(provider.stream(provider.models[0], context()))
    assert message.error_message == f"403: proxy token {REDACTED} expired"


# --- logs -----------------------------------------------------------------------------------


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.addFilter(RedactingFilter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_the_log_filter_redacts_messages_arguments_and_tracebacks() -> None:
    register("sk-unit-log-0123456789")
    capture = _Capture()
    log = logging.getLogger("tests.secrets.unit")
    log.addHandler(capture)
    log.propagate = False
    try:
        log.warning("sending %s", "Bearer sk-unit-log-0123456789")
        try:
            raise ValueError("bad key sk-unit-log-0123456789")
        except ValueError:
            log.exception("request failed with %d", 401)
        log.warning("%s and %s", "too few arguments")
    finally:
        log.removeHandler(capture)
        log.propagate = True
    assert capture.lines[0] == f"sending Bearer {REDACTED}"
    assert capture.lines[1].startswith("request failed with 401\nTraceback")
    assert f"ValueError: bad key {REDACTED}" in capture.lines[1]
    assert all("sk-unit-log" not in line for line in capture.lines)
    assert len(capture.lines) == 3
