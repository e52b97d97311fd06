"""Ten thousand generated messages, as a broken or hostile client would send them, to the real server.

The generator (fixed seed) sends damaged framing, garbage, deep nesting, huge strings,
every ``agent/*`` method with wrongly typed fields, LSP methods with wrong params, ids of
every JSON type, batches, notifications with ids and answers to requests never made.
Then it checks what JSON-RPC 2.0 promises: every request with a usable id got exactly one
well-formed response (those whose id was unusable one with ``id: null``), and the server
is alive and still runs a prompt to ``agent/settled``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from agentls.protocol_methods import REQUESTS

from tests.server.conftest import FauxScript
from tests.server.raw import RawServer, frame, request, well_formed_response

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEED = 20261201
COUNT = 10_000
BATCH = 200
"""Messages written between two reads of the answers (the pipes stay drained)."""

LSP_REQUESTS = [
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "workspace/symbol",
]
NOTIFICATIONS = ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "initialized"]
STRINGS = [
    "",
    "x",
    "all",
    "steer",
    "high",
    "\u0000",
    "a\u0000b",
    "\ud83d\ude00",
    "a" * 300,
    "../../etc",
    "~nobody/x",
    "/",
]
"""Strings with a meaning somewhere (queue modes, levels) and paths no file system takes."""

KINDS = {
    "agent": 40,
    "lsp": 6,
    "garbage": 5,
    "deep": 3,
    "huge": 1,
    "odd_id": 6,
    "batch": 4,
    "notify_id": 4,
    "notify": 8,
    "response": 3,
    "framing": 6,
}
"""The kinds of message (a method of :class:`Generator` each) and how often each is sent."""

FILLER = frame({"jsonrpc": "2.0", "method": "$/fuzz/filler", "params": {"pad": "." * 200}})
"""Sent after damaged framing: whatever the damage swallows of what follows, it ends inside this."""


class Generator:
    """Messages and what each one must be answered with."""

    def __init__(self, seed: int, session_id: str, cwd: Path) -> None:
        self.rng = random.Random(seed)
        self.session_id = session_id
        self.cwd = cwd
        self.counter = 0
        self.expected: set[Any] = set()
        """Ids that must get exactly one response."""
        self.maybe: set[Any] = set()
        """Ids inside damaged frames: at most one response."""
        self.nulls = 0
        """Responses with ``id: null`` that must come (at least; damaged framing adds some)."""
        self.kinds: Counter[str] = Counter()
        self.methods: set[str] = set()

    def new_id(self) -> Any:
        self.counter += 1
        return self.counter if self.rng.random() < 0.5 else f"fuzz-{self.counter}"

    # --- values ----------------------------------------------------------------------------

    def value(self, depth: int = 0) -> Any:
        """A random JSON value."""
        choices = ["null", "bool", "int", "float", "string", "list", "object", "session"]
        kind = self.rng.choice(choices if depth < 3 else choices[:5])
        if kind == "null":
            return None
        if kind == "bool":
            return self.rng.random() < 0.5
        if kind == "int":
            return self.rng.choice([0, -1, 1, 2**31, 2**63, -(2**70), self.rng.randint(-1000, 1000)])
        if kind == "float":
            return self.rng.choice([0.5, -1e300, 1e-300, 3.0])
        if kind == "string":
            return self.rng.choice(STRINGS)
        if kind == "list":
            return [self.value(depth + 1) for _ in range(self.rng.randint(0, 3))]
        if kind == "object":
            return {
                self.rng.choice(["jsonrpc", "id", "method", "a", ""]): self.value(depth + 1) for _ in range(2)
            }
        return self.session_id

    def params_for(self, method: str) -> Any:
        """The method's own fields with random (mostly wrong) values, now and then a stray field."""
        model = REQUESTS[method][0]
        fields = [field.alias or name for name, field in model.model_fields.items()]
        params = {name: self.value() for name in fields if self.rng.random() < 0.7}
        for name in {"cwd", "workspace", "sessionId"} & params.keys():
            if self.rng.random() < 0.5:
                params[name] = self.rng.choice(STRINGS)
        if "sessionId" in fields and self.rng.random() < 0.4:
            params["sessionId"] = self.session_id
        if (
            method in ("agent/newSession", "agent/listSessions", "agent/listPermissionRules")
            and self.rng.random() < 0.3
        ):
            params["cwd"] = str(self.cwd)
        if self.rng.random() < 0.1:
            params[self.rng.choice(["extra", "jsonrpc", "method"])] = self.value()
        return self.rng.choice([params] * 8 + [None, [], "text", 7])

    def nested(self, depth: int) -> str:
        return "[" * depth + "]" * depth if self.rng.random() < 0.5 else '{"a":' * depth + "1" + "}" * depth

    # --- messages --------------------------------------------------------------------------

    def message(self) -> bytes:
        kind = self.rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        self.kinds[kind] += 1
        return getattr(self, kind)()

    def _request(self, method: str, params: Any) -> bytes:
        msg_id = self.new_id()
        self.expected.add(msg_id)
        return request(msg_id, method, params)

    def agent(self) -> bytes:
        method = self.rng.choice(sorted(REQUESTS))
        self.methods.add(method)
        return self._request(method, self.params_for(method))

    def lsp(self) -> bytes:
        params = {"textDocument": self.value(), "position": self.value(), "query": self.value()}
        return self._request(self.rng.choice(LSP_REQUESTS), self.rng.choice([params, self.value()]))

    def garbage(self) -> bytes:
        self.nulls += 1
        body = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 200)))
        return frame(body=b"{" + body)  # never valid JSON

    def deep(self) -> bytes:
        msg_id = self.new_id()
        self.expected.add(msg_id)
        # too deep to parse whole (answered from the top level) or not
        depth = 20000 if self.rng.random() < 0.5 else self.rng.randint(50, 400)
        params = f'{{"sessionId":{self.nested(depth)}}}'
        text = f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"method":"agent/getState","params":{params}}}'
        return frame(body=text.encode())

    def huge(self) -> bytes:
        size = self.rng.choice([65_536, 300_000, 1_000_000])
        method, field = self.rng.choice(
            [
                ("agent/prompt", "text"),
                ("agent/steer", "text"),
                ("agent/getState", "sessionId"),
                ("agent/newSession", "cwd"),
            ]
        )
        return self._request(method, {"sessionId": self.session_id, field: "x" * size})

    def odd_id(self) -> bytes:
        msg_id = self.rng.choice([None, 1.5, True, False, {"id": 1}, [1, 2], -0.0])
        self.nulls += 1
        return frame({"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions", "params": {}})

    def batch(self) -> bytes:
        items = []
        for _ in range(self.rng.randint(0, 4)):
            if self.rng.random() < 0.7:
                msg_id = self.new_id()
                self.expected.add(msg_id)
                items.append({"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions", "params": {}})
            else:
                items.append(self.rng.choice([None, 1, "x", [], {"a": 1}, {"jsonrpc": "2.0"}]))
        if not any(isinstance(item, dict) and "id" in item for item in items):
            self.nulls += 1
        return frame(items)

    def notify_id(self) -> bytes:
        return self._request(self.rng.choice([*NOTIFICATIONS, "$/cancelRequest", "exit"]), self.value())

    def notify(self) -> bytes:
        method = self.rng.choice([*NOTIFICATIONS, "$/cancelRequest", "$/setTrace", "agent/prompt", "no/such"])
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if self.rng.random() < 0.8:
            message["params"] = self.rng.choice(
                [self.value(), {"id": self.value()}, {"textDocument": self.value()}]
            )
        return frame(message)

    def response(self) -> bytes:
        answer = self.rng.choice(
            [{"result": self.value()}, {"error": self.value()}, {"error": {"code": 1, "message": "x"}}]
        )
        return frame({"jsonrpc": "2.0", "id": f"never-asked-{self.counter}", **answer})

    def framing(self) -> bytes:
        msg_id = self.new_id()
        self.maybe.add(msg_id)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions", "params": {}}
        ).encode()
        damage = self.rng.choice(["short", "long", "huge", "header", "no_blank", "no_length", "binary"])
        if damage == "short":
            data = b"Content-Length: %d\r\n\r\n" % (len(body) - self.rng.randint(1, 20)) + body
        elif damage == "long":
            data = b"Content-Length: %d\r\n\r\n" % (len(body) + self.rng.randint(1, 50)) + body
        elif damage == "huge":
            data = (
                b"Content-Length: "
                + self.rng.choice([b"99999999999999999999", b"1000000000000"])
                + b"\r\n\r\n"
                + body
            )
        elif damage == "header":
            data = b"Content-Length: 12x\r\n\r\n" + body
        elif damage == "no_blank":
            data = b"Content-Length: %d\r\n" % len(body) + body
        elif damage == "no_length":
            data = b"Content-Type: application/json\r\n\r\n" + body
        else:
            data = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 9000)))
        return data + FILLER


def check(server: RawServer, generator: Generator) -> None:
    """Every response well-formed; each expected id answered once; the damaged ones at most once."""
    responses = server.responses()
    malformed = [m for m in responses if not well_formed_response(m)]
    assert not malformed, malformed[:3]
    counts = Counter(json.dumps(m["id"]) for m in responses)
    expected = {json.dumps(i) for i in generator.expected}
    maybe = {json.dumps(i) for i in generator.maybe}
    missing = sorted(expected - counts.keys())
    assert not missing, f"{len(missing)} requests were never answered: {missing[:10]}"
    twice = sorted(key for key, count in counts.items() if count > 1 and key != "null")
    assert not twice, f"answered more than once: {twice[:10]}"
    unknown = sorted(counts.keys() - expected - maybe - {"null", '"init"', '"first"'})
    assert not unknown, f"responses to ids never sent: {unknown[:10]}"
    assert counts["null"] >= generator.nulls


async def test_ten_thousand_generated_messages_are_each_answered_and_the_server_still_works(
    tmp_path: Path, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "Hello!"}])
    server = await RawServer.start(cwd=tmp_path)
    try:
        await server.initialize({"dataDir": str(data_dir), "fauxScript": str(faux_script.path)})
        target = await server.new_session("first", workspace)
        generator = Generator(SEED, target, workspace)
        for start in range(0, COUNT, BATCH):
            await server.send(b"".join(generator.message() for _ in range(BATCH)))
            await server.send(request("barrier", "agent/listSessions", {}))
            await server.response("barrier", seconds=60)
            server.messages = [m for m in server.messages if m.get("id") != "barrier"]
            assert server.process.returncode is None, f"the server ended after message {start + BATCH}"
        await server.until(lambda: not generator.expected - answered(server), seconds=60)
        check(server, generator)
        assert set(generator.kinds) == set(KINDS)
        assert generator.methods == set(REQUESTS)

        session_id = await server.new_session("last", workspace)
        answer = await server.call(
            "prompt", "agent/prompt", {"sessionId": session_id, "text": "still there?"}
        )
        settled = await server.settled(answer["result"]["runId"])
        assert settled["stopReason"] == "stop"
        assert "Traceback" not in server.stderr.decode(errors="replace")
    finally:
        await server.close()


def answered(server: RawServer) -> set[Any]:
    return {m["id"] for m in server.responses() if isinstance(m.get("id"), int | str)}
