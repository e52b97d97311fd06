"""``agentls run`` shows a compaction as one line, when it ends."""

from __future__ import annotations

import io

import pytest
from agentls.cli.printer import EventPrinter
from rich.console import Console


@pytest.mark.parametrize(
    ("note", "line"),
    [
        (
            {
                "phase": "end",
                "reason": "threshold",
                "tokensBefore": 120000,
                "tokensAfter": 21000,
                "summary": "s",
            },
            "compaction (threshold) context 120k → 21k",
        ),
        (
            {"phase": "end", "reason": "overflow", "tokensBefore": 9, "tokensAfter": 3, "willRetry": True},
            "compaction (overflow) context 9 → 3, retrying",
        ),
        (
            {"phase": "end", "reason": "manual", "tokensBefore": 9, "aborted": True},
            "compaction (manual) aborted",
        ),
        (
            {
                "phase": "end",
                "reason": "threshold",
                "tokensBefore": 9,
                "errorMessage": "Auto-compaction failed: x",
            },
            "compaction (threshold) Auto-compaction failed: x",
        ),
    ],
)
def test_a_compaction_is_one_line(note: dict, line: str) -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200, color_system=None), verbose=False)
    printer.compaction({"phase": "start", "reason": note["reason"], "tokensBefore": 9})
    printer.compaction(note)
    assert out.getvalue() == line + "\n"
