"""``ShellCommand``, the executor the ``bash`` tool and ``agent/bash`` share: streamed chunks and the result.

The process-group, abort, timeout and truncation rules are tested through the tool in
``test_bash.py``; this covers what only the executor's other user relies on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentls.ai import AbortController
from agentls.tools.processes import ProcessTracker
from agentls.tools.shell import MAX_LINES, ShellCommand


async def test_chunks_are_the_whole_output_as_text_even_when_the_result_is_cut(tmp_path: Path) -> None:
    chunks: list[str] = []
    # "é" split across two writes: the chunks are decoded across the boundary.
    command = r"printf '\xc3'; sleep 0.1; printf '\xa9\n'; seq 1 3000"
    shell = await ShellCommand.start(command, str(tmp_path), ProcessTracker(), chunks.append)
    result = await shell.wait()
    expected = "é\n" + "".join(f"{n}\n" for n in range(1, 3001))
    assert "".join(chunks) == expected
    assert result.exit_code == 0 and result.ended_by is None
    assert result.truncated and result.shown_lines == MAX_LINES and result.total_lines == 3001
    assert result.output == "\n".join(str(n) for n in range(1001, 3001))
    assert result.full_output_path is not None
    assert await asyncio.to_thread(Path(result.full_output_path).read_text) == expected


async def test_an_aborted_command_keeps_its_output_and_has_no_exit_code(tmp_path: Path) -> None:
    started = asyncio.Event()
    shell = await ShellCommand.start(
        "echo started; sleep 1000", str(tmp_path), ProcessTracker(), lambda chunk: started.set()
    )
    controller = AbortController()
    waiting = asyncio.ensure_future(shell.wait(controller.signal))
    await asyncio.wait_for(started.wait(), 10)
    controller.abort()
    result = await asyncio.wait_for(waiting, 10)
    assert result.ended_by == "aborted" and result.exit_code is None
    assert result.output == "started" and not result.truncated and result.full_output_path is None
