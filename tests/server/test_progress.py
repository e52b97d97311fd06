"""Tool executions reach a plain LSP client as work-done progress (``$/progress``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.test_pytest_lsp import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")

COMMAND = "for i in 1 2 3; do echo line $i; sleep 0.2; done"


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "agentls", "serve"]), loop_scope="module"
)
async def lsp(lsp_client: LanguageClient, data_dir: Path, faux_script: FauxScript) -> Any:
    faux_script(
        [
            {"content": [tool_call("b1", "bash", {"command": COMMAND})], "stopReason": "toolUse"},
            {"content": "ok"},
        ]
    )
    await within(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    window=types.WindowClientCapabilities(work_done_progress=True)
                ),
                initialization_options={
                    "dataDir": str(data_dir),
                    "fauxScript": str(faux_script.path),
                    "permissions": {"bash": "allow"},
                },
            )
        )
    )
    yield
    await within(lsp_client.shutdown_session())


async def test_a_tool_run_is_mirrored_as_begin_reports_and_end(lsp: LanguageClient, data_dir: Path) -> None:
    session = plain(await within(lsp.protocol.send_request_async("agent/newSession", {"cwd": str(data_dir)})))
    settled = lsp.protocol.wait_for_notification_async("agent/settled")
    await within(
        lsp.protocol.send_request_async("agent/prompt", {"sessionId": session["sessionId"], "text": "go"})
    )
    await within(settled)
    token = f"agentls/{session['sessionId']}/b1"
    # Progress runs alongside the run's events: wait for its end rather than assume it came first.
    while not (reports := lsp.progress_reports.get(token)) or reports[-1].kind != "end":
        await within(lsp.protocol.wait_for_notification_async("$/progress"))
    assert reports[0].kind == "begin" and reports[0].title == f"bash: {COMMAND}"
    assert reports[-1].kind == "end" and reports[-1].message == "done"
    middle = [r.message for r in reports[1:-1]]
    assert middle and all(r.kind == "report" for r in reports[1:-1])
    assert middle[-1].startswith("line ")
