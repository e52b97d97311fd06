"""Permission questions answered by a plain LSP client (pytest-lsp), and "allow always" across restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.test_editor_workspace import editor_session, run, script, text_of
from tests.server.test_pytest_lsp import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_show_message_request_allow_always_is_remembered_across_a_restart(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    script(faux_script, tool_call("b", "bash", {"command": "echo ran >> log.txt"}))
    asked: list[types.ShowMessageRequestParams] = []

    async with editor_session(data_dir, faux_script, types.ClientCapabilities()) as (client, _):

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def choose(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            asked.append(params)
            return types.MessageActionItem(title="Allow always")

        [result] = await run(client, workspace)

    assert result["isError"] is False, text_of(result)
    [question] = asked
    assert [action.title for action in question.actions or []] == ["Allow once", "Allow always", "Reject"]
    assert "echo ran >> log.txt" in question.message

    async with editor_session(data_dir, faux_script, types.ClientCapabilities()) as (client, _):

        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def refuse(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            asked.append(params)
            return types.MessageActionItem(title="Reject")

        [again] = await run(client, workspace)  # a new server process: the rule comes from the data dir
        rules = plain(
            await within(
                client.protocol.send_request_async("agent/listPermissionRules", {"cwd": str(workspace)})
            )
        )

    assert again["isError"] is False and len(asked) == 1
    assert (workspace / "log.txt").read_text() == "ran\nran\n"
    assert rules["rules"] == [{"workspace": str(workspace), "toolName": "bash"}]


async def test_agent_request_permission_carries_the_call_and_its_options(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    script(faux_script, tool_call("b1", "bash", {"command": "echo once > once.txt"}))
    requests: list[dict[str, Any]] = []
    capabilities = types.ClientCapabilities(experimental={"agent": {"requestPermission": True}})
    async with editor_session(data_dir, faux_script, capabilities) as (client, _):

        @client.feature("agent/requestPermission")
        def answer(params: Any) -> dict[str, Any]:
            requests.append(plain(params))
            return {"outcome": "allowOnce"}

        [result] = await run(client, workspace)
        rules = plain(await within(client.protocol.send_request_async("agent/listPermissionRules", {})))

    assert result["isError"] is False
    [request] = requests
    assert request["toolCallId"] == "b1" and request["toolName"] == "bash"
    assert request["args"] == {"command": "echo once > once.txt"}
    assert [option["id"] for option in request["options"]] == ["allowOnce", "allowAlways", "reject"]
    assert (workspace / "once.txt").read_text() == "once\n"
    assert rules["rules"] == []  # allow once is not remembered


async def test_an_abort_cancels_the_pending_question_at_the_client(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    script(faux_script, tool_call("b1", "bash", {"command": "echo never > never.txt"}))
    asked, cancelled = asyncio.Event(), asyncio.Event()
    capabilities = types.ClientCapabilities(experimental={"agent": {"requestPermission": True}})
    async with editor_session(data_dir, faux_script, capabilities) as (client, _):

        @client.feature("agent/requestPermission")
        async def never_answer(params: Any) -> dict[str, Any]:
            asked.set()
            try:
                await asyncio.Event().wait()  # a dialog the user leaves open
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return {"outcome": "allowOnce"}

        created = await within(
            client.protocol.send_request_async("agent/newSession", {"cwd": str(workspace)})
        )
        session = plain(created)["sessionId"]
        settled = client.protocol.wait_for_notification_async("agent/settled")
        await within(client.protocol.send_request_async("agent/prompt", {"sessionId": session, "text": "go"}))
        await within(asked.wait())
        await within(client.protocol.send_request_async("agent/abort", {"sessionId": session}))
        assert plain(await within(settled))["stopReason"] == "aborted"
        await within(cancelled.wait())  # the server sent $/cancelRequest for the question
    assert not (workspace / "never.txt").exists()
