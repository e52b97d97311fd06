"""What an MCP server runs, as it may be shown: to the user in the trust question, and in its log.

Every part that changes what runs is shown (transport, command, args, env, cwd, url,
headers), each as one :class:`Shown` line, with secrets masked:

- a value from ``${VAR}`` expansion is shown as written (``${VAR}``), never expanded;
- the text of an env variable or header whose name looks secret (token, key, secret,
  password, authorization, ...) is masked, but for its ``${VAR}`` references and short words
  such as ``Bearer``;
- any other text passes :func:`agentls.ai.secrets.redact` (the credentials in use, and
  anything shaped like one).

The expanded values of secret-looking variables and keys are registered with
:func:`agentls.ai.secrets.register`, so the error texts and log records that mention them
are redacted too. :func:`changes` says how two shown forms differ ("env LD_PRELOAD added").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agentls.ai.secrets import MIN_SECRET_LENGTH, REDACTED, redact, register

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
"""``${VAR}`` and ``${VAR:-default}``, as the configuration files write them."""

_SECRET_NAME = re.compile(r"(?i)token|key|secret|passw(or)?d|pwd|auth|credential|cookie|session")
"""Names of variables, env entries and headers whose values are taken for secrets."""


@dataclass(frozen=True)
class Shown:
    """One part of a server's configuration as shown: ``key`` names it (``env LD_PRELOAD``)."""

    key: str
    value: str

    def text(self) -> str:
        joiner = "=" if self.key.startswith("env ") else ": " if self.key.startswith("header ") else " "
        return f"{self.key}{joiner}{self.value}"


def looks_secret(name: str) -> bool:
    return _SECRET_NAME.search(name) is not None


def expand(value: str, environment: Mapping[str, str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` replaced from ``environment`` (unset, no default: ``""``).

    The values of secret-looking variables are registered, so that no error text shows them.
    """

    def replace(match: re.Match[str]) -> str:
        expanded = environment.get(match.group(1), match.group(2) or "")
        if looks_secret(match.group(1)):
            register(expanded)
        return expanded

    return VARIABLE.sub(replace, value)


def masked(raw: str, *, secret: bool = False) -> str:
    """``raw`` (as written, before expansion) as it may be shown.

    ``secret``: the value of a secret-looking env entry or header. Its ``${VAR}`` references
    are kept and its other text is masked, but for words shorter than a credential (``Bearer``).
    """
    parts: list[str] = []
    at = 0
    for match in VARIABLE.finditer(raw):
        parts.append(_literal(raw[at : match.start()], secret))
        name, default = match.group(1), match.group(2)
        parts.append(f"${{{name}}}" if default is None else f"${{{name}:-{_literal(default, secret)}}}")
        at = match.end()
    parts.append(_literal(raw[at:], secret))
    return "".join(parts)


def _literal(text: str, secret: bool) -> str:
    if not secret:
        return redact(text)
    return re.sub(r"\S+", lambda m: m.group(0) if len(m.group(0)) < MIN_SECRET_LENGTH else REDACTED, text)


def register_secret_values(pairs: Iterable[tuple[str, str]]) -> None:
    """The expanded values of secret-looking env entries and headers: redacted from now on."""
    register(*(value for name, value in pairs if looks_secret(name)))


def stdio_lines(
    command: str, args: Sequence[str], env: Sequence[tuple[str, str]], cwd: str | None
) -> tuple[Shown, ...]:
    """A stdio server's parts; ``command``, ``args`` and ``env`` values as written."""
    lines = [Shown("command", masked(command))]
    if args:
        lines.append(Shown("args", " ".join(masked(arg) for arg in args)))
    lines.extend(Shown(f"env {name}", masked(value, secret=looks_secret(name))) for name, value in env)
    if cwd is not None:
        lines.append(Shown("cwd", masked(cwd)))
    return tuple(lines)


def http_lines(transport: str, url: str, headers: Sequence[tuple[str, str]]) -> tuple[Shown, ...]:
    """An HTTP or SSE server's parts; ``url`` and header values as written."""
    lines = [Shown("transport", transport), Shown("url", masked(url))]
    lines.extend(Shown(f"header {name}", masked(value, secret=looks_secret(name))) for name, value in headers)
    return tuple(lines)


def one_line(lines: Sequence[Shown]) -> str:
    return "; ".join(line.text() for line in lines)


def changes(before: Sequence[Shown], after: Sequence[Shown]) -> list[str]:
    """How ``after`` differs from ``before``, one phrase per part ("env LD_PRELOAD added")."""
    old = {line.key: line for line in before}
    new = {line.key: line for line in after}
    said = []
    for key, line in new.items():
        if key not in old:
            said.append(f"{line.text()} added")
        elif old[key].value != line.value:
            said.append(f"{key} changed from {old[key].value} to {line.value}")
    said.extend(f"{line.text()} removed" for key, line in old.items() if key not in new)
    return said
