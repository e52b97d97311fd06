"""MCP server configuration: Claude Code's and Cursor's ``mcpServers`` format, and ACP's list form.

``{"mcpServers": {NAME: {command, args?, env?, cwd?} | {type: "http" | "sse", url, headers?}}}``
in a file; the same mapping, or ACP's list (``[{name, command, args, env: [{name, value}]}]``,
``[{type, name, url, headers: [{name, value}]}]``), in options and requests. Either kind may
say ``timeout``: the seconds a tool call may take (:data:`DEFAULT_TIMEOUT`). A mistake in
one server is reported with its source and field, and the other servers are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentls.ai.local_files import read_json_file
from agentls.mcp.display import Shown, expand, http_lines, one_line, register_secret_values, stdio_lines
from agentls.tools.mcp_names import name_problem

Transport = Literal["stdio", "http", "sse"]

GLOBAL_FILE = "mcp.json"
"""The user's own servers: ``mcp.json`` in the data folder."""
WORKSPACE_FILE = ".mcp.json"
"""A project's servers: ``.mcp.json`` in the session's folder (they need the user's trust)."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a tool call may take unless the server's ``timeout`` says otherwise (as Codex's default)."""

_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server as configured."""

    name: str
    """As used in tool names (letters, digits, ``_`` and ``-``)."""
    transport: Transport
    source: str
    """The file it came from, ``initializationOptions`` or ``newSession``."""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a tool call may take; then it is cancelled and fails (``timeout`` in the entry)."""
    needs_trust: bool = False
    """From a project's ``.mcp.json`` (or a loaded session's file): it starts only once the user trusts it."""
    shown: tuple[Shown, ...] = field(default=(), compare=False)
    """What it runs as it may be shown (``${VAR}`` as written, secrets masked; :mod:`agentls.mcp.display`)."""

    @property
    def fingerprint(self) -> str:
        """A short hash of what the server runs (or where it connects): trust is given to this."""
        what = [
            self.transport,
            self.command,
            list(self.args),
            list(self.env),
            self.cwd,
            self.url,
            list(self.headers),
        ]
        return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:16]

    def describe(self) -> str:
        """What the server runs, on one line, secrets masked (for the trust question and its log)."""
        return one_line(self.shown)


@dataclass
class ConfigResult:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """One line per mistake, naming the source and the field."""

    def merge(self, other: ConfigResult) -> None:
        """``other``'s servers over these (a later source wins), and its problems after these."""
        self.servers.update(other.servers)
        self.problems.extend(other.problems)


def server_name(name: str) -> str:
    """A configured name as tool names can carry it."""
    return _NAME_CHARACTERS.sub("_", name)[:40] or "_"


class _Invalid(ValueError):
    """A server entry with a mistake; the message names the field."""


def _string(entry: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise _Invalid(f"{key}: missing (a string is needed)")
        return None
    if not isinstance(value, str):
        raise _Invalid(f"{key}: must be a string, not {type(value).__name__}")
    return value


def _pairs(entry: Mapping[str, Any], key: str) -> list[tuple[str, str]]:
    """``{NAME: value}`` or ACP's ``[{name, value}]``."""
    value = entry.get(key)
    if value is None:
        return []
    if isinstance(value, dict):
        if not all(isinstance(v, str) for v in value.values()):
            raise _Invalid(f"{key}: every value must be a string")
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, list):
        pairs = []
        for index, item in enumerate(value):
            if not (
                isinstance(item, dict)
                and isinstance(item.get("name"), str)
                and isinstance(item.get("value"), str)
            ):
                raise _Invalid(f"{key}[{index}]: must be {{name: string, value: string}}")
            pairs.append((item["name"], item["value"]))
        return pairs
    raise _Invalid(f"{key}: must be an object of strings (or a list of {{name, value}})")


def _timeout(entry: Mapping[str, Any]) -> float:
    value = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 10**9:
        raise _Invalid(f"timeout: must be a positive number of seconds, not {value!r:.40}")
    return float(value)


def _server(
    name: str, entry: Any, source: str, base: Path | None, environment: Mapping[str, str], needs_trust: bool
) -> ServerConfig:
    if not isinstance(entry, dict):
        raise _Invalid(f"must be an object, not {type(entry).__name__}")
    kind = entry.get("type", "stdio" if "command" in entry or "url" not in entry else "http")
    if kind == "streamable-http":  # another spelling some tools write
        kind = "http"
    if kind not in ("stdio", "http", "sse"):
        raise _Invalid(f"type: unknown transport {kind!r} (expected stdio, http or sse)")

    def text(key: str, *, required: bool = False) -> str | None:
        value = _string(entry, key, required=required)
        return expand(value, environment) if value is not None else None

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        expanded = tuple((k, expand(v, environment)) for k, v in _pairs(entry, key))
        register_secret_values(expanded)
        return expanded

    if kind != "stdio":
        url = text("url", required=True)
        assert url is not None
        if not re.match(r"https?://", url):
            raise _Invalid(f"url: {url!r} is not an http:// or https:// address")
        return ServerConfig(
            server_name(name),
            kind,
            source,
            url=url,
            headers=pairs("headers"),
            timeout=_timeout(entry),
            needs_trust=needs_trust,
            shown=http_lines(kind, entry["url"], _pairs(entry, "headers")),
        )
    command = text("command", required=True)
    if not command:
        raise _Invalid("command: must not be empty")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _Invalid("args: must be a list of strings")
    cwd = text("cwd")
    if cwd is not None and base is not None:
        cwd = str((base / cwd).resolve())
    cwd = cwd or (str(base) if base is not None else None)
    return ServerConfig(
        server_name(name),
        "stdio",
        source,
        command=command,
        args=tuple(expand(a, environment) for a in args),
        env=pairs("env"),
        cwd=cwd,
        timeout=_timeout(entry),
        needs_trust=needs_trust,
        shown=stdio_lines(entry["command"], args, _pairs(entry, "env"), cwd),
    )


def parse_servers(
    value: Any,
    source: str,
    *,
    base: Path | None = None,
    environment: Mapping[str, str] | None = None,
    needs_trust: bool = False,
) -> ConfigResult:
    """The servers of one source: ``{NAME: entry}``, ``{"mcpServers": {...}}`` or ACP's list."""
    environment = os.environ if environment is None else environment
    result = ConfigResult()
    if isinstance(value, dict) and "mcpServers" in value:
        value = value["mcpServers"]
    if isinstance(value, list):
        named: list[tuple[str, Any]] = []
        for index, entry in enumerate(value):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                result.problems.append(f"{source}: mcpServers[{index}]: needs a string name")
                continue
            named.append((entry["name"], {k: v for k, v in entry.items() if k != "name"}))
    elif isinstance(value, dict):
        named = list(value.items())
    else:
        result.problems.append(
            f"{source}: mcpServers must be an object of servers (or a list), not {value!r:.40}"
        )
        return result
    for name, entry in named:
        problem = name_problem(server_name(str(name)))
        if problem is not None:
            result.problems.append(f"{source}: mcpServers.{name}: {problem}")
            continue
        try:
            config = _server(str(name), entry, source, base, environment, needs_trust)
        except _Invalid as error:
            result.problems.append(f"{source}: mcpServers.{name}.{error}")
            continue
        result.servers[config.name] = config
    return result


def read_servers_file(path: Path, *, needs_trust: bool = False) -> ConfigResult:
    """The servers of a configuration file; a missing file has none, a broken one is a problem."""
    try:
        data = read_json_file(path)
    except FileNotFoundError:
        return ConfigResult()
    except (OSError, ValueError) as error:
        return ConfigResult(problems=[f"{path}: cannot be read as JSON ({error})"])
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict | list):
        return ConfigResult(problems=[f'{path}: expected {{"mcpServers": {{NAME: server}}}}'])
    return parse_servers(data, str(path), base=path.parent, needs_trust=needs_trust)


def session_servers(
    data_dir: Path, cwd: str, option: Any = None, requested: Any = None, stored_in: Path | None = None
) -> ConfigResult:
    """A session's servers from every source, a later one replacing an earlier server of the same name.

    ``stored_in``: ``requested`` was read from this session file (a loaded session's header),
    not sent by the client: those servers need the user's trust, as a project's do.
    """
    result = read_servers_file(data_dir / GLOBAL_FILE)
    result.merge(read_servers_file(Path(cwd) / WORKSPACE_FILE, needs_trust=True))
    if option is not None:
        result.merge(parse_servers(option, "initializationOptions", base=Path(cwd)))
    if requested is not None:
        source, stored = (str(stored_in), True) if stored_in is not None else ("newSession", False)
        result.merge(parse_servers(requested, source, base=Path(cwd), needs_trust=stored))
    return result


class McpConfigError(ValueError):
    """A ``--mcp-config`` file that cannot be used; the message says why (without the file's name)."""


def read_mcp_config(path: Path) -> dict[str, Any]:
    """The servers of a ``--mcp-config`` file, in the ``.mcp.json`` format, for the ``mcpServers`` option.

    A relative ``cwd`` is made absolute from the file's folder, as for the configuration files
    (the option's own are relative to the session's folder). Raises :class:`McpConfigError`
    when the file cannot be read, is not JSON, or is not ``{"mcpServers": {NAME: {...}}}``: a
    file named on the command line is a mistake to refuse before anything starts, where one
    found in a folder is a problem reported beside the servers that still start.
    """
    try:
        data = read_json_file(path)
    except OSError as error:
        raise McpConfigError(f"cannot read it ({error.strerror or error})") from None
    except json.JSONDecodeError as error:
        raise McpConfigError(f"not JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    except ValueError as error:
        raise McpConfigError(f"cannot read it ({error})") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError('expected {"mcpServers": {NAME: {"command": ...} or {"url": ...}}}')
    folder = path.resolve().parent
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise McpConfigError(f"mcpServers.{name} must be an object, not {type(entry).__name__}")
        if isinstance(entry.get("cwd"), str) and not Path(entry["cwd"]).is_absolute():
            servers[name] = {**entry, "cwd": str(folder / entry["cwd"])}
    return servers
