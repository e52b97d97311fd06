"""A server's file descriptors and threads do not grow with the sessions it keeps open.

Each loaded session used to hold its session file open and a writer thread of its own
for the server's life (200 sessions: 206 descriptors, 203 threads). Now a session file is
open only while lines are being written, by a small pool shared by every session.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.server.conftest import FauxScript, Servers, server_options, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

SESSIONS = 60


def counts(pid: int) -> tuple[int, int]:
    """The process's open file descriptors and threads."""
    return len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task"))


async def test_many_open_sessions_hold_no_descriptor_or_thread_each(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": f"Answer {i}."} for i in range(SESSIONS + 1)])
    client = await servers.start(server_options(data_dir, faux_script))
    pid = client._rpc._server.pid  # type: ignore[union-attr]
    first = await within(client.new_session(cwd=str(workspace)))
    await within(client.prompt(first, "warm up", wait=True))
    fds, threads = counts(pid)
    for i in range(SESSIONS):
        session = await within(client.new_session(cwd=str(workspace)))
        assert (await within(client.prompt(session, f"hello {i}", wait=True))).stop_reason == "stop"  # type: ignore[union-attr]
    more_fds, more_threads = counts(pid)
    assert more_fds - fds < 10, f"{more_fds - fds} more descriptors for {SESSIONS} more sessions"
    assert more_threads - threads < 10, f"{more_threads - threads} more threads for {SESSIONS} more sessions"
    listed = await within(client.list_sessions(str(workspace)))
    assert len(listed) == SESSIONS + 1 and all(info.message_count == 2 for info in listed)
