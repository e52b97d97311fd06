"""The workspace boundary end to end, against the real server: open buffers and swapped symlinks.

An editor may have open a document whose path is a symlink pointing out of the
workspace; ``grep`` and ``find`` must not show it, as ``read`` refuses it. A process in
the workspace may swap a symlink between an inside and an outside file while the model's
tool calls run; no ``read`` may return the outside file and no ``write`` or ``edit`` may
change it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient

from tests.server.conftest import FauxScript, tool_call, within
from tests.server.test_editor_workspace import EDITING, editor_session, run, script, text_of
from tests.tools.test_files import Swapper, contents

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECRET = "TOP-SECRET-OUTSIDE needle"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the workspace, with text no tool result may ever show."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"{SECRET}\n")
    return (folder / "secret.txt").resolve()


async def test_an_open_document_through_a_symlink_out_is_not_searched(
    data_dir: Path, faux_script: FauxScript, workspace: Path, outside: Path
) -> None:
    (workspace / "in.txt").write_text("an inside needle\n")
    (workspace / "link.txt").symlink_to(outside)
    calls = [
        tool_call("g", "grep", {"pattern": "needle"}),
        tool_call("f", "find", {"pattern": "*.txt"}),
        tool_call("r", "read", {"path": "link.txt"}),
        tool_call("o", "grep", {"pattern": "needle", "path": "link.txt"}),
    ]
    script(faux_script, *calls)
    async with editor_session(data_dir, faux_script, EDITING) as (client, editor):
        editor.open(workspace / "link.txt", f"{SECRET} (unsaved)\n")  # the editor followed the link
        editor.open(workspace / "in.txt")
        grep, find, read, grep_link = await run(client, workspace, *calls)
    assert text_of(grep).splitlines() == ["in.txt:1: an inside needle"]
    assert text_of(find).splitlines() == ["in.txt"]
    for refused in (read, grep_link):
        assert refused["isError"] is True and "outside the workspace" in text_of(refused)
        assert SECRET not in json.dumps(refused)


def racing_script(rounds: int, reads: int) -> list[dict[str, Any]]:
    """``rounds`` turns of ``reads`` parallel reads of ``link.txt``, each round also a write and an edit."""
    responses: list[dict[str, Any]] = []
    for index in range(rounds):
        calls = [tool_call(f"r{index}-{n}", "read", {"path": "link.txt"}) for n in range(reads)]
        write = {"path": "link.txt", "content": f"inside\nround {index}\n"}
        calls.append(tool_call(f"w{index}", "write", write))
        responses.append({"content": calls, "stopReason": "toolUse"})
        edit = {"path": "link.txt", "edits": [{"oldText": f"round {index}", "newText": f"edited {index}"}]}
        responses.append({"content": [tool_call(f"e{index}", "edit", edit)], "stopReason": "toolUse"})
    return [*responses, {"content": "done"}]


async def test_tool_calls_racing_a_swapped_symlink_never_reach_the_outside_file(
    client: AgentClient, faux_script: FauxScript, workspace: Path, outside: Path
) -> None:
    inside = workspace / "inside.txt"
    inside.write_text("inside\n")
    link = workspace / "link.txt"
    link.symlink_to("inside.txt")
    rounds, reads = 6, 30
    faux_script(racing_script(rounds, reads))
    session = await within(client.new_session(cwd=str(workspace)))
    with Swapper(link, inside, outside, most=1_000_000) as swapper:
        settled = await within(client.prompt(session, "go", wait=True), 30)
    assert settled.stop_reason == "stop"
    messages = (await within(client.get_messages(session))).messages
    results = [m for m in messages if m["role"] == "toolResult"]
    assert len(results) == rounds * (reads + 2)
    leaked = [r["toolCallId"] for r in results if "TOP-SECRET" in json.dumps(r)]
    assert leaked == [] and swapper.swaps > 0
    refused = [r for r in results if r["isError"]]
    assert all("outside the workspace" in text_of(r) or "edit" in r["toolName"] for r in refused), refused
    assert any(not r["isError"] and r["toolName"] == "read" for r in results)  # the inside file was read
    assert contents(outside.parent) == {"secret.txt": f"{SECRET}\n"}
    assert contents(workspace)["inside.txt"].startswith("inside\n")
