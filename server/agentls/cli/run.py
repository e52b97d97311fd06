"""``agentls run``: one prompt through the server, shown as it streams (or only its answer, ``-p``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import stat
import sys
import time
from typing import TYPE_CHECKING, Any

from agentls.cli.in_process import in_process_client
from agentls.cli.mcp_report import McpReport
from agentls.cli.options import check_options, cli_hint, client_options, server_data_dir, write_json
from agentls.cli.permissions import refuser, terminal_asker
from agentls.cli.session_ids import stored_session
from agentls.client import SERVER_LOG, AgentClientError
from agentls.terminal_text import visible, visible_text

if TYPE_CHECKING:
    from rich.console import Console

    from agentls.cli.printer import Transcript


def _interactive(args: argparse.Namespace) -> bool:
    """Whether ``run`` can ask its user: a terminal on stdin and stderr, and no JSON output."""
    return not args.json and sys.stdin.isatty() and sys.stderr.isatty()


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


MCP_WARNING = re.compile(r"(agentls: )?(MCP server \S+ failed: |MCP configuration: )")
"""The server's warnings that :class:`McpReport`'s lines say already."""


class _VisibleFormatter(logging.Formatter):
    """A log line with its control characters written out: the server's warnings quote untrusted text."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def _show_server_warnings(log: logging.Logger) -> None:
    """The server's warnings (a provider retrying, a damaged session file) go to stderr as they come."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_VisibleFormatter("%(message)s"))
    handler.addFilter(lambda record: not MCP_WARNING.match(record.getMessage()))
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    log.propagate = False


async def run(args: argparse.Namespace) -> int:
    """``agentls run``: returns the exit code."""
    _show_server_warnings(SERVER_LOG)
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
    started = time.monotonic()
    transcript = None if args.json or args.print else _transcript()
    messages: list[dict[str, Any]] = []

    def show(line: str) -> None:  # an MCP server's trouble: in the transcript on a terminal, else on stderr
        if transcript is not None and transcript.rich:
            transcript.line(visible_text(line, "yellow"), kind="mcp")
        else:
            print(visible(line), file=sys.stderr, flush=True)

    mcp = McpReport(show, server_data_dir(args))
    try:
        ask = terminal_asker(transcript) if _interactive(args) and not piped else refuser()
        async with (
            in_process_client(initialization_options=client_options(args), on_permission=ask) as client,
            client.subscribe() as every_note,
            _following(mcp.follow(every_note)),
        ):
            session_id = await _chosen_session(client, args)
            if session_id is not None:
                await client.load_session(session_id)
                if model:
                    await client.set_model(session_id, *model)
            else:
                session_id = await client.new_session(
                    cwd=args.cwd, model=model, thinking_level=args.thinking, system_prompt=args.system_prompt
                )
            # one prompt, so the tools of servers still starting would never join: wait for them (a while)
            await mcp.started(await mcp.session(client, session_id), MCP_START_WAIT)
            async with client.subscribe(session_id) as notes:
                accepted = await client.prompt(session_id, prompt)
                run_id = getattr(accepted, "run_id", None)
                async for note in notes:
                    if args.json:
                        write_json({"method": note.method, "params": note.params})
                    elif note.method == "agent/event":
                        event = note.params["event"]
                        if event.get("type") == "agent_end":
                            messages.extend(event.get("messages") or [])
                        if transcript is not None:
                            transcript(event)
                    elif note.method == "agent/compaction" and transcript is not None:
                        transcript.compaction(note.params)
                    if note.method == "agent/settled" and note.params.get("runId") == run_id:
                        break
            settled = await client.wait_settled(run_id) if run_id else None
    except AgentClientError as error:
        print(visible(f"agentls run: {error}{cli_hint(error)}"), file=sys.stderr)
        return 2
    finally:
        if transcript is not None:
            transcript.close()
    if settled is None:
        return 1
    failed = settled.stop_reason in ("error", "aborted")
    if args.print and not failed:
        answer = final_text(messages)
        if sys.stdout.isatty():  # written out for the eyes; a pipe gets the answer as it is
            answer = visible(answer)
        sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
    elif transcript is not None:
        errors = _errors()
        footer = transcript.usage.line(time.monotonic() - started)
        stop = "" if settled.stop_reason == "stop" else f" · [red]{settled.stop_reason}[/red]"
        errors.print(f"\n[dim]{footer}{stop} · session {session_id}[/dim]", soft_wrap=True)
        if settled.stop_reason != "error":  # an error's fix is elsewhere (a key, a model): not in going on
            again = f'agentls run --continue "..."  (or --session {session_id[:8]})'
            errors.print(f"[dim]go on with: {again}[/dim]")
    if failed:
        if settled.error_message:
            _errors().print(visible_text(f"agentls run: {settled.error_message}", "red"))
        return 1
    if (budget := settled.budget) is not None:
        print(
            f"agentls run: the {budget.scope} reached its budget ({budget.kind}: {budget.used:g} of "
            f"{budget.limit:g}) and stopped; raise it with --max-turns or --max-cost",
            file=sys.stderr,
        )
        return 1
    return 0


def _transcript() -> Transcript:
    """The run as it streams, on stdout (rich and the markdown renderer imported for it, not for
    ``--print`` and ``--json``)."""
    from rich.console import Console

    from agentls.cli.printer import Transcript

    return Transcript(Console(highlight=False), show_errors=False)


def _errors() -> Console:
    """stderr, for the footer and a failed run's error."""
    from rich.console import Console

    from agentls.cli.printer import whole_lines_off_a_terminal

    return whole_lines_off_a_terminal(Console(stderr=True, highlight=False))


def final_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last assistant message (``agentls run --print``)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
    return ""


MCP_START_WAIT = 30.0
"""Seconds ``agentls run`` waits for its session's MCP servers to start before sending the prompt."""


@contextlib.asynccontextmanager
async def _following(work: Any) -> Any:
    """Run ``work`` (reading notifications) beside the body; cancelled at its end."""
    task = asyncio.ensure_future(work)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def _chosen_session(client: Any, args: argparse.Namespace) -> str | None:
    """The stored session ``--session`` (an id or a unique prefix) or ``--continue`` names, else ``None``."""
    if not args.session and not args.continue_:
        return None
    cwd = args.folder or os.getcwd()
    if args.continue_:
        sessions = await client.list_sessions(cwd)
        if not sessions:
            raise AgentClientError(f"no stored session in {cwd} to continue", kind="unknownSession")
        return str(sessions[0].session_id)
    return await stored_session(client, args.session)
