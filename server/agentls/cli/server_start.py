"""What ``run``, ``chat``, ``models`` and ``sessions`` do before their imports: their options and
``run``'s prompt checked, and their server started.

The server then starts (0.4-0.5 s to a session) while the command imports the client, pydantic,
rich and prompt_toolkit, on the other core: started after those imports, as it was, the two
starts came one after the other. This module and what it imports use the standard library only.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import NamedTuple

from agentls.cli.options import check_options, client_options
from agentls.client_start import SpawnedServer, spawn_server


def start_server(args: argparse.Namespace, *, asks: bool) -> SpawnedServer | None:
    """The command's server, started with its options (``asks``: the command answers permission
    questions); ``None`` when it cannot be started, for the client to try again and say why."""
    try:
        return spawn_server(initialization_options=client_options(args), request_permission=asks)
    except OSError:
        return None


class RunStart(NamedTuple):
    """``agentls run`` checked and started: its model, its prompt and its server."""

    model: tuple[str, str] | None
    prompt: str
    piped: bool
    """Text was piped into stdin: no terminal there to ask permission questions on."""
    server: SpawnedServer | None


def start_run(args: argparse.Namespace) -> RunStart | int:
    """``run``'s options and prompt checked (the exit code when one is wrong), and its server started."""
    model, problem = check_options(args, "run")
    if problem:
        print(problem, file=sys.stderr)
        return 2
    prompt = " ".join(args.prompt or [])
    piped = _piped_input()
    if piped.strip():
        prompt = f"{prompt}\n\n{piped}" if prompt else piped
    if not prompt.strip():
        print("agentls run: give a prompt (or pipe text into it)", file=sys.stderr)
        return 2
    return RunStart(model, prompt, bool(piped), start_server(args, asks=True))


def _piped_input() -> str:
    """What is piped or redirected into stdin (``git diff | agentls run -p "review this"``), else ``""``.

    Only a pipe or a file is read: a terminal or ``/dev/null`` has nothing to add.
    """
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return ""
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return ""
    return sys.stdin.read()


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
