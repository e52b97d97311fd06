"""Credentials (API keys, configured header values) and keeping them inside the process.

Two duties:

* :func:`clean_credential` strips the whitespace that a copy-paste leaves around a key
  and rejects what still cannot be an HTTP header value, with a message that names
  where the value came from but never shows it. Without this check the HTTP library
  refuses the header with the value in its error text ("Illegal header value
  b'Bearer sk-…'"), which would become the assistant message's ``errorMessage``.
* :func:`redact` replaces every credential in use (those :func:`register` was given)
  and anything that looks like one (``Bearer …``, ``x-api-key: …``, a URL's
  ``user:password@``) with ``[redacted]``. Every error text that leaves the process
  passes through it: failed assistant messages, log records (:class:`RedactingFilter`)
  and the server's JSON-RPC error responses.

A registered value is also found encoded, as a server may echo it: URL-encoded (``quote``,
``quote_plus``, every byte as ``%XX``), hexadecimal (either case), JSON-escaped, a Python
``repr``, and base64 (standard and URL-safe, also inside a longer base64 string, whatever
its alignment: see :func:`_encoded`). :func:`is_registered` says whether a value is one of
them (the tools' environment leaves such variables out).

:func:`redact` is cheap: one precompiled pattern for the registered values (rebuilt only
when a new one is registered) and one for the generic forms.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import urllib.parse

REDACTED = "[redacted]"

MIN_SECRET_LENGTH = 8
"""Shorter values are not redacted: they are no credentials worth the name (``ollama`` is a common
"key" of local servers) and replacing them everywhere would garble ordinary words and numbers."""

_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
_lock = threading.Lock()

_GENERIC = re.compile(
    r"(?i)"
    r"(\b(?:bearer|basic)\s+)[^\s'\",;]{8,}"
    r"|(\b(?:x-api-key|x-goog-api-key|api[-_]?key|access[-_]?token|authorization)[\"']?\s*[:=]\s*[\"']?)"
    r"(?!bearer\b|basic\b)[^\s'\",;]{8,}"
    r"|(://)[^/\s@]+(?=@)"
)
"""Credentials by their shape: an authorization scheme's token, a key-like field's value, a URL's
user information. Values shorter than 8 characters are left alone ("Bearer token required")."""


class CredentialError(ValueError):
    """A key or header value that cannot be sent; the message names its source, not the value."""


def clean_credential(value: str, source: str) -> str:
    """``value`` without surrounding whitespace, registered; raises :class:`CredentialError`.

    ``source`` says where the value came from ("The API key in the environment variable
    X"), for the error. Inside the value, only printable ASCII, spaces and tabs may
    appear: HTTP allows no control characters, and httpx encodes header values as ASCII.
    """
    register(value)
    cleaned = value.strip()
    for index, char in enumerate(cleaned):
        if char == "\t" or " " <= char <= "~":
            continue
        if char in "\r\n":
            what = "a line break"
        elif char < " " or char == "\x7f":
            what = "a control character"
        else:
            what = "a non-ASCII character"
        raise CredentialError(
            f"{source} cannot be sent in an HTTP header: it has {what} at character {index + 1} "
            "(only printable ASCII characters may be in a header; the value is not shown)"
        )
    return cleaned


def _forms(value: str) -> set[str]:
    """The ways ``value`` (or a line or word of it) can appear in an error text."""
    text = value.strip()
    forms = {text, *text.split()}
    for form in list(forms):
        forms.add(repr(form)[1:-1])  # an exception's repr of a str: "...\\n..."
        forms.add(repr(form.encode("utf-8", "backslashreplace"))[2:-1])  # of bytes: b'...'
        forms.add(json.dumps(form)[1:-1])
        forms.update(_encoded(form))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def _encoded(text: str) -> set[str]:
    """``text`` as a server may echo it encoded: URL-encoded (as a query value, a path or every byte),
    hexadecimal, and base64 (standard and URL-safe) wherever it starts in a longer encoded string.

    A base64 string encodes 3 bytes in 4 characters, so the characters of a value embedded in
    longer data (``Basic base64(user:key)``, a JSON body) depend on where it starts modulo 3.
    For each of the three starts, the run of characters that only the value's bytes determine
    is a form: the groups of 3 bytes it fills whole (up to 2 bytes at each end are not hidden).
    """
    data = text.encode("utf-8", "surrogatepass")
    forms = {
        urllib.parse.quote(text, safe=""),
        urllib.parse.quote(text),
        urllib.parse.quote_plus(text),
        "".join(f"%{byte:02X}" for byte in data),
        "".join(f"%{byte:02x}" for byte in data),
        data.hex(),
        data.hex().upper(),
    }
    for skip in range(3):
        whole = data[skip:][: (len(data) - skip) // 3 * 3]
        if len(whole) >= 6:  # two groups at least: shorter runs occur by chance
            forms.add(base64.b64encode(whole).decode("ascii"))
            forms.add(base64.urlsafe_b64encode(whole).decode("ascii"))
    return forms


def register(*values: str | None) -> None:
    """Values that :func:`redact` must hide from now on (API keys, header values)."""
    global _pattern
    new = {value for value in values if value and value not in _secrets}
    if not new:
        return
    with _lock:
        _secrets.update(new)
        forms = set().union(*(_forms(value) for value in _secrets))
        ordered = sorted(forms, key=len, reverse=True)  # a longer form wins over its own prefix
        _pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None


def is_registered(value: str) -> bool:
    """Whether ``value`` (its surrounding whitespace aside) is a credential :func:`register` was given."""
    return bool(value) and (value in _secrets or value.strip() in _secrets)


def _generic(match: re.Match[str]) -> str:
    return (match.group(1) or match.group(2) or match.group(3)) + REDACTED


def redact(text: str) -> str:
    """``text`` with every registered credential, and anything shaped like one, as ``[redacted]``."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    return _GENERIC.sub(_generic, text)


class RedactingFilter(logging.Filter):
    """Redacts a log record's message, traceback and stack (for a handler: it sees every record).

    The record is changed in place, so the handlers after this one see the redacted text too.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # arguments that do not fit the format: the formatter would show them raw
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True
