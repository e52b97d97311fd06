"""Editor context on prompts and queued messages, and the ``diagnostics`` tool, through a real server.

pytest-lsp's client plays the editor (:class:`~tests.server.test_editor_workspace.Editor`):
it opens documents, types without saving, and answers ``agent/getDiagnostics`` with
what its language servers would report.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.test_editor_workspace import EDITING, editor_session, script, text_of
from tests.server.test_pytest_lsp import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")

DIAGNOSING = types.ClientCapabilities(
    workspace=EDITING.workspace, experimental={"agent": {"diagnostics": True}}
)
UNDEFINED_NAME = {
    "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 12}},
    "severity": 1,
    "message": 'Name "c" is not defined',
    "source": "pyright",
    "code": "reportUndefinedVariable",
}


def selection(path: Path, start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
    return {
        "type": "selection",
        "uri": path.as_uri(),
        "range": {
            "start": {"line": start[0], "character": start[1]},
            "end": {"line": end[0], "character": end[1]},
        },
    }


async def request(client: Any, method: str, params: dict[str, Any]) -> Any:
    return plain(await within(client.protocol.send_request_async(method, params)))


async def new_session(client: Any, cwd: Path) -> str:
    return (await request(client, "agent/newSession", {"cwd": str(cwd)}))["sessionId"]


async def prompt_and_settle(client: Any, session: str, **params: Any) -> list[dict[str, Any]]:
    settled = client.protocol.wait_for_notification_async("agent/settled")
    await request(client, "agent/prompt", {"sessionId": session, **params})
    assert plain(await within(settled))["stopReason"] == "stop"
    return (await request(client, "agent/getMessages", {"sessionId": session}))["messages"]


async def test_a_selection_and_a_file_reach_the_model_from_the_buffer_before_the_users_text(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    calc = workspace / "calc.py"
    calc.write_text("def add(a, b):\n    return a + b\n")
    (workspace / "README.md").write_text("# Calc\n")
    script(faux_script)
    async with editor_session(data_dir, faux_script, EDITING) as (client, editor):
        editor.open(calc)
        editor.type(calc, "def add(a, b):\n    return a - b  # unsaved\n")
        session = await new_session(client, workspace)
        context = [
            selection(calc, (0, 0), (2, 0)),
            {"type": "file", "uri": (workspace / "README.md").as_uri()},
        ]
        messages = await prompt_and_settle(client, session, text="Why is add wrong?", context=context)
    attached, user = messages[0], messages[1]
    assert (attached["role"], attached["customType"], attached["display"]) == (
        "custom",
        "editorContext",
        True,
    )
    assert user["role"] == "user" and user["content"][0]["text"] == "Why is add wrong?"
    assert attached["content"] == (
        "The user attached context from the editor:\n\n"
        '<selection path="calc.py" language="python" lines="1-2">\n'
        "1: def add(a, b):\n"
        "2:     return a - b  # unsaved\n"
        "</selection>\n\n"
        '<file path="README.md" language="markdown">\n'
        "1: # Calc\n"
        "</file>"
    )
    chips = attached["details"]["attachments"]
    assert [(c["type"], c["path"], c["lines"], c["truncated"]) for c in chips] == [
        ("selection", "calc.py", 2, False),
        ("file", "README.md", 1, False),
    ]
    assert (chips[0]["startLine"], chips[0]["endLine"]) == (1, 2)


async def test_the_diagnostics_tool_and_attachment_come_from_the_editors_language_servers(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    calc = workspace / "calc.py"
    calc.write_text("a = 1\nb = a + c\n")
    script(faux_script, tool_call("d", "diagnostics", {"path": "calc.py"}))
    async with editor_session(data_dir, faux_script, DIAGNOSING) as (client, editor):
        editor.open(calc)
        editor.diagnostics[calc.as_uri()] = [UNDEFINED_NAME]
        session = await new_session(client, workspace)
        state = await request(client, "agent/getState", {"sessionId": session})
        assert "- diagnostics:" in state["systemPrompt"]
        context = [{"type": "diagnostics", "uri": calc.as_uri()}]
        messages = await prompt_and_settle(client, session, text="Fix it", context=context)
        asked = editor.diagnostics_requests
    problem = 'calc.py:2:12: error: Name "c" is not defined [reportUndefinedVariable] (pyright)'
    attached = messages[0]
    assert attached["content"].endswith(f'<diagnostics path="calc.py">\n{problem}\n</diagnostics>')
    assert attached["details"]["attachments"][0]["count"] == 1
    [result] = [m for m in messages if m["role"] == "toolResult"]
    assert result["toolName"] == "diagnostics" and not result["isError"]
    assert text_of(result) == problem
    assert asked == [{"uris": [calc.as_uri()]}, {"uris": [calc.as_uri()]}]


async def test_without_the_capability_there_is_no_diagnostics_tool_and_the_attachment_is_refused(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    script(faux_script)
    async with editor_session(data_dir, faux_script, EDITING) as (client, _editor):
        session = await new_session(client, workspace)
        state = await request(client, "agent/getState", {"sessionId": session})
        assert "diagnostics" not in state["systemPrompt"]
        with pytest.raises(Exception, match=r"context\[0\]: the editor does not answer agent/getDiagnostics"):
            await request(
                client,
                "agent/prompt",
                {"sessionId": session, "text": "x", "context": [{"type": "diagnostics"}]},
            )


@pytest.mark.parametrize(
    ("attachment", "error"),
    [
        ({"type": "file", "uri": "file:///etc/passwd"}, r"context\[0\]: .*outside"),
        (
            {"type": "file", "uri": "https://example.com/a.py"},
            r"context\[0\]: 'https://example.com/a.py' is not",
        ),
        ({"type": "file", "uri": "MISSING"}, r"context\[0\]: missing.py does not exist"),
        ({"type": "selection", "uri": "CALC", "range": {}}, r"range"),
        ("SELECTION_PAST_END", r"context\[0\]: the range is outside calc.py, which has 2 lines"),
        ({"type": "clipboard"}, r"clipboard|type"),
    ],
)
async def test_bad_attachments_are_invalid_params_and_start_nothing(
    attachment: Any, error: str, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    calc = workspace / "calc.py"
    calc.write_text("a = 1\n")
    if attachment == "SELECTION_PAST_END":
        attachment = selection(calc, (5, 0), (6, 0))
    elif attachment.get("uri") == "MISSING":
        attachment = {**attachment, "uri": (workspace / "missing.py").as_uri()}
    elif attachment.get("uri") == "CALC":
        attachment = {**attachment, "uri": calc.as_uri()}
    script(faux_script)
    async with editor_session(data_dir, faux_script, EDITING) as (client, _editor):
        session = await new_session(client, workspace)
        with pytest.raises(Exception, match=error):
            await request(
                client, "agent/prompt", {"sessionId": session, "text": "x", "context": [attachment]}
            )
        with pytest.raises(Exception, match=error):
            await request(
                client, "agent/followUp", {"sessionId": session, "text": "x", "context": [attachment]}
            )
        state = await request(client, "agent/getState", {"sessionId": session})
    assert state["messageCount"] == 0 and not state["isRunning"]
    assert state["queue"] == {"steering": [], "followUp": []}


async def test_a_steering_message_with_context_is_delivered_together_with_it(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    faux_script([{"content": "First answer, streamed slowly."}, {"content": "Second answer."}], slow=True)
    async with editor_session(data_dir, faux_script, EDITING) as (client, _editor):
        session = await new_session(client, workspace)
        streaming = asyncio.Event()  # the first answer is streaming: past the steering looked at before it

        def on_event(params: Any) -> None:
            if plain(params)["event"]["type"] == "message_update":
                streaming.set()

        client.feature("agent/event")(on_event)
        settled = client.protocol.wait_for_notification_async("agent/settled")
        await request(client, "agent/prompt", {"sessionId": session, "text": "Go"})
        await within(streaming.wait())
        context = [{"type": "file", "uri": (workspace / "notes.txt").as_uri()}]
        item = await request(
            client, "agent/steer", {"sessionId": session, "text": "And this?", "context": context}
        )
        queue = await request(client, "agent/getQueue", {"sessionId": session})
        assert [i["id"] for i in queue["steering"]] == [item["itemId"]]
        assert queue["steering"][0]["context"] == context
        await within(settled)
        messages = (await request(client, "agent/getMessages", {"sessionId": session}))["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "custom", "user", "assistant"]
    assert "remember the milk" in messages[2]["content"] and messages[3]["content"][0]["text"] == "And this?"


async def test_a_queued_item_with_context_is_one_item_and_clearing_it_removes_both_messages(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    faux_script([{"content": "A slow answer to wait on."}], slow=True)
    async with editor_session(data_dir, faux_script, EDITING) as (client, _editor):
        session = await new_session(client, workspace)
        settled = client.protocol.wait_for_notification_async("agent/settled")
        await request(client, "agent/prompt", {"sessionId": session, "text": "Go"})
        context = [{"type": "file", "uri": (workspace / "notes.txt").as_uri()}]
        params = {"sessionId": session, "text": "Later", "context": context}
        item = (await request(client, "agent/followUp", params))["itemId"]
        removed = await request(client, "agent/clearQueue", {"sessionId": session, "itemId": item})
        assert [i["id"] for i in removed["followUp"]] == [item] and removed["followUp"][0][
            "context"
        ] == context
        await within(settled)
        messages = (await request(client, "agent/getMessages", {"sessionId": session}))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


async def test_an_oversized_attachment_is_cut_with_a_note_saying_where(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    big = workspace / "big.txt"
    big.write_text("".join(f"line {n}\n" for n in range(1, 2501)))
    script(faux_script)
    async with editor_session(data_dir, faux_script, EDITING) as (client, _editor):
        session = await new_session(client, workspace)
        context = [{"type": "file", "uri": big.as_uri()}]
        messages = await prompt_and_settle(client, session, text="Summarise", context=context)
    content = messages[0]["content"]
    assert "2000: line 2000\n" in content and "2001: line 2001" not in content
    assert "[cut: lines 1-2000 of 1-2500 shown; read big.txt with the read tool for the rest]" in content
    chip = messages[0]["details"]["attachments"][0]
    assert (chip["lines"], chip["truncated"]) == (2500, True)
