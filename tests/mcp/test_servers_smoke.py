"""The MCP test servers do what tests/mcp/conftest.py says, checked with the SDK's own client.

Nothing of agentls runs here: these tests pin down the servers the agentls MCP tests rely on.

server-everything 2026.8.31 (`everything_stdio_command()`, `everything_http()`; it speaks the
handshake era, 2025-11-25, also to a client that would take 2026-07-28), its tools for the cases
the agentls tests need:
- text: `echo {message: string}` answers "Echo: MESSAGE".
- progress: `trigger-long-running-operation {duration: number (seconds, default 10), steps: number
  (default 5)}` sends `notifications/progress` {progress: i, total: steps}, no message, one per
  duration/steps seconds, only when the call carries a progress token; answers "Long running
  operation completed. Duration: D seconds, Steps: N.".
- images: `get-tiny-image {}` answers text, an image (image/png, base64), text.
  `get-annotated-message {messageType: "error"|"success"|"debug", includeImage?: boolean}` too.
- resources: `get-resource-reference {resourceType: "Text"|"Blob" (capitalised), resourceId:
  integer >= 1}` answers text, an embedded resource (`demo://resource/dynamic/text/ID`, text/plain;
  Blob: `demo://resource/dynamic/blob/ID`, a base64 blob), text. `get-resource-links {count: 1..10}`
  answers text then `count` resource links (`demo://resource/dynamic/{blob|text}/I`, "Blob
  Resource I" / "Text Resource I").
- structured: `get-structured-content {location: "New York"|"Chicago"|"Los Angeles"}` answers the
  JSON as text and as `structuredContent` (with an outputSchema).
- errors: `get-sum {a: number, b: number}` with a missing or non-number argument answers
  isError with "MCP error -32602: Input validation error: ...".
- list changes: no tool adds tools on demand. Right after `notifications/initialized` it
  registers the tools that depend on the client's capabilities and sends one
  `notifications/tools/list_changed`: always `simulate-research-query` (so the tool list is
  12 tools before and 13 after, a race for a client listing at once), plus `get-roots-list`
  (roots), `trigger-sampling-request` and `trigger-sampling-request-async` (sampling),
  `trigger-elicitation-request`, `trigger-elicitation-request-async` and
  `trigger-url-elicitation` (elicitation) when the client declares them. Over HTTP that
  notification goes to the standalone GET stream and is usually lost (sent before the stream
  opens). Use quirky's `add_tool` for list changes on demand.
- `get-env {}` answers the server's environment as JSON text (for `env` configuration).
It writes "Starting default (STDIO) server..." to stderr at start (over HTTP: logs on stdout and
stderr).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from tests.mcp.conftest import (
    everything_http,
    everything_stdio_command,
    git_command,
    quirky_command,
    time_command,
    wait_for_text,
)

WAIT = 15  # seconds: an upper bound for any one awaited event, never a pause

QUIRKY_TOOLS = {
    "echo",
    "validated",
    "progress",
    "crash",
    "hang",
    "picture",
    "resource",
    "structured",
    "fail",
    "add_tool",
    "env",
    "cwd",
    "huge",
    "deep",
    "pictures",
}


@pytest.fixture
def errlog(tmp_path: Path) -> Path:
    return tmp_path / "stderr.log"


@asynccontextmanager
async def connect(
    command: list[str],
    *,
    errlog: Path | None = None,
    mode: str = "legacy",
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """An SDK client on `command` over stdio; the server's stderr goes to `errlog`. Each request
    (the handshake too) times out after WAIT seconds."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
    err = await anyio.to_thread.run_sync(open, errlog or os.devnull, "w")
    try:
        transport = stdio_client(params, errlog=err)
        async with Client(transport, mode=mode, read_timeout_seconds=WAIT, **options) as client:
            yield client
    finally:
        err.close()


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


class Progress:
    """A progress callback that records (progress, total, message) and wakes waiters."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []
        self.event = anyio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))
        self.event.set()


# ---------------------------------------------------------------- quirky


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_quirky_lists_its_tools_and_echoes(mode: str) -> None:
    async with connect(quirky_command(), mode=mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert client.server_capabilities.tools is not None
        assert client.server_capabilities.tools.list_changed
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == QUIRKY_TOOLS
        assert tools["echo"].input_schema["required"] == ["text"]
        result = await client.call_tool("echo", {"text": "hello"})
        assert texts(result) == ["hello"] and not result.is_error


async def test_quirky_validated_schema_and_no_server_side_validation() -> None:
    async with connect(quirky_command()) as client:
        (tool,) = [tool for tool in (await client.list_tools()).tools if tool.name == "validated"]
        assert tool.input_schema == {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "when": {"type": "string", "format": "date-time"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                "count": {"type": "integer", "minimum": 1},
            },
            "required": ["email", "when", "code", "count"],
        }
        good = {"email": "a@example.com", "when": "2026-12-01T12:00:00Z", "code": "ABC-1234", "count": 2}
        result = await client.call_tool("validated", good)
        assert texts(result) == ["email=a@example.com when=2026-12-01T12:00:00Z code=ABC-1234 count=2"]
        # The server echoes invalid arguments too: only a client's own validation rejects them.
        bad = {"email": "nope", "when": "yesterday", "code": "abc", "count": 0}
        result = await client.call_tool("validated", bad)
        assert texts(result) == ["email=nope when=yesterday code=abc count=0"] and not result.is_error


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_quirky_progress(mode: str) -> None:
    async with connect(quirky_command(), mode=mode) as client:
        progress = Progress()
        result = await client.call_tool("progress", {"steps": 3}, progress_callback=progress)
        assert texts(result) == ["done after 3 steps"]
        assert progress.seen == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]


async def test_quirky_crash_ends_the_call(errlog: Path) -> None:
    async with connect(quirky_command(), errlog=errlog) as client:
        progress = Progress()
        with anyio.fail_after(WAIT), pytest.raises(MCPError, match="Connection closed"):
            await client.call_tool("crash", {}, progress_callback=progress)
        # The SDK client runs progress callbacks in tasks of their own, which the closed connection
        # may cancel first: the wire itself is checked in test_quirky_crash_on_the_wire.
        assert progress.seen in ([], [(1, 2, "crashing soon")])
        with pytest.raises(MCPError):
            await client.call_tool("echo", {"text": "anyone?"})
    await wait_for_text(errlog, "about to crash")


async def test_quirky_crash_on_the_wire() -> None:
    """Raw JSON-RPC: the progress notification leaves the server before it exits with status 3."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "crash", "_meta": {"progressToken": 7}},
        },
    ]
    with anyio.fail_after(WAIT):
        async with await anyio.open_process(quirky_command(), stderr=subprocess.PIPE) as process:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            await process.stdin.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
            output = b""
            async for chunk in process.stdout:
                output += chunk
            stderr = b"".join([chunk async for chunk in process.stderr])
            assert await process.wait() == 3
    received = [json.loads(line) for line in output.splitlines()]
    assert [m.get("id") for m in received] == [1, None]
    assert received[1]["method"] == "notifications/progress"
    assert received[1]["params"] == {
        "progressToken": 7,
        "progress": 1.0,
        "total": 2.0,
        "message": "crashing soon",
    }
    assert b"about to crash" in stderr


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_quirky_hang_can_be_cancelled(errlog: Path, mode: str) -> None:
    async with connect(quirky_command(), errlog=errlog, mode=mode) as client:
        started = Progress()
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: client.call_tool("hang", {}, progress_callback=started))
            with anyio.fail_after(WAIT):
                await started.event.wait()  # the call runs on the server: (0, None, "hanging")
            group.cancel_scope.cancel()
        assert started.seen == [(0, None, "hanging")]
        await wait_for_text(errlog, "hang cancelled")
        assert texts(await client.call_tool("echo", {"text": "still here"})) == ["still here"]


async def test_quirky_content_shapes() -> None:
    async with connect(quirky_command()) as client:
        picture = await client.call_tool("picture", {})
        image, text = picture.content
        assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
        assert isinstance(text, types.TextContent) and text.text == "a red pixel"

        resource = await client.call_tool("resource", {})
        embedded, link = resource.content
        assert isinstance(embedded, types.EmbeddedResource)
        assert isinstance(embedded.resource, types.TextResourceContents)
        assert (embedded.resource.uri, embedded.resource.text) == ("quirky://note", "a note")
        assert isinstance(link, types.ResourceLink)
        assert (link.uri, link.name) == ("quirky://linked", "linked")

        structured = await client.call_tool("structured", {})
        assert structured.content == [] and structured.structured_content == {"answer": 42}
        (tool,) = [tool for tool in (await client.list_tools()).tools if tool.name == "structured"]
        assert tool.output_schema is not None

        fail = await client.call_tool("fail", {})
        assert fail.is_error and texts(fail) == ["it failed on purpose"]


async def test_quirky_add_tool_sends_list_changed_legacy() -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with connect(quirky_command(), message_handler=on_message) as client:
        assert texts(await client.call_tool("add_tool", {"name": "shiny"})) == ["added"]
        with anyio.fail_after(WAIT):
            await changed.wait()
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {*QUIRKY_TOOLS, "shiny"}
        result = await client.call_tool("shiny", {"x": 1})
        assert texts(result) == ['shiny called with {"x": 1}']


async def test_quirky_add_tool_sends_list_changed_modern() -> None:
    async with connect(quirky_command(), mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(tools_list_changed=True) as subscription:
            assert texts(await client.call_tool("add_tool", {"name": "shiny"})) == ["added"]
            with anyio.fail_after(WAIT):
                event = await subscription.__anext__()
        assert type(event).__name__ == "ToolsListChanged"
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "shiny" in names


async def test_quirky_options_env_and_cwd(errlog: Path, tmp_path: Path) -> None:
    command = quirky_command("--slow-start", "0.3", "--stderr-noise")
    async with connect(command, errlog=errlog, env={"QUIRKY_VALUE": "v1"}, cwd=str(tmp_path)) as client:
        assert texts(await client.call_tool("env", {"name": "QUIRKY_VALUE"})) == ["v1"]
        assert texts(await client.call_tool("env", {"name": "QUIRKY_NOT_SET"})) == ["(unset)"]
        assert texts(await client.call_tool("cwd", {})) == [str(tmp_path)]
    assert "quirky: some noise on stderr" in await anyio.Path(errlog).read_text()


def test_quirky_fail_start() -> None:
    done = subprocess.run(quirky_command("--fail-start"), capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 2
    assert "quirky: failing at start on purpose" in done.stderr


# ---------------------------------------------------------------- PyPI servers


async def test_mcp_server_time() -> None:
    async with connect(time_command()) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"get_current_time", "convert_time"} <= names
        result = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not result.is_error
        assert json.loads(texts(result)[0])["timezone"] == "UTC"


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "new.txt").write_text("hello\n")
    return repo


async def test_mcp_server_git(git_repo: Path) -> None:
    repo = git_repo
    async with connect(git_command(repo)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"git_status", "git_diff", "git_log"} <= names
        result = await client.call_tool("git_status", {"repo_path": str(repo)})
        assert not result.is_error
        assert "new.txt" in texts(result)[0]


# ---------------------------------------------------------------- server-everything


async def _exercise_everything(client: Client) -> None:
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert {
        "echo",
        "get-tiny-image",
        "get-resource-reference",
        "get-resource-links",
        "get-structured-content",
        "trigger-long-running-operation",
        "get-env",
    } <= names
    assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]

    progress = Progress()
    result = await client.call_tool(
        "trigger-long-running-operation", {"duration": 0.2, "steps": 2}, progress_callback=progress
    )
    assert texts(result) == ["Long running operation completed. Duration: 0.2 seconds, Steps: 2."]
    assert progress.seen == [(1, 2, None), (2, 2, None)]

    image = await client.call_tool("get-tiny-image", {})
    assert [block.type for block in image.content] == ["text", "image", "text"]

    reference = await client.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 1})
    embedded = reference.content[1]
    assert isinstance(embedded, types.EmbeddedResource)
    assert embedded.resource.uri == "demo://resource/dynamic/text/1"

    links = await client.call_tool("get-resource-links", {"count": 2})
    assert [block.type for block in links.content] == ["text", "resource_link", "resource_link"]


async def test_everything_stdio(errlog: Path) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    command = everything_stdio_command()
    async with connect(command, errlog=errlog, mode="auto", message_handler=on_message) as client:
        assert client.protocol_version == "2025-11-25"
        with anyio.fail_after(WAIT):
            await changed.wait()  # sent once, after initialization (see the module's docstring)
        assert "simulate-research-query" in {tool.name for tool in (await client.list_tools()).tools}
        await _exercise_everything(client)
    assert "Starting default (STDIO) server" in await anyio.Path(errlog).read_text()


async def test_everything_streamable_http() -> None:
    async with everything_http() as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with Client(url, read_timeout_seconds=WAIT) as client:
            assert client.protocol_version == "2025-11-25"
            await _exercise_everything(client)


def test_missing_everything_install_fails_with_the_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    with tempfile.TemporaryDirectory() as empty:
        monkeypatch.setenv("AGENTLS_TOOLS", empty)
        with pytest.raises(pytest.fail.Exception, match=r"scripts/test-servers\.sh"):
            everything_stdio_command()


def test_commands_use_this_interpreter() -> None:
    assert quirky_command("--stderr-noise")[0] == sys.executable
    assert quirky_command("--stderr-noise")[-1] == "--stderr-noise"
    assert time_command()[:3] == [sys.executable, "-m", "mcp_server_time"]
