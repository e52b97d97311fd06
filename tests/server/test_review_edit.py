"""The permission mode ``review``: a change is shown to the user (``agent/reviewEdit``) before it lands.

pytest-lsp's client plays the editor (:class:`~tests.server.test_editor_workspace.Editor`),
which answers the review as the user would: accept, reject with a reason, or never.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.test_editor_workspace import EDITING, editor_session, run, script, text_of
from tests.server.test_pytest_lsp import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")

REVIEWING = types.ClientCapabilities(
    workspace=EDITING.workspace, experimental={"agent": {"reviewEdit": True}}
)
EDIT = tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "b = 2", "newText": "b = 'two'"}]})


def options(data_dir: Path, faux_script: FauxScript) -> dict[str, Any]:
    return {
        "dataDir": str(data_dir),
        "fauxScript": str(faux_script.path),
        "permissions": {"edit": "review", "write": "review"},
    }


async def test_an_accepted_change_lands_and_the_review_showed_the_buffer_and_the_new_text(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("x = 0\ny = 0\na = 1\nb = 2\n")
    script(faux_script, EDIT)
    reviewing = options(data_dir, faux_script)
    async with editor_session(data_dir, faux_script, REVIEWING, options=reviewing) as (client, editor):
        editor.open(target)
        editor.type(target, "# unsaved\nx = 0\ny = 0\na = 1\nb = 2\n")
        editor.review_answer.set_result({"outcome": "accept"})
        [result] = await run(client, workspace)
        [review] = editor.reviews
        buffer_text = editor.text(target)
    assert result["isError"] is False, text_of(result)
    assert review["toolName"] == "edit" and review["path"] == "m.py" and review["uri"] == target.as_uri()
    assert review["oldText"] == "# unsaved\nx = 0\ny = 0\na = 1\nb = 2\n"
    assert review["newText"] == "# unsaved\nx = 0\ny = 0\na = 1\nb = 'two'\n"
    assert buffer_text == review["newText"]
    assert target.read_text() == "x = 0\ny = 0\na = 1\nb = 'two'\n"  # the user's unsaved lines stay unsaved


async def test_a_rejected_change_is_the_tools_error_with_the_reason_and_nothing_is_written(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("a = 1\nb = 2\n")
    script(faux_script, EDIT, tool_call("w", "write", {"path": "new.py", "content": "NEW = 1\n"}))
    reviewing = options(data_dir, faux_script)
    async with editor_session(data_dir, faux_script, REVIEWING, options=reviewing) as (client, editor):
        editor.open(target)
        editor.review_answer.set_result({"outcome": "reject", "reason": "keep b numeric"})
        edited, written = await run(client, workspace)
        reviews, edits = editor.reviews, editor.edits
    assert edited["isError"] is True
    assert "The user rejected the change to m.py: keep b numeric" in text_of(edited)
    assert written["isError"] is True and [r["oldText"] for r in reviews] == ["a = 1\nb = 2\n", ""]
    assert edits == [] and target.read_text() == "a = 1\nb = 2\n" and not (workspace / "new.py").exists()


async def test_an_abort_ends_the_review_and_the_call(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("a = 1\nb = 2\n")
    script(faux_script, EDIT)
    reviewing = options(data_dir, faux_script)
    async with editor_session(data_dir, faux_script, REVIEWING, options=reviewing) as (client, editor):
        created = plain(
            await within(client.protocol.send_request_async("agent/newSession", {"cwd": str(workspace)}))
        )
        session = created["sessionId"]
        settled = client.protocol.wait_for_notification_async("agent/settled")
        await within(client.protocol.send_request_async("agent/prompt", {"sessionId": session, "text": "go"}))
        await within(editor.review_asked.wait())  # the review is on the screen; the user does nothing
        await within(client.protocol.send_request_async("agent/abort", {"sessionId": session}))
        assert plain(await within(settled))["stopReason"] == "aborted"
    assert target.read_text() == "a = 1\nb = 2\n"


async def test_a_client_that_cannot_review_is_asked_instead(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "m.py"
    target.write_text("a = 1\nb = 2\n")
    script(faux_script, EDIT)
    asking = types.ClientCapabilities(
        workspace=EDITING.workspace, experimental={"agent": {"requestPermission": True}}
    )
    async with editor_session(data_dir, faux_script, asking, options=options(data_dir, faux_script)) as (
        client,
        editor,
    ):
        questions: list[Any] = []

        @client.feature("agent/requestPermission")
        def answer(params: Any) -> dict[str, Any]:
            questions.append(plain(params))
            return {"outcome": "reject"}

        [result] = await run(client, workspace)
        assert editor.reviews == []
    assert [q["toolName"] for q in questions] == ["edit"]
    assert result["isError"] is True and target.read_text() == "a = 1\nb = 2\n"
