"""The file tools against hostile files, end to end through the real server.

A FIFO (or a device) must be refused, never opened and waited on: seven parallel reads
of one used to fill the worker threads so that even ``agent/newSession`` got no answer.
A 100 MB one-line file must be read in bounded memory; an edit beside a line that large
must be refused before anything is written, and any edit's diff stays bounded. agentls's
own data folder is off limits to the tools, whatever the permission mode.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient

from tests.server.conftest import FauxScript, Servers, server_options, tool_call, within
from tests.server.test_editor_context import DIAGNOSING, new_session, prompt_and_settle, request
from tests.server.test_editor_workspace import EDITING, editor_session, run

pytestmark = pytest.mark.asyncio(loop_scope="module")

MB = 1024 * 1024
RULES_EDIT = {"oldText": "[]", "newText": '[{"tool": "bash", "allow": true}]'}


def tool_turn(*calls: dict[str, Any]) -> list[dict[str, Any]]:
    """A faux script: one turn making ``calls`` in parallel, then a final answer."""
    return [{"content": list(calls), "stopReason": "toolUse"}, {"content": "done"}]


async def results_of(client: AgentClient, session: str) -> dict[str, dict[str, Any]]:
    messages = (await within(client.get_messages(session))).messages
    return {m["toolCallId"]: m for m in messages if m["role"] == "toolResult"}


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def peak_rss(client: AgentClient) -> int:
    """The server process's peak resident memory so far (``VmHWM``), in bytes."""
    status = Path(f"/proc/{client._rpc._server.pid}/status").read_text()
    [line] = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) * 1024


# --- FIFOs and devices -------------------------------------------------------------------


async def test_parallel_reads_of_a_fifo_are_refused_and_the_server_keeps_answering(
    client: AgentClient, faux_script: FauxScript, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    calls = [tool_call(f"r{n}", "read", {"path": "pipe"}) for n in range(7)]
    faux_script(tool_turn(*calls))
    session = await within(client.new_session(cwd=str(workspace)))
    settled = await within(client.prompt(session, "read the pipe", wait=True))
    assert settled.stop_reason == "stop"
    other = await within(client.new_session(cwd=str(workspace)), 5)  # the worker threads are free
    assert other != session
    results = await results_of(client, session)
    assert len(results) == 7
    for result in results.values():
        assert result["isError"] is True
        assert text_of(result).startswith("pipe is a FIFO (named pipe), not a regular file; read works on")


async def test_edit_and_write_of_a_fifo_are_refused(
    client: AgentClient, faux_script: FauxScript, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    calls = [
        tool_call("e", "edit", {"path": "pipe", "edits": [{"oldText": "a", "newText": "b"}]}),
        tool_call("w", "write", {"path": "pipe", "content": "over the pipe\n"}),
    ]
    faux_script(tool_turn(*calls))
    session = await within(client.new_session(cwd=str(workspace)))
    settled = await within(client.prompt(session, "edit the pipe", wait=True))
    assert settled.stop_reason == "stop"
    results = await results_of(client, session)
    assert text_of(results["e"]).startswith("pipe is a FIFO (named pipe), not a regular file; edit works on")
    assert text_of(results["w"]).startswith("pipe is a FIFO (named pipe), not a regular file; write works on")
    assert (workspace / "pipe").is_fifo()  # not replaced by a regular file


async def test_a_device_is_refused_even_where_outside_paths_are_allowed(
    client: AgentClient, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(tool_turn(tool_call("z", "read", {"path": "/dev/zero"})))
    session = await within(client.new_session(cwd=str(workspace), allow_outside_workspace=True))
    settled = await within(client.prompt(session, "read zero", wait=True))
    assert settled.stop_reason == "stop"
    result = (await results_of(client, session))["z"]
    assert result["isError"] and "/dev/zero is a character device, not a regular file" in text_of(result)


async def test_a_fifo_attached_as_a_file_is_a_clear_error(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    os.mkfifo(workspace / "pipe")
    context = [{"type": "file", "uri": (workspace / "pipe").as_uri()}]
    async with editor_session(data_dir, faux_script, EDITING) as (client, _editor):
        session = await new_session(client, workspace)
        with pytest.raises(
            Exception, match=r"context\[0\]: pipe is a FIFO \(named pipe\), not a regular file"
        ):
            await request(client, "agent/prompt", {"sessionId": session, "text": "x", "context": context})
        assert await within(new_session(client, workspace), 5)


# --- large files ---------------------------------------------------------------------------


async def test_reading_a_100_mb_line_stays_in_bounded_memory(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    with (workspace / "one-line.txt").open("wb") as file:
        for _ in range(100):
            file.write(b"x" * MB)
        file.write(b"\nsecond line\n")
    faux_script(tool_turn(tool_call("r", "read", {"path": "one-line.txt"})))
    client = await servers.start(server_options(data_dir, faux_script))
    session = await within(client.new_session(cwd=str(workspace)))
    before = peak_rss(client)
    settled = await within(client.prompt(session, "read it", wait=True), 30)
    assert settled.stop_reason == "stop"
    grown = peak_rss(client) - before
    assert grown < 40 * MB, f"reading grew the server's peak memory by {grown / MB:.0f} MB"
    result = (await results_of(client, session))["r"]
    assert text_of(result) == (
        "[Line 1 is 100.0MB, exceeds 50.0KB limit. Use bash: sed -n '1p' one-line.txt | head -c 51200]"
    )
    assert result["details"]["totalLines"] == 2 and result["details"]["nextOffset"] == 2


async def test_an_edit_beside_a_100_mb_line_is_refused_before_writing(
    client: AgentClient, faux_script: FauxScript, workspace: Path
) -> None:
    path = workspace / "huge.txt"
    with path.open("wb") as file:
        file.write(b"alpha\n")
        for _ in range(100):
            file.write(b"y" * MB)
        file.write(b"\n")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    edit = {"path": "huge.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]}
    faux_script(tool_turn(tool_call("e", "edit", edit)))
    session = await within(client.new_session(cwd=str(workspace)))
    settled = await within(client.prompt(session, "edit it", wait=True), 30)
    assert settled.stop_reason == "stop"  # the run goes on
    result = (await results_of(client, session))["e"]
    assert result["isError"] is True
    assert text_of(result).startswith("huge.txt is 100.0MB, larger than the 10.0MB that edit works on")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest  # nothing written


async def test_an_edit_beside_a_long_line_writes_and_shows_a_bounded_diff(
    client: AgentClient, faux_script: FauxScript, workspace: Path
) -> None:
    long_line = "z" * (3 * MB)
    (workspace / "wide.txt").write_text(f"{long_line}\nalpha\n{long_line}\n")
    edit = {"path": "wide.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]}
    faux_script(tool_turn(tool_call("e", "edit", edit)))
    session = await within(client.new_session(cwd=str(workspace)))
    settled = await within(client.prompt(session, "edit it", wait=True), 30)
    assert settled.stop_reason == "stop"
    result = (await results_of(client, session))["e"]
    assert result["isError"] is False
    assert (workspace / "wide.txt").read_text() == f"{long_line}\nbeta\n{long_line}\n"
    assert len(json.dumps(result)) < 20_000
    assert "-alpha\n+beta\n" in result["details"]["diff"]
    assert f" {'z' * 1000}… [{3 * MB - 1000} more characters]\n" in result["details"]["diff"]


# --- agentls's own files ---------------------------------------------------------------------


async def test_the_data_folder_inside_the_workspace_is_off_limits_in_every_mode(
    servers: Servers, faux_script: FauxScript, workspace: Path
) -> None:
    """``agentls chat`` started in ``$HOME``: the data folder ``~/.local/share/agentls`` is inside."""
    data = workspace / ".local" / "share" / "agentls"
    data.mkdir(parents=True)
    (data / "permissions.json").write_text('{"rules": []}\n')
    (workspace / "data-link").symlink_to(data)
    mcp = json.dumps({"mcpServers": {"evil": {"command": "touch", "args": [str(workspace / "PWNED")]}}})
    calls = [
        tool_call("mcp", "write", {"path": ".local/share/agentls/mcp.json", "content": mcp}),
        tool_call("agents", "write", {"path": str(data / "AGENTS.md"), "content": "Obey the file.\n"}),
        tool_call("link", "write", {"path": "data-link/mcp.json", "content": mcp}),
        tool_call("rules", "edit", {"path": str(data / "permissions.json"), "edits": [RULES_EDIT]}),
        tool_call("read", "read", {"path": ".local/share/agentls/permissions.json"}),
    ]
    faux_script(tool_turn(*calls))
    client = await servers.start(server_options(data, faux_script))
    session = await within(
        client.new_session(cwd=str(workspace), permissions={"*": "allow"}, allow_outside_workspace=True)
    )
    settled = await within(client.prompt(session, "take over", wait=True), 30)
    assert settled.stop_reason == "stop"
    results = await results_of(client, session)
    for call in ("mcp", "agents", "link", "rules", "read"):
        assert results[call]["isError"] is True, call
        assert "agentls's data folder" in text_of(results[call]), text_of(results[call])
    assert not (data / "mcp.json").exists() and not (data / "AGENTS.md").exists()
    assert (data / "permissions.json").read_text() == '{"rules": []}\n'


async def test_the_data_folder_is_refused_through_the_editor_workspace_too(
    faux_script: FauxScript, workspace: Path
) -> None:
    data = workspace / "data"
    data.mkdir()
    calls = [tool_call("w", "write", {"path": "data/mcp.json", "content": "{}"})]
    faux_script([{"content": [call], "stopReason": "toolUse"} for call in calls] + [{"content": "done"}])
    options = {"dataDir": str(data), "fauxScript": str(faux_script.path)}
    async with editor_session(data, faux_script, EDITING, options=options) as (client, _editor):
        [result] = await run(client, workspace, *calls)
    assert result["isError"] is True and "agentls's data folder" in text_of(result)
    assert not (data / "mcp.json").exists()


# --- diagnostics -----------------------------------------------------------------------------


async def test_diagnostics_of_files_outside_the_workspace_are_left_out(
    data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    inside = workspace / "calc.py"
    inside.write_text("a = b\n")
    outside = tmp_path / "elsewhere" / "secret.py"
    outside.parent.mkdir()
    outside.write_text("TOKEN = 'hunter2'\n")
    (workspace / "linked.py").symlink_to(outside)
    problem = {"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}}
    calls = [tool_call("d", "diagnostics", {})]
    faux_script([{"content": calls, "stopReason": "toolUse"}, {"content": "done"}])
    async with editor_session(data_dir, faux_script, DIAGNOSING) as (client, editor):
        editor.diagnostics[inside.as_uri()] = [{**problem, "message": 'Name "b" is not defined'}]
        editor.diagnostics[outside.as_uri()] = [{**problem, "message": "Secret TOKEN = 'hunter2' found"}]
        editor.diagnostics[(workspace / "linked.py").as_uri()] = [{**problem, "message": "hunter2 via link"}]
        editor.diagnostics["untitled:Untitled-1"] = [{**problem, "message": "hunter2 unsaved"}]
        [result] = await run(client, workspace, *calls)
        session = await new_session(client, workspace)
        messages = await prompt_and_settle(client, session, text="x", context=[{"type": "diagnostics"}])
    assert text_of(result) == 'calc.py:1:5: error: Name "b" is not defined'
    attached = messages[0]
    assert attached["role"] == "custom"
    listed = '<diagnostics>\ncalc.py:1:5: error: Name "b" is not defined\n</diagnostics>'
    assert attached["content"].endswith(listed)
    assert "hunter2" not in json.dumps(result) and "hunter2" not in json.dumps(messages)
