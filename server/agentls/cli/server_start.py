"""What ``chat`` does before its imports: its options checked, and its server started.

The server then starts (0.4-0.5 s to a session) while ``chat`` imports the client, pydantic, rich
and prompt_toolkit, on another core: started after those imports, as it was, the two starts came
one after the other. This module and what it imports use the standard library only.
(``run``, ``models`` and ``sessions`` run their server in-process: :mod:`agentls.cli.in_process`.)
"""

from __future__ import annotations

import argparse
import sys

from agentls.cli.options import check_options, client_options
from agentls.client_start import SpawnedServer, spawn_server


def start_server(args: argparse.Namespace, *, asks: bool) -> SpawnedServer | None:
    """The command's server, started with its options (``asks``: the command answers permission
    questions); ``None`` when it cannot be started, for the client to try again and say why."""
    try:
        return spawn_server(initialization_options=client_options(args), request_permission=asks)
    except OSError:
        return None


def check_chat(args: argparse.Namespace) -> tuple[str, str] | int | None:
    """``chat``'s model, or the exit code when an option is wrong or there is no terminal."""
    model, problem = check_options(args, "chat")
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("agentls chat: needs a terminal; use agentls run for scripts and pipes", file=sys.stderr)
        return 2
    return model
