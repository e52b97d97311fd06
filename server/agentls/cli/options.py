"""The options ``run``, ``chat``, ``models`` and ``sessions`` share: checked, and turned into the
server's initialization options; and the lines of ``--json``."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from agentls.data_dir import default_data_dir
from agentls.protocol import ModelRef
from agentls.terminal_text import json_line

TOOL_NAMES = ("read", "write", "edit", "ls", "find", "grep", "bash", "diagnostics")
"""What ``--allow`` takes, besides MCP tools (``mcp__SERVER__TOOL``, ``mcp__SERVER__*``)."""

MCP_ALLOW = re.compile(r"mcp__[A-Za-z0-9_-]+?__(\*|[A-Za-z0-9_-]+)")


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """The server's initialization options from the command line (``--faux-script``, ``--allow``, ...)."""
    options: dict[str, Any] = {}
    if args.faux_script:
        options["fauxScript"] = str(Path(args.faux_script).resolve())
    elif getattr(args, "demo", False):
        options["demo"] = True  # the server's bundled script
    if args.data_dir:
        options["dataDir"] = str(Path(args.data_dir).resolve())
    if getattr(args, "allow", None):
        options["permissions"] = {tool: "allow" for tool in args.allow}
    if getattr(args, "mcp_servers", None) is not None:
        options["mcpServers"] = args.mcp_servers
    if getattr(args, "approve", None) is not None:
        options["projectTrust"] = "always" if args.approve else "never"
    if getattr(args, "sandbox", None):
        options["sandbox"] = {"mode": args.sandbox, "network": bool(args.sandbox_network)}
    budget = {"maxCostUsd": getattr(args, "max_cost", None), "maxTurns": getattr(args, "max_turns", None)}
    if any(value is not None for value in budget.values()):
        options["budget"] = {name: value for name, value in budget.items() if value is not None}
    return options


def _check_allowed(args: argparse.Namespace, command: str) -> str | None:
    """An error message when ``--allow`` names a tool that does not exist."""
    unknown = [
        tool
        for tool in getattr(args, "allow", None) or []
        if tool not in TOOL_NAMES and not MCP_ALLOW.fullmatch(tool)
    ]
    if unknown:
        tools = ", ".join(TOOL_NAMES)
        return (
            f"agentls {command}: --allow {unknown[0]}: no such tool (the tools: {tools}; "
            "an MCP server's: mcp__SERVER__TOOL, or mcp__SERVER__* for all of them)"
        )
    return None


def _check_mcp_config(args: argparse.Namespace, command: str) -> str | None:
    """``--mcp-config``: loads it into ``args.mcp_servers``; an error message when it cannot."""
    args.mcp_servers = None
    if getattr(args, "mcp_config", None):
        # imported only for the option: the MCP layer loads agentls.ai, which `run -p` needs not
        from agentls.mcp.config import McpConfigError, read_mcp_config

        try:
            args.mcp_servers = read_mcp_config(Path(args.mcp_config))
        except McpConfigError as error:
            return f"agentls {command}: --mcp-config {args.mcp_config}: {error}"
    return None


def _parse_model(text: str | None, command: str) -> tuple[str, str] | str | None:
    """``(provider, id)``, ``None`` when not given, or an error message."""
    if not text:
        return None
    try:
        model = ModelRef.parse(text)
    except ValueError:
        return f"agentls {command}: --model takes PROVIDER/ID, e.g. faux/faux-1"
    return (model.provider, model.id)


def check_options(args: argparse.Namespace, command: str) -> tuple[tuple[str, str] | None, str | None]:
    """``run``'s and ``chat``'s options: the model of ``--model``, and an error message for the first
    bad one of ``--model``, ``--allow`` and ``--mcp-config`` (which it loads into ``args.mcp_servers``)."""
    model = _parse_model(args.model, command)
    if isinstance(model, str):
        return None, model
    return model, _check_allowed(args, command) or _check_mcp_config(args, command)


def server_data_dir(args: argparse.Namespace) -> Path | None:
    """The server's data folder: ``--data-dir``, else its default (``$AGENTLS_DATA_DIR``, ...)."""
    if args.data_dir:
        return Path(args.data_dir).resolve()
    try:
        return default_data_dir()
    except Exception:  # the platform's folder cannot be told: no log path then
        return None


def cli_hint(error: Any) -> str:
    """What the command line's own options can do about an error (its text names the server's)."""
    if getattr(error, "kind", None) == "noModel" and "faux script cannot be used" in str(error):
        return (
            "\nCheck the file given to --faux-script (or AGENTLS_FAUX_SCRIPT): docs/terminal.md, "
            '"The demo", has its format.'
        )
    if getattr(error, "kind", None) == "noModel":
        return (
            "\nFrom the command line: --demo, --faux-script FILE, or --model PROVIDER/ID once a provider "
            "is set up."
        )
    return ""


def write_json(data: Any) -> None:
    """One line of ``--json``'s output."""
    sys.stdout.write(json_line(json.dumps(data, ensure_ascii=False)) + "\n")
    sys.stdout.flush()
