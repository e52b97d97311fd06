"""``agentls models`` and ``agentls sessions``: what the server lists, as a table or JSON lines."""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.table import Table

from agentls.cli.options import cli_hint, client_options, write_json
from agentls.client import AgentClient, AgentClientError
from agentls.terminal_text import visible, visible_text


async def show_models(args: argparse.Namespace) -> int:
    """``agentls models``: the models of the configured providers."""
    try:
        async with AgentClient(initialization_options=client_options(args)) as client:
            models = await client.list_models()
    except AgentClientError as error:
        print(visible(f"agentls models: {error}{cli_hint(error)}"), file=sys.stderr)
        return 2
    if args.json:
        for model in models:
            write_json(model)
        return 0
    if not models:
        print(
            "No models: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or define providers in models.json (README)."
        )
        return 0
    table = Table("model", "name", "context", "max output", "input", box=None, pad_edge=False)
    for model in models:
        table.add_row(
            visible_text(f"{model['provider']}/{model['id']}", newlines=False),
            visible_text(str(model.get("name") or ""), newlines=False),
            f"{model.get('contextWindow', 0):,}",
            f"{model.get('maxTokens', 0):,}",
            ", ".join(model.get("input") or []),
        )
    Console().print(table)
    return 0


async def show_sessions(args: argparse.Namespace) -> int:
    """``agentls sessions``: the stored sessions (of ``--cwd``)."""
    try:
        async with AgentClient(initialization_options=client_options(args)) as client:
            sessions = await client.list_sessions(args.cwd)
    except AgentClientError as error:
        print(visible(f"agentls sessions: {error}"), file=sys.stderr)
        return 2
    if args.json:
        for info in sessions:
            write_json(info.model_dump(mode="json", by_alias=True, exclude_none=True))
        return 0
    if not sessions:
        where = f" in {args.folder}" if args.folder else ""
        print(f"No stored sessions{where}.")
        return 0
    table = Table("session", "updated", "msgs", "model", "cwd", "title", box=None, pad_edge=False)
    table.columns[0].no_wrap = True
    table.columns[1].no_wrap = True
    for info in sessions:
        model = f"{info.model.provider}/{info.model.id}" if info.model else ""
        updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated_at / 1000))
        shown = [visible_text(text, newlines=False) for text in (model, info.cwd, info.title or "")]
        table.add_row(info.session_id, updated, str(info.message_count), *shown)
    Console().print(table)
    return 0
