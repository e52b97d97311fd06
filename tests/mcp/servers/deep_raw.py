"""An MCP server (stdio) written by hand, for an answer no SDK would write: JSON nested 5,000 levels.

Run: `python tests/mcp/servers/deep_raw.py [LEVELS]` (default 5000).

It answers `initialize` (with the client's protocol version), `ping` and `tools/list` (two
tools), ignores notifications, and answers `tools/call`:
- `deep {}`: a result whose `structuredContent` is `{"x": [[[...]]]}` nested LEVELS deep,
  with the `id` last on the line (after the deep part, where a reader that gives up on the
  depth does not look);
- `echo {text}`: the text, so a test can see the connection still works after `deep`.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def send(message: dict[str, Any] | str) -> None:
    sys.stdout.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    sys.stdout.flush()


def deep_answer(request_id: Any, levels: int) -> str:
    nested = "[" * levels + "]" * levels
    result = '{"content":[{"type":"text","text":"deep"}],"structuredContent":{"x":' + nested + "}}"
    return '{"jsonrpc":"2.0","result":' + result + ',"id":' + json.dumps(request_id) + "}"


TOOLS = [
    {"name": "deep", "description": "An answer nested very deep.", "inputSchema": {"type": "object"}},
    {
        "name": "echo",
        "description": "Echoes the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
]


def main() -> None:
    levels = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        method, request_id = request.get("method"), request.get("id")
        if request_id is None:
            continue  # a notification
        params = request.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "deep-raw", "version": "1.0.0"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call" and params.get("name") == "deep":
            send(deep_answer(request_id, levels))
            continue
        elif method == "tools/call":
            text = str((params.get("arguments") or {}).get("text", ""))
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no such method"}})
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
