"""``agentls models`` and ``agentls sessions``: what the server lists, as a table or JSON lines."""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.table import Table

from agentls.cli.in_process import in_process_client
from agentls.cli.options import cli_hint, client_options, write_json
from agentls.client import AgentClientError
from agentls.terminal_text import visible, visible_text


async def show_models(args: argparse.Namespace) -> int:
    """``agentls models``: the models of the configured providers."""
    try:
        async with in_process_client(initialization_options=client_options(args)) as client:
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
            "No models: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or define providers in models.json "
            "(docs/providers.md)."
        )
        return 0
    rows = [
        [
            f"{model['provider']}/{model['id']}",
            str(model.get("name") or ""),
            f"{model.get('contextWindow', 0):,}",
            f"{model.get('maxTokens', 0):,}",
            ", ".join(model.get("input") or []),
        ]
        for model in models
    ]
    print_listing(["model", "name", "context", "max output", "input"], rows, whole=1)
    return 0


async def show_sessions(args: argparse.Namespace) -> int:
    """``agentls sessions``: the stored sessions (of ``--cwd``)."""
    try:
        async with in_process_client(initialization_options=client_options(args)) as client:
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
    rows = []
    for info in sessions:
        model = f"{info.model.provider}/{info.model.id}" if info.model else ""
        updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated_at / 1000))
        rows.append([info.session_id, updated, str(info.message_count), model, info.cwd, info.title or ""])
    print_listing(["session", "updated", "msgs", "model", "cwd", "title"], rows, whole=4)
    return 0


def print_listing(header: list[str], rows: list[list[str]], *, whole: int) -> None:
    """A listing: on a terminal a table whose first ``whole`` columns (what one copies: ids, dates,
    counts, models) are never cut, the others wrapped to fit; anything else gets tab-separated
    lines of whole values (a header line first), for ``cut`` and ``awk``. Values show their control
    characters written out (and tabs, so that a value cannot add a column)."""
    console = Console()
    if not console.is_terminal:
        for row in (header, *rows):
            print("\t".join(visible(value).replace("\t", "\\t") for value in row))
        return
    table = Table(*header, box=None, pad_edge=False)
    for index, column in enumerate(table.columns[:whole]):
        column.no_wrap = True
        column.min_width = max(len(header[index]), *(len(row[index]) for row in rows))
    for column in table.columns[whole:]:
        column.overflow = "fold"
    for row in rows:
        table.add_row(*(visible_text(value, newlines=False) for value in row))
    console.print(table)
