"""The SSL context of a provider's HTTP client (``agentls.http_warm_up.tls_context_for``)."""

from __future__ import annotations

import ssl

import pytest
from agentls.http_warm_up import tls_context_for


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_an_https_url_gets_the_ca_bundle(no_proxies: pytest.MonkeyPatch) -> None:
    context = tls_context_for("https://api.anthropic.com")
    assert context.cert_store_stats()["x509_ca"] > 0
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_a_plain_http_url_gets_a_context_that_trusts_no_certificate(no_proxies: pytest.MonkeyPatch) -> None:
    context = tls_context_for("http://127.0.0.1:11434")
    assert context.cert_store_stats()["x509_ca"] == 0
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_in_the_environment_gets_the_ca_bundle_for_plain_http_too(
    no_proxies: pytest.MonkeyPatch, variable: str
) -> None:
    no_proxies.setenv(variable, "https://proxy.example:3128")
    assert tls_context_for("http://127.0.0.1:11434").cert_store_stats()["x509_ca"] > 0
