"""The server gives up a question it asked the Python client: the client's answer is cancelled cleanly.

An aborted run cancels its pending permission question with ``$/cancelRequest``. The client must
read it (its JSON-RPC layer has no typed params), cancel the coroutine answering, answer the server
``RequestCancelled`` as LSP asks, and the server must take that late answer quietly.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentls.client import AgentClient
from agentls.protocol import RequestPermissionParams

from tests.server.conftest import FauxScript, server_options, tool_call, watchdog, within


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    with watchdog():
        yield


async def test_an_aborted_runs_question_is_cancelled_at_the_client_and_nothing_complains(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = FauxScript(tmp_path / "faux.json")
    script(
        [
            {"content": [tool_call("b1", "bash", {"command": "touch made.txt"})], "stopReason": "toolUse"},
            {"content": "Stopped."},
        ]
    )
    asked = asyncio.Event()
    cancelled = asyncio.Event()

    async def wait_forever(request: RequestPermissionParams) -> str:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "allowOnce"

    caplog.set_level(logging.DEBUG)
    client = AgentClient(initialization_options=server_options(tmp_path, script), on_permission=wait_forever)
    async with client:
        session = await within(client.new_session(cwd=str(tmp_path), permissions={"bash": "ask"}))
        accepted = await within(client.prompt(session, "Make the file"))
        await within(asked.wait())
        await within(client.abort(session))
        await within(cancelled.wait())
        settled = await within(client.wait_settled(accepted.run_id))
        assert settled.stop_reason == "aborted"
        assert not (tmp_path / "made.txt").exists()
        # the connection still works, and a later question is asked and answered again
        assert (await within(client.get_state(session))).session_id == session
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "AttributeError" not in text and "Traceback" not in text
    assert "not a pending request" not in text  # the server took the late RequestCancelled quietly
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
