"""End to end: tool results too large or too deep, and MCP calls that never end.

Every result (built-in or MCP, error or not) is cut to Pi's bounds (2000 lines, 50 KB)
before it is stored or sent, the whole text kept in a file that ``read`` may page through
although it is outside the workspace; ``details`` and ``structuredContent`` nested deeper
than a session file may hold are cut at a depth; an MCP answer nested 5,000 levels (which
no JSON parser in the client reads) ends its call at once with an error; a call that
outlasts its server's ``timeout`` is cancelled. The MCP servers are real processes:
``tests/mcp/servers/quirky.py`` (the SDK's) and ``deep_raw.py`` (written by hand).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_tool
from tests.ai.providers.mock_http import MockServer
from tests.mcp.conftest import QUIRKY, quirky_command, wait_for_text
from tests.server.conftest import FauxScript, Recorder, Servers, tool_call, within
from tests.server.test_compaction_requests import MODEL, point_at, says
from tests.server.test_mcp import (
    QUIRKY_ALLOWED,
    Questions,
    calls,
    quirky_session,
    ready,
    results,
    start,
    stdio,
    text,
)
from tests.server.test_providers_e2e import NO_KEYS

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEEP_RAW = QUIRKY.parent / "deep_raw.py"
BOUND = 50 * 1024 + 2 * 1024
"""Pi's 50 KB, and room for the note."""
FULL_OUTPUT = re.compile(r"Full output: (\S+?)[\s\]]")
LONG = 60.0
"""Seconds for a step that moves 70 MB."""


def full_output_path(result: dict[str, Any]) -> Path:
    found = FULL_OUTPUT.search(text(result))
    assert found, text(result)[-400:]
    return Path(found.group(1))


def tool_end(recorder: Recorder, session: str, call_id: str) -> dict[str, Any]:
    [end] = [
        p["event"]
        for p in recorder.events(session)
        if p["event"]["type"] == "tool_execution_end" and p["event"]["toolCallId"] == call_id
    ]
    return end


def stored_lines(data_dir: Path) -> list[bytes]:
    """Every line of every session file."""
    lines = [line for path in data_dir.rglob("*.jsonl") for line in path.read_bytes().splitlines()]
    assert lines
    return lines


def longest_stored_line(data_dir: Path) -> int:
    return max(len(line) for line in stored_lines(data_dir))


def peak_rss_mb(client: AgentClient) -> float:
    """The server process's peak resident memory (``VmHWM``), in MB."""
    process = client._rpc._server
    assert process is not None
    status = Path(f"/proc/{process.pid}/status").read_text()
    [kilobytes] = re.findall(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(kilobytes) / 1024


def tool_reply(call_id: str, name: str, arguments: dict[str, Any]) -> Any:
    return a_reply(a_start(model=MODEL), a_tool(0, call_id, name, json.dumps(arguments)), a_end("tool_use"))


async def mocked_session(
    servers: Servers, data_dir: Path, workspace: Path, mock: MockServer, **options: Any
) -> tuple[AgentClient, Recorder, str]:
    """A server on the mock Anthropic API, the quirky server's tools allowed, and one session."""
    point_at(data_dir, mock.url)
    options = {"dataDir": str(data_dir), **QUIRKY_ALLOWED, **options}
    client = await servers.start(options, env=NO_KEYS, on_permission=Questions())
    recorder = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace), model=("anthropic", MODEL)))
    return client, recorder, session


def tool_results_sent(body: dict[str, Any]) -> list[Any]:
    return [
        block
        for message in body["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


# --- MCP results ---------------------------------------------------------------------------


async def test_a_70_mb_mcp_result_is_cut_with_its_whole_text_in_a_file_that_read_pages_through(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    async with MockServer([tool_reply("h1", "mcp__quirky__huge", {"megabytes": 70}), says("cut")]) as mock:
        client, recorder, session = await mocked_session(
            servers, data_dir, workspace, mock, mcpServers={"quirky": stdio(quirky_command())}
        )
        await ready(recorder, "quirky")
        settled = await within(client.prompt(session, "huge", wait=True), LONG)
        assert settled.stop_reason == "stop"
        [huge] = await results(client, session)
        assert not huge["isError"]
        assert len(text(huge).encode()) <= BOUND
        assert text(huge).startswith("line 1 ....")
        assert "[Output truncated: showing lines 1-" in text(huge) and "of 734004" in text(huge)
        path = full_output_path(huge)
        assert path.stat().st_size > 70_000_000 and path.read_bytes().endswith(b"\nthe end")
        # bounded on the wire, in the session file and in what the model got
        assert tool_end(recorder, session, "h1")["result"]["content"] == huge["content"]
        assert longest_stored_line(data_dir) < 2 * BOUND
        [sent] = tool_results_sent(mock.requests[1].json())
        assert len(json.dumps(sent)) < 2 * BOUND
        assert peak_rss_mb(client) < 400, "the server held the 70 MB answer too many times"

        # the model pages through the full output with read, outside the workspace
        mock.replies += [
            tool_reply("r1", "read", {"path": str(path), "offset": 734_002, "limit": 5}),
            says("ok"),
        ]
        await within(client.prompt(session, "the end?", wait=True), LONG)
        read = (await results(client, session))[-1]
        assert not read["isError"], text(read)
        assert "line 734002 ..." in text(read) and "the end" in text(read)
    await within(client.close(), 15)
    assert not path.exists(), "the session's full outputs are removed when it ends"


async def test_an_mcp_result_of_one_line_longer_than_50_kb_shows_its_first_50_kb(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    line = "0123456789" * 6_000
    faux_script(calls(tool_call("e1", "mcp__quirky__echo", {"text": line})))
    client, recorder, session = await quirky_session(servers, data_dir, faux_script, workspace)
    await ready(recorder, "quirky")
    await within(client.prompt(session, "echo", wait=True))
    [echoed] = await results(client, session)
    shown, note = text(echoed).split("\n\n")
    assert shown == line[: 50 * 1024]
    assert note.startswith(
        "[Output truncated: showing the first 50.0KB of line 1, which is 58.6KB (1 line in all). "
    )
    assert full_output_path(echoed).read_text() == line


async def test_structured_content_nested_150_levels_is_stored_and_sent_cut_at_a_depth(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(calls(tool_call("d1", "mcp__quirky__deep", {"levels": 150})))
    client, recorder, session = await quirky_session(servers, data_dir, faux_script, workspace)
    await ready(recorder, "quirky")
    settled = await within(client.prompt(session, "deep", wait=True))
    assert settled.stop_reason == "stop"
    [deep] = await results(client, session)
    assert not deep["isError"]
    assert "[cut: nested deeper than 64 levels]" in text(deep)
    assert json.loads(text(deep))["a"]["a"]["a"]["a"]
    stored, levels = deep["details"], 0
    while isinstance(stored, dict):
        stored, levels = stored.get("structuredContent", stored.get("a")), levels + 1
    assert stored == "[cut: nested deeper than 64 levels]" and levels == 64
    assert tool_end(recorder, session, "d1")["result"]["details"] == deep["details"]
    # the session file holds it: it loads again, with the result
    again = await servers.start({"dataDir": str(data_dir), "fauxScript": str(faux_script.path)})
    await within(again.load_session(session))
    assert (await results(again, session))[0]["details"] == deep["details"]


async def test_images_beyond_the_size_and_count_bounds_are_left_out_with_a_line_saying_so(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        calls(
            tool_call("p1", "mcp__quirky__pictures", {"count": 1, "megabytes": 6}),
            tool_call("p2", "mcp__quirky__pictures", {"count": 25, "megabytes": 0.01}),
        )
    )
    client, recorder, session = await quirky_session(servers, data_dir, faux_script, workspace)
    await ready(recorder, "quirky")
    await within(client.prompt(session, "pictures", wait=True))
    big, many = await results(client, session)
    assert big["content"] == [
        {"type": "text", "text": "[image left out: image/png, 6.0MB; more than the 5.0MB an image may be]"}
    ]
    assert [block["type"] for block in many["content"]] == ["image"] * 20 + ["text"] * 5
    assert (
        many["content"][-1]["text"]
        == "[image left out: image/png, 10.2KB; a result may hold at most 20 images]"
    )
    assert longest_stored_line(data_dir) < 2 * 1024 * 1024


@pytest.mark.parametrize("levels", [300, 5000])  # deeper than the SDK re-serializes; than orjson reads
async def test_an_answer_nested_too_deep_ends_its_call_at_once_and_the_server_still_answers(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, levels: int
) -> None:
    faux_script(
        calls(tool_call("d1", "mcp__raw__deep", {}), tool_call("e1", "mcp__raw__echo", {"text": "alive"}))
    )
    option = {"raw": {"command": sys.executable, "args": [str(DEEP_RAW), str(levels)]}}
    client, recorder = await start(
        servers, data_dir, faux_script, Questions(), mcpServers=option, permissions={"mcp__raw__*": "allow"}
    )
    session = await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "raw")
    settled = await within(client.prompt(session, "deep", wait=True))
    assert settled.stop_reason == "stop"
    deep, echo = await results(client, session)
    assert deep["isError"]
    assert text(deep) == (
        "MCP server raw: its answer could not be read: its JSON nests more than 256 levels deep"
    )
    assert not echo["isError"] and text(echo) == "alive"


async def test_a_call_that_outlasts_its_servers_timeout_is_cancelled_with_a_clear_error(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        calls(tool_call("h1", "mcp__quirky__hang", {}), tool_call("e1", "mcp__quirky__echo", {"text": "on"}))
    )
    option = {
        "quirky": stdio(quirky_command(), timeout=1),
        "badtimeout": stdio(quirky_command(), timeout="soon"),
    }
    client, recorder = await start(
        servers, data_dir, faux_script, Questions(), mcpServers=option, **QUIRKY_ALLOWED
    )
    session = await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "quirky")
    settled = await within(client.prompt(session, "hang", wait=True))
    assert settled.stop_reason == "stop"
    hung, echoed = await results(client, session)
    assert hung["isError"]
    assert text(hung) == (
        "MCP server quirky: hang did not answer within 1 s, so the call was cancelled; if it needs longer, "
        "the server's `timeout` setting can allow more"
    )
    await within(wait_for_text(data_dir / "mcp-logs" / "quirky.log", "hang cancelled"))
    assert text(echoed) == "on"
    listing = await within(client.list_mcp_servers(session))
    assert "initializationOptions: mcpServers.badtimeout.timeout: must be a positive number of seconds" in (
        "\n".join(listing.problems)
    )


# --- built-in tools ------------------------------------------------------------------------


async def test_an_ls_of_thousands_of_entries_is_cut_in_the_session_file_and_on_the_wire(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    folder = workspace / "many"
    folder.mkdir()
    for index in range(3000):
        (folder / f"entry-{index:04}.txt").touch()
    faux_script(calls(tool_call("l1", "ls", {"path": "many", "limit": 5000})))
    client, recorder = await start(servers, data_dir, faux_script, Questions())
    session = await within(client.new_session(cwd=str(workspace)))
    await within(client.prompt(session, "list", wait=True))
    [listed] = await results(client, session)
    assert text(listed).startswith("entry-0000.txt\nentry-0001.txt\n")
    assert "[Output truncated: showing lines 1-2000 of 3000. Full output: " in text(listed)
    assert text(listed).count("\n") < 2010
    assert tool_end(recorder, session, "l1")["result"]["content"] == listed["content"]
    assert not any(b"entry-2999.txt" in line for line in stored_lines(data_dir))
    lines = full_output_path(listed).read_text().splitlines()
    assert len(lines) == 3000 and lines[-1] == "entry-2999.txt"


async def test_bashs_full_output_of_a_5_mb_command_is_readable_by_read(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    command = "seq 1 700000"  # 4.6 MB
    async with MockServer([tool_reply("b1", "bash", {"command": command}), says("cut")]) as mock:
        client, recorder, session = await mocked_session(
            servers, data_dir, workspace, mock, permissions={"bash": "allow"}
        )
        await within(client.prompt(session, "count", wait=True))
        [counted] = await results(client, session)
        assert len(text(counted).encode()) <= BOUND and text(counted).startswith("69")
        assert tool_end(recorder, session, "b1")["result"]["content"] == counted["content"]
        assert longest_stored_line(data_dir) < 2 * BOUND
        path = full_output_path(counted)
        mock.replies += [
            tool_reply("r1", "read", {"path": str(path), "offset": 1000, "limit": 2}),
            says("ok"),
        ]
        await within(client.prompt(session, "read it", wait=True))
        read = (await results(client, session))[-1]
        assert not read["isError"], text(read)
        assert text(read).startswith("  1000\t1000\n  1001\t1001")
        # and nothing else outside the workspace
        mock.replies += [tool_reply("r2", "read", {"path": str(path.parent)}), says("no")]
        await within(client.prompt(session, "read the folder", wait=True))
        refused = (await results(client, session))[-1]
        assert refused["isError"] and "outside the workspace" in text(refused)
