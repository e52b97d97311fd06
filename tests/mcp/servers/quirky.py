"""A small MCP server (stdio) for the cases real servers do not show on demand.

Run: `python tests/mcp/servers/quirky.py [--slow-start SECONDS] [--stderr-noise] [--fail-start]`.

Written with the MCP SDK's low-level `Server`, so every result has exactly the shape named
here. It speaks both protocol eras the SDK serves: the handshake era (`initialize`, list
changes as `notifications/tools/list_changed`) and 2026-07-28 (list changes on
`subscriptions/listen` streams).

Tools:
- `echo {text}`: the text.
- `validated {email, when, code, count}`: a schema with a format (`email`, `date-time`), a
  pattern (`^[A-Z]{3}-[0-9]{4}$`) and a minimum (1), all required. The server itself does
  not validate: it echoes whatever arrives, so a client's own validation can be told apart.
- `progress {steps}`: a progress notification per step (`progress` i, `total` steps,
  `message` "step i of N"), then "done after N steps".
- `crash {}`: one progress notification, "about to crash" on stderr, then `os._exit(3)`.
- `hang {}`: one progress notification (0, "hanging": the call has started), then never
  returns; cancelled, it writes "hang cancelled" to stderr.
- `picture {}`: an image block (a 1x1 PNG) and a text block.
- `pictures {count, megabytes}`: `count` image blocks of that many MB of base64 each (the
  PNG's bytes repeated: not an image a model would take, but no model sees it in tests).
- `resource {}`: an embedded text resource (`quirky://note`, "a note") and a resource link.
- `structured {}`: only `structuredContent` `{"answer": 42}` (with an output schema), no content.
- `fail {}`: `isError` with the text "it failed on purpose".
- `add_tool {name}`: adds the tool `name` (which answers "NAME called with ARGS"), answers
  "added", and announces the change.
- `env {name}`: the value of an environment variable, or "(unset)".
- `cwd {}`: the server's working directory.
- `huge {megabytes}`: a text result of that many MB: numbered lines ("line 1 ", "line 2 " ...
  each padded with dots to 100 bytes), the last one "the end".
- `deep {levels}`: only `structuredContent`, `{"a": {"a": ... {"a": "bottom"}}}` nested that deep.

Options: `--slow-start S` sleeps S seconds before serving; `--stderr-noise` writes a few
lines to stderr at start; `--fail-start` writes "quirky: failing at start on purpose" to
stderr and exits with status 2 before serving.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import struct
import sys
import time
import zlib
from typing import Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS


def _tiny_png() -> str:
    """A valid 1x1 opaque red PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode("ascii")


PNG_BASE64 = _tiny_png()


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


STATIC_TOOLS = [
    types.Tool(
        name="echo",
        description="Echoes the text.",
        input_schema=_obj({"text": {"type": "string"}}, ["text"]),
    ),
    types.Tool(
        name="validated",
        description="Echoes its arguments; the schema has formats, a pattern and a minimum.",
        input_schema=_obj(
            {
                "email": {"type": "string", "format": "email"},
                "when": {"type": "string", "format": "date-time"},
                "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                "count": {"type": "integer", "minimum": 1},
            },
            ["email", "when", "code", "count"],
        ),
    ),
    types.Tool(
        name="progress",
        description="Reports progress once per step, then answers.",
        input_schema=_obj({"steps": {"type": "integer", "minimum": 0}}, ["steps"]),
    ),
    types.Tool(
        name="crash", description="Reports progress once, then the server exits.", input_schema=_obj({})
    ),
    types.Tool(name="hang", description="Never answers (until cancelled).", input_schema=_obj({})),
    types.Tool(name="picture", description="An image and a text.", input_schema=_obj({})),
    types.Tool(
        name="pictures",
        description="That many images of that many megabytes each.",
        input_schema=_obj(
            {"count": {"type": "integer"}, "megabytes": {"type": "number"}}, ["count", "megabytes"]
        ),
    ),
    types.Tool(
        name="resource", description="An embedded resource and a resource link.", input_schema=_obj({})
    ),
    types.Tool(
        name="structured",
        description="Only structured content.",
        input_schema=_obj({}),
        output_schema=_obj({"answer": {"type": "integer"}}, ["answer"]),
    ),
    types.Tool(name="fail", description="A tool error.", input_schema=_obj({})),
    types.Tool(
        name="add_tool",
        description="Adds a tool of that name and announces the list change.",
        input_schema=_obj({"name": {"type": "string"}}, ["name"]),
    ),
    types.Tool(
        name="env",
        description="The value of an environment variable.",
        input_schema=_obj({"name": {"type": "string"}}, ["name"]),
    ),
    types.Tool(name="cwd", description="The server's working directory.", input_schema=_obj({})),
    types.Tool(
        name="huge",
        description="A text result of that many megabytes.",
        input_schema=_obj({"megabytes": {"type": "number"}}, ["megabytes"]),
    ),
    types.Tool(
        name="deep",
        description="Structured content nested that many levels.",
        input_schema=_obj({"levels": {"type": "integer", "minimum": 1}}, ["levels"]),
    ),
]


class _WatchedStdout:
    """The wire's stdout for `stdio_server`, remembering what has been flushed.

    `crash` must not exit before its progress notification has left the process: the SDK's
    writer writes in a worker thread after taking the message, so `crash` waits here until a
    flushed line holds its marker.
    """

    def __init__(self) -> None:
        # A private duplicate of the wire; fd 1 then points at stderr, so stray prints miss the wire.
        wire = os.dup(1)
        os.dup2(2, 1)
        self._file = anyio.wrap_file(open(wire, "w", encoding="utf-8", closefd=False))  # noqa: SIM115
        self._pending: list[str] = []
        self._flushed: list[str] = []
        self._changed = anyio.Event()

    async def write(self, text: str) -> int:
        self._pending.append(text)
        return await self._file.write(text)

    async def flush(self) -> None:
        written, self._pending = self._pending, []
        await self._file.flush()
        self._flushed = [*self._flushed[-20:], *written]
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_flushed(self, marker: str) -> None:
        while not any(marker in line for line in self._flushed):
            await self._changed.wait()


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def _huge_text(megabytes: float) -> str:
    """Numbered lines of 100 bytes (99 and a newline) up to ``megabytes`` MB, then "the end"."""
    count = int(megabytes * 1024 * 1024) // 100
    return "".join(f"line {i} ".ljust(99, ".") + "\n" for i in range(1, count + 1)) + "the end"


def _nested(levels: int) -> dict[str, Any]:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"a": value}
    return value


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class Quirky:
    def __init__(self, stdout: _WatchedStdout) -> None:
        self.stdout = stdout
        self.bus = InMemorySubscriptionBus()
        self.added: dict[str, types.Tool] = {}
        self.server = Server(
            "quirky",
            version="1.0.0",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    async def list_tools(
        self, ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[*STATIC_TOOLS, *self.added.values()])

    async def call_tool(
        self, ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        name = params.name
        if name == "echo":
            return _text(str(args.get("text", "")))
        if name == "validated":
            return _text(" ".join(f"{key}={args.get(key)}" for key in ("email", "when", "code", "count")))
        if name == "progress":
            steps = int(args.get("steps", 0))
            for i in range(1, steps + 1):
                await ctx.session.report_progress(i, steps, f"step {i} of {steps}")
            return _text(f"done after {steps} steps")
        if name == "crash":
            await ctx.session.report_progress(1, 2, "crashing soon")
            await self.stdout.wait_flushed('"crashing soon"')
            _stderr("about to crash")
            os._exit(3)
        if name == "hang":
            await ctx.session.report_progress(0, None, "hanging")
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                _stderr("hang cancelled")
                raise
        if name == "picture":
            return types.CallToolResult(
                content=[
                    types.ImageContent(data=PNG_BASE64, mime_type="image/png"),
                    types.TextContent(text="a red pixel"),
                ]
            )
        if name == "pictures":
            size = int(float(args.get("megabytes", 1)) * 1024 * 1024)
            data = (PNG_BASE64 * (size // len(PNG_BASE64) + 1))[:size]
            images = [types.ImageContent(data=data, mime_type="image/png")] * int(args.get("count", 1))
            return types.CallToolResult(content=images)
        if name == "resource":
            return types.CallToolResult(
                content=[
                    types.EmbeddedResource(
                        resource=types.TextResourceContents(
                            uri="quirky://note", mime_type="text/plain", text="a note"
                        )
                    ),
                    types.ResourceLink(
                        uri="quirky://linked",
                        name="linked",
                        description="a linked resource",
                        mime_type="text/plain",
                    ),
                ]
            )
        if name == "structured":
            return types.CallToolResult(content=[], structured_content={"answer": 42})
        if name == "fail":
            return _text("it failed on purpose", error=True)
        if name == "add_tool":
            new = str(args.get("name", ""))
            if not new or new in self.added or any(t.name == new for t in STATIC_TOOLS):
                return _text(f"cannot add {new!r}", error=True)
            self.added[new] = types.Tool(
                name=new,
                description=f"Added at run time: {new}.",
                input_schema={"type": "object", "additionalProperties": True},
            )
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await self.bus.publish(ToolsListChanged())
            else:
                await ctx.session.send_tool_list_changed()
            return _text("added")
        if name == "env":
            return _text(os.environ.get(str(args.get("name", "")), "(unset)"))
        if name == "cwd":
            return _text(os.getcwd())
        if name == "huge":
            return _text(_huge_text(float(args.get("megabytes", 1))))
        if name == "deep":
            return types.CallToolResult(content=[], structured_content=_nested(int(args.get("levels", 1))))
        if name in self.added:
            return _text(f"{name} called with {json.dumps(args, sort_keys=True)}")
        return _text(f"unknown tool {name!r}", error=True)

    async def serve(self) -> None:
        options = self.server.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server(stdout=self.stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
            await self.server.run(read_stream, write_stream, options)


def main() -> None:
    parser = argparse.ArgumentParser(description="A quirky MCP test server (stdio).")
    parser.add_argument("--slow-start", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--stderr-noise", action="store_true")
    parser.add_argument("--fail-start", action="store_true")
    options = parser.parse_args()
    if options.stderr_noise:
        for line in (
            "quirky: starting up",
            "quirky: some noise on stderr",
            "quirky: WARNING nothing is wrong",
        ):
            _stderr(line)
    if options.fail_start:
        _stderr("quirky: failing at start on purpose")
        sys.exit(2)
    if options.slow_start > 0:
        time.sleep(options.slow_start)

    async def run() -> None:
        await Quirky(_WatchedStdout()).serve()

    anyio.run(run)


if __name__ == "__main__":
    main()
