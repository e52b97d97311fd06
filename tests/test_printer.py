"""``EventPrinter`` (``agentls run``, ``agentls demo``) on the coding roles' messages."""

from __future__ import annotations

import io

import pytest
from agentls.ai import TextContent, to_wire
from agentls.cli.printer import EventPrinter
from agentls.session.messages import (
    bash_execution_message,
    branch_summary_message,
    compaction_summary_message,
    custom_message,
)
from rich.console import Console

MESSAGES = [
    bash_execution_message("make test", output="ok", exit_code=2, cancelled=False, truncated=False),
    bash_execution_message("sleep 9", output="", exit_code=None, cancelled=True, truncated=False),
    bash_execution_message(
        "cat .env", output="x", exit_code=0, cancelled=False, truncated=False, exclude_from_context=True
    ),
    custom_message("note", [TextContent(text="remember")], display=True),
    branch_summary_message("elsewhere", "e1"),
    compaction_summary_message("so far", 100),
]


def printed(verbose: bool) -> str:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200, color_system=None), verbose=verbose)
    for message in MESSAGES:
        for kind in ("message_start", "message_end"):
            printer({"type": kind, "message": to_wire(message)})
    return out.getvalue()


@pytest.mark.parametrize("verbose", [True, False])
def test_the_coding_roles_print_and_a_command_is_one_line(verbose: bool) -> None:
    lines = printed(verbose).splitlines()
    bash_lines = [line for line in lines if line.startswith("message_end bashExecution")]
    assert bash_lines == [
        "message_end bashExecution $ make test (exit 2)",
        "message_end bashExecution $ sleep 9 (cancelled)",
        "message_end bashExecution $ cat .env (exit 0, not sent to the model)",
    ]
    assert len(lines) == (12 if verbose else 3)  # verbose: one line for every event
