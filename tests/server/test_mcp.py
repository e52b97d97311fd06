"""MCP servers as tools, end to end: ``agentls serve`` on the faux model, real MCP servers behind it.

The servers: ``mcp-server-time`` and ``mcp-server-git`` from PyPI,
``@modelcontextprotocol/server-everything`` from npm (``scripts/test-servers.sh``) over
stdio and streamable HTTP, and ``tests/mcp/servers/quirky.py``, written with the SDK for
what real servers do not do on demand (crash, hang, slow start, formats and patterns).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient, AgentClientError
from agentls.protocol import RequestPermissionParams
from agentls.protocol_methods import PermissionRulesResult

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_tool
from tests.ai.providers.mock_http import MockServer
from tests.mcp.conftest import (
    everything_http,
    everything_stdio_command,
    git_command,
    quirky_command,
    time_command,
    wait_for_text,
)
from tests.server.conftest import FauxScript, Recorder, Servers, server_options, tool_call, within
from tests.server.test_compaction_requests import MODEL, point_at, says
from tests.server.test_providers_e2e import NO_KEYS

pytestmark = pytest.mark.asyncio(loop_scope="module")


def stdio(command: list[str], **extra: Any) -> dict[str, Any]:
    return {"command": command[0], "args": command[1:], **extra}


class Questions:
    """Answers the server's permission questions (``answer(request)``) and keeps them."""

    def __init__(self, answer: Callable[[RequestPermissionParams], str] = lambda _: "allowOnce") -> None:
        self.asked: list[RequestPermissionParams] = []
        self.answer = answer
        self.changed = asyncio.Event()

    def __call__(self, request: RequestPermissionParams) -> str:
        self.asked.append(request)
        self.changed.set()
        return self.answer(request)

    async def wait(self, tool_name: str, count: int = 1) -> None:
        """Until ``count`` questions about ``tool_name`` have been answered."""
        while len(self.about(tool_name)) < count:
            self.changed.clear()
            await within(self.changed.wait())

    def about(self, tool_name: str) -> list[RequestPermissionParams]:
        return [q for q in self.asked if q.tool_name == tool_name]


async def start(
    servers: Servers, data_dir: Path, faux_script: FauxScript, questions: Questions, **options: Any
) -> tuple[AgentClient, Recorder]:
    client = await servers.start(
        {**server_options(data_dir, faux_script), **options}, on_permission=questions
    )
    return client, await Recorder(client).start()


async def ready(recorder: Recorder, name: str) -> dict[str, Any]:
    """The ``agent/mcpStatus`` saying the server is ready."""
    note = await recorder.wait_for(
        lambda n: n.method == "agent/mcpStatus" and n.params["name"] == name and n.params["status"] == "ready"
    )
    return note.params


def calls(*steps: dict[str, Any]) -> list[dict[str, Any]]:
    """A faux script making one tool call per turn, then answering "done"."""
    return [{"content": [step], "stopReason": "toolUse"} for step in steps] + [{"content": "done"}]


async def results(client: AgentClient, session: str) -> list[dict[str, Any]]:
    messages = (await within(client.get_messages(session))).messages
    return [m for m in messages if m["role"] == "toolResult"]


def text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


QUIRKY_ALLOWED = {"permissions": {"mcp__quirky__*": "allow"}}


async def quirky_session(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, *args: str
) -> tuple[AgentClient, Recorder, str]:
    """A server whose sessions have quirky (from the option, so trusted), its tools allowed."""
    option = {"quirky": stdio(quirky_command(*args))}
    client, recorder = await start(
        servers, data_dir, faux_script, Questions(), mcpServers=option, **QUIRKY_ALLOWED
    )
    return client, recorder, await within(client.new_session(cwd=str(workspace)))


# --- real servers ------------------------------------------------------------------------


async def test_a_call_of_mcp_server_time_asks_then_reaches_the_server_and_the_next_request(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    replies = [
        a_reply(
            a_start(model=MODEL),
            a_tool(0, "t1", "mcp__time__get_current_time", '{"timezone": "UTC"}'),
            a_end("tool_use"),
        ),
        a_reply(
            a_start(model=MODEL),
            a_tool(
                0,
                "t2",
                "mcp__time__convert_time",
                json.dumps({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            ),
            a_end("tool_use"),
        ),
        a_reply(
            a_start(model=MODEL),
            a_tool(0, "t3", "mcp__time__get_current_time", '{"timezone": "Europe/Paris"}'),
            a_end("tool_use"),
        ),
        says("It is noon in UTC."),
    ]
    questions = Questions(lambda q: "allowOnce" if len(questions.asked) == 1 else "allowAlwaysServer")
    async with MockServer(replies) as mock:
        point_at(data_dir, mock.url)
        client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS, on_permission=questions)
        recorder = await Recorder(client).start()
        session = await within(
            client.new_session(
                cwd=str(workspace), model=("anthropic", MODEL), mcp_servers={"time": stdio(time_command())}
            )
        )
        status = await ready(recorder, "time")
        assert status["tools"] == ["mcp__time__get_current_time", "mcp__time__convert_time"]
        assert status["source"] == "newSession" and status["transport"] == "stdio"
        await within(client.prompt(session, "What time is it?", wait=True))
        bodies = [request.json() for request in mock.requests]
    # asked for the first call (once), then for the second (every tool of the server), not the third
    assert [q.tool_name for q in questions.asked] == [
        "mcp__time__get_current_time",
        "mcp__time__convert_time",
    ]
    assert [o.id for o in questions.asked[0].options] == [
        "allowOnce",
        "allowAlways",
        "allowAlwaysServer",
        "reject",
    ]
    assert questions.asked[0].title == "Allow the tool get_current_time of the MCP server time?"
    tools = {tool["name"]: tool for tool in bodies[0]["tools"]}
    assert tools["mcp__time__get_current_time"]["input_schema"]["required"] == ["timezone"]
    [result] = [
        block
        for message in bodies[1]["messages"]
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    answered = json.loads(
        result["content"][0]["text"] if isinstance(result["content"], list) else result["content"]
    )
    assert answered["timezone"] == "UTC" and "datetime" in answered
    assert "+09:00" in json.dumps(bodies[2]["messages"][-1]["content"])


async def test_mcp_server_git_over_stdio(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(workspace)], check=True)
    (workspace / "tracked.txt").write_text("x\n")
    faux_script(calls(tool_call("g1", "mcp__git__git_status", {"repo_path": str(workspace)})))
    client, recorder = await start(
        servers,
        data_dir,
        faux_script,
        Questions(),
        mcpServers={"git": stdio(git_command(workspace))},
        permissions={"mcp__git__git_status": "allow"},
    )
    session = await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "git")
    await within(client.prompt(session, "status?", wait=True))
    [status] = await results(client, session)
    assert not status["isError"] and "tracked.txt" in text(status)


@pytest.mark.parametrize("transport", ["stdio", "http", "sse"])
async def test_server_everything_over_stdio_streamable_http_and_sse(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, transport: str
) -> None:
    faux_script(calls(tool_call("e1", "mcp__everything__echo", {"message": "hi there"})))
    async with everything_http(transport="sse" if transport == "sse" else "streamableHttp") as url:
        config = (
            stdio(everything_stdio_command()) if transport == "stdio" else {"type": transport, "url": url}
        )
        client, recorder = await start(
            servers,
            data_dir,
            faux_script,
            Questions(),
            mcpServers={"everything": config},
            permissions={"mcp__everything__*": "allow"},
        )
        session = await within(client.new_session(cwd=str(workspace)))
        status = await ready(recorder, "everything")
        assert "mcp__everything__echo" in status["tools"] and status["transport"] == transport
        await within(client.prompt(session, "echo", wait=True))
        [echoed] = await results(client, session)
    assert not echoed["isError"] and "hi there" in text(echoed)


async def test_server_everythings_progress_images_and_resources(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        calls(
            tool_call("p1", "mcp__everything__trigger-long-running-operation", {"duration": 0.3, "steps": 3}),
            tool_call("i1", "mcp__everything__get-tiny-image", {}),
            tool_call(
                "r1", "mcp__everything__get-resource-reference", {"resourceType": "Text", "resourceId": 1}
            ),
        )
    )
    client, recorder = await start(
        servers,
        data_dir,
        faux_script,
        Questions(),
        mcpServers={"everything": stdio(everything_stdio_command())},
        permissions={"mcp__everything__*": "allow"},
    )
    session = await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "everything")
    await within(client.prompt(session, "go", wait=True), 30)
    progress, image, resource = await results(client, session)
    assert not progress["isError"]
    updates = [
        p["event"]["partialResult"]["details"]
        for p in recorder.events(session)
        if p["event"]["type"] == "tool_execution_update" and p["event"]["toolCallId"] == "p1"
    ]
    assert [(u["progress"], u["total"]) for u in updates] == [(1, 3), (2, 3), (3, 3)]
    assert "image" in [b["type"] for b in image["content"]]
    assert "[resource demo://resource/dynamic/text/1]" in text(resource)


# --- trust -------------------------------------------------------------------------------


async def test_a_projects_mcp_json_starts_once_trusted_and_the_trust_is_remembered(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"quirky": stdio(quirky_command())}}))
    questions = Questions(lambda q: "allowAlways" if q.tool_name == "mcp" else "allowOnce")
    client, recorder = await start(servers, data_dir, faux_script, questions)
    await within(client.new_session(cwd=str(workspace)))
    status = await ready(recorder, "quirky")
    [trust] = questions.about("mcp")
    assert str(workspace / ".mcp.json") in trust.title and "quirky.py" in trust.title
    assert [o.id for o in trust.options] == ["allowAlways", "reject"]
    assert status["source"] == str(workspace / ".mcp.json")

    other, other_recorder = await start(servers, data_dir, faux_script, questions)  # a restart: remembered
    await within(other.new_session(cwd=str(workspace)))
    await ready(other_recorder, "quirky")
    assert len(questions.about("mcp")) == 1
    rules = await within(
        other.request("agent/listPermissionRules", {"cwd": str(workspace)}, PermissionRulesResult)
    )
    assert [r.tool_name.split(":")[:3] for r in rules.rules] == [["mcp", "trust", "quirky"]]


async def test_a_rejected_project_server_waits_for_trust_and_a_restart_asks_again(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"quirky": stdio(quirky_command())}}))
    questions = Questions(lambda q: "reject" if len(questions.about("mcp")) == 1 else "allowAlways")
    client, recorder = await start(servers, data_dir, faux_script, questions)
    session = await within(client.new_session(cwd=str(workspace)))
    await questions.wait("mcp")
    [listed] = (await within(client.list_mcp_servers(session))).servers
    assert listed.status == "needsTrust" and listed.tools == []
    restarted = await within(client.restart_mcp_server("quirky", session))
    assert restarted.status == "needsTrust"
    await ready(recorder, "quirky")
    assert len(questions.about("mcp")) == 2


# --- what the tools do -------------------------------------------------------------------


async def test_results_schemas_progress_and_list_changes(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        calls(
            tool_call(
                "v1", "mcp__quirky__validated", {"email": "nobody", "when": "soon", "code": "abc", "count": 0}
            ),
            tool_call(
                "v2",
                "mcp__quirky__validated",
                {"email": "a@b.example", "when": "2026-12-01T10:00:00Z", "code": "ABC-1234", "count": 2},
            ),
            tool_call("p1", "mcp__quirky__picture", {}),
            tool_call("r1", "mcp__quirky__resource", {}),
            tool_call("s1", "mcp__quirky__structured", {}),
            tool_call("f1", "mcp__quirky__fail", {}),
            tool_call("g1", "mcp__quirky__progress", {"steps": 3}),
            tool_call("a1", "mcp__quirky__add_tool", {"name": "fresh"}),
            tool_call("n1", "mcp__quirky__fresh", {"x": 1}),
        )
    )
    client, recorder, session = await quirky_session(servers, data_dir, faux_script, workspace)
    await ready(recorder, "quirky")
    await within(client.prompt(session, "go", wait=True))
    bad, good, picture, resource, structured, fail, progress, added, fresh = await results(client, session)
    assert bad["isError"]
    for expected in ("email", "date-time", "^[A-Z]{3}-[0-9]{4}$", "minimum"):
        assert expected in text(bad), (expected, text(bad))
    assert text(good) == "email=a@b.example when=2026-12-01T10:00:00Z code=ABC-1234 count=2"
    assert [b["type"] for b in picture["content"]] == ["image", "text"]
    assert picture["content"][0]["mimeType"] == "image/png"
    assert text(resource) == "[resource quirky://note]\na note[resource link: quirky://linked (linked)]"
    assert json.loads(text(structured)) == {"answer": 42}
    assert structured["details"]["structuredContent"] == {"answer": 42}
    assert fail["isError"] and text(fail) == "it failed on purpose"
    assert text(progress) == "done after 3 steps"
    updates = [
        p["event"]["partialResult"]["details"]
        for p in recorder.events(session)
        if p["event"]["type"] == "tool_execution_update" and p["event"]["toolCallId"] == "g1"
    ]
    assert [(u["progress"], u["total"], u["message"]) for u in updates] == [
        (1, 3, "step 1 of 3"),
        (2, 3, "step 2 of 3"),
        (3, 3, "step 3 of 3"),
    ]
    assert text(added) == "added"
    assert not fresh["isError"] and text(fresh) == 'fresh called with {"x": 1}'
    statuses = [n.params for n in recorder.notes if n.method == "agent/mcpStatus"]
    assert "mcp__quirky__fresh" in statuses[-1]["tools"]


async def test_a_server_that_starts_slowly_never_holds_a_prompt(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        [{"content": "Answered at once."}, *calls(tool_call("e1", "mcp__quirky__echo", {"text": "late"}))]
    )
    client, recorder, session = await quirky_session(
        servers, data_dir, faux_script, workspace, "--slow-start", "2"
    )
    settled = await within(client.prompt(session, "hi", wait=True))
    assert settled.stop_reason == "stop"
    [listed] = (await within(client.list_mcp_servers(session))).servers
    assert listed.status == "starting"
    await ready(recorder, "quirky")
    await within(client.prompt(session, "now echo", wait=True))
    [echoed] = await results(client, session)
    assert text(echoed) == "late"


# --- failures ----------------------------------------------------------------------------


async def test_a_crash_mid_call_ends_the_call_with_the_servers_stderr_and_a_restart_brings_it_back(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        calls(tool_call("c1", "mcp__quirky__crash", {}))
        + calls(tool_call("e1", "mcp__quirky__echo", {"text": "back"}))
    )
    client, recorder, session = await quirky_session(servers, data_dir, faux_script, workspace)
    await ready(recorder, "quirky")
    await within(client.prompt(session, "crash", wait=True))
    [crashed] = await results(client, session)
    assert crashed["isError"]
    assert "MCP server quirky failed" in text(crashed) and "about to crash" in text(crashed)
    [listed] = (await within(client.list_mcp_servers(session))).servers
    assert listed.status == "failed" and "about to crash" in (listed.error or "")
    restarted = await within(client.restart_mcp_server("quirky", session))
    assert restarted.status in ("starting", "ready")
    await recorder.wait_for(
        lambda n: n.method == "agent/mcpStatus" and n.params["status"] == "ready", count=2
    )
    await within(client.prompt(session, "echo", wait=True))
    assert text((await results(client, session))[-1]) == "back"


async def test_an_abort_cancels_a_hanging_call_at_once(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([*calls(tool_call("h1", "mcp__quirky__hang", {}))[:1], {"content": "spare"}])
    client, recorder, session = await quirky_session(servers, data_dir, faux_script, workspace)
    await ready(recorder, "quirky")
    run = await within(client.prompt(session, "hang"))
    await recorder.wait_event(session, "tool_execution_update", toolCallId="h1")  # the server is in the call
    assert (await within(client.abort(session))).aborted
    assert (await recorder.settled(run.run_id))["stopReason"] == "aborted"
    [result] = await results(client, session)
    assert result["isError"]
    await within(wait_for_text(data_dir / "mcp-logs" / "quirky.log", "hang cancelled"))


async def test_mistakes_in_the_configuration_are_reported_and_the_other_servers_start(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (data_dir / "mcp.json").write_text('{"mcpServers": {"broken": ')
    option = {
        "socket": {"type": "websocket", "url": "ws://127.0.0.1:1"},
        "nothing": {"args": ["x"]},
        "badargs": {"command": "x", "args": "not a list"},
        "quirky": stdio(quirky_command()),
    }
    client, recorder = await start(servers, data_dir, faux_script, Questions(), mcpServers=option)
    session = await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "quirky")
    listing = await within(client.list_mcp_servers(session))
    assert [s.name for s in listing.servers] == ["quirky"]
    problems = "\n".join(listing.problems)
    assert f"{data_dir / 'mcp.json'}: cannot be read as JSON" in problems
    assert "initializationOptions: mcpServers.socket.type: unknown transport 'websocket'" in problems
    assert "initializationOptions: mcpServers.nothing.command: missing" in problems
    assert "initializationOptions: mcpServers.badargs.args: must be a list of strings" in problems
    with pytest.raises(AgentClientError) as unknown:
        await within(client.restart_mcp_server("socket", session))
    assert unknown.value.kind == "invalidParams" and "the servers are: quirky" in str(unknown.value)
