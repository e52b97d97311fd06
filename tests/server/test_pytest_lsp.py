"""The server as any LSP client sees it: pytest-lsp's client, not agentls's own."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from agentls.protocol import PROTOCOL_VERSION
from agentls.protocol_methods import REQUESTS
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.server.conftest import FauxScript, within


def plain(value: Any) -> Any:
    """A result as plain JSON data (pytest-lsp's converter turns objects into named tuples)."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


pytestmark = pytest.mark.asyncio(loop_scope="module")  # as every test of this package (see conftest)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "agentls", "serve"]), loop_scope="module"
)
async def lsp(lsp_client: LanguageClient, data_dir: Path, faux_script: FauxScript) -> Any:
    faux_script([{"content": "Hello from the faux model."}])
    result = await within(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(experimental={"agent": {"requestPermission": False}}),
                initialization_options={"dataDir": str(data_dir), "fauxScript": str(faux_script.path)},
            )
        )
    )
    lsp_client.initialize_result = result  # type: ignore[attr-defined]
    yield
    await within(lsp_client.shutdown_session())


async def test_handshake(lsp: LanguageClient) -> None:
    result = lsp.initialize_result  # type: ignore[attr-defined]
    assert result.server_info.name == "agentls"
    agent = result.capabilities.experimental["agent"]
    assert agent["version"] == PROTOCOL_VERSION
    assert agent["methods"] == sorted(REQUESTS)
    assert "faux" in agent["features"] and "editorWorkspace" in agent["features"]
    sync = result.capabilities.text_document_sync
    assert sync.open_close is True and sync.change == types.TextDocumentSyncKind.Incremental


async def test_raw_agent_requests_and_notifications(lsp: LanguageClient) -> None:
    models = plain(await within(lsp.protocol.send_request_async("agent/listModels", {})))
    assert [(m["provider"], m["id"]) for m in models["models"]] == [("faux", "faux-1")]
    assert plain(await within(lsp.protocol.send_request_async("agent/listModels", []))) == models

    session = plain(await within(lsp.protocol.send_request_async("agent/newSession", {})))["sessionId"]
    settled = lsp.protocol.wait_for_notification_async("agent/settled")
    run = plain(
        await within(lsp.protocol.send_request_async("agent/prompt", {"sessionId": session, "text": "Hi"}))
    )
    settled_params = plain(await within(settled))
    assert settled_params == {
        "sessionId": session,
        "seq": settled_params["seq"],
        "runId": run["runId"],
        "stopReason": "stop",
    }

    messages = plain(
        await within(lsp.protocol.send_request_async("agent/getMessages", {"sessionId": session}))
    )
    assert messages["total"] == 2
    assert messages["messages"][1]["content"] == [{"type": "text", "text": "Hello from the faux model."}]

    with pytest.raises(JsonRpcException) as caught:
        await within(lsp.protocol.send_request_async("agent/prompt", {"sessionId": session}))
    assert caught.value.code == -32602 and "text: Field required" in caught.value.message
    with pytest.raises(JsonRpcException) as caught:
        await within(lsp.protocol.send_request_async("agent/getState", {"sessionId": "nope"}))
    assert caught.value.code == -32000 and plain(caught.value.data)["kind"] == "unknownSession"


async def test_warnings_reach_the_client_as_log_messages(lsp: LanguageClient, data_dir: Path) -> None:
    created = plain(await within(lsp.protocol.send_request_async("agent/newSession", {"cwd": str(data_dir)})))
    session_id = created["sessionId"]
    # A copy of the session file whose last line was cut, as a crash mid-write would leave it.
    copy_id = "copy" + session_id[4:]
    text = (data_dir / "sessions" / f"{session_id}.jsonl").read_text(encoding="utf-8")
    damaged = text.replace(session_id, copy_id, 1) + '{"type": "message", "id": "x", "parentId"'
    (data_dir / "sessions" / f"{copy_id}.jsonl").write_text(damaged, encoding="utf-8")
    lsp.log_messages.clear()
    await within(lsp.protocol.send_request_async("agent/loadSession", {"sessionId": copy_id}))
    messages = [m.message for m in lsp.log_messages]
    assert any(m.startswith("agentls: ") and copy_id in m for m in messages), messages
