"""End to end: damaged session files in the data dir, next to good sessions.

A hostile or broken file (JSON nested too deeply, ``NaN``/``Infinity``/``1e999`` where a
time belongs, a header that is no header, bytes that are not UTF-8, a folder in a file's
place) must cost only itself: ``agent/listSessions`` lists the others, loading it fails
with the ``storage`` error kind naming the file, a damaged entry line is skipped, the
server logs a warning naming the file and line (``window/logMessage``) and stays alive.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from agentls.client import SERVER_LOG, AgentClient, AgentClientError

from tests.server.conftest import WAIT, FauxScript, Servers, server_options, tool_call, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEEP = "[" * 10_000 + "]" * 10_000
"""Nested deeper than Python's JSON parser can recurse."""


def header(session_id: str, created_at: str = "1000", cwd: str = "/tmp") -> str:
    """A header line with ``created_at`` spliced in as raw JSON text."""
    fields = {"type": "session", "version": 1, "id": session_id, "cwd": cwd}
    return json.dumps(fields)[:-1] + f', "createdAt": {created_at}, "model": null, "thinkingLevel": "off"}}'


DAMAGED_FILES: dict[str, bytes] = {
    "deep": DEEP.encode() + b"\n",
    "infinite": header("infinite", "1e999").encode() + b"\n",
    "nan": header("nan", "NaN").encode() + b"\n",
    "infinity": header("infinity", "-Infinity").encode() + b"\n",
    "huge": header("huge", str(10**30)).encode() + b"\n",
    "wrongtype": header("wrongtype", '"1000"').encode() + b"\n",
    "relative": header("relative", cwd="not/absolute").encode() + b"\n",
    "notanobject": b'["type", "session"]\n',
    "empty": b"",
    "binary": b'{"type":"session","id":"\xff\xfe\xfd"}\n',
}
"""Session files whose header is unusable, by session id."""


class ServerLog(logging.Handler):
    """The server's ``window/logMessage`` lines, as the client logs them to :data:`SERVER_LOG`."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.lines: list[str] = []
        self._changed = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        self._changed.set()

    async def wait_for(self, *parts: str) -> str:
        """The first warning containing every one of ``parts``."""

        async def wait() -> str:
            while True:
                found = [line for line in self.lines if all(part in line for part in parts)]
                if found:
                    return found[0]
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(wait(), WAIT)
        except TimeoutError:
            raise AssertionError(f"no server warning with {parts}; got {self.lines[-5:]}") from None


@pytest_asyncio.fixture(loop_scope="module")
async def server_log() -> AsyncIterator[ServerLog]:
    handler = ServerLog()
    SERVER_LOG.addHandler(handler)
    try:
        yield handler
    finally:
        SERVER_LOG.removeHandler(handler)


async def load_error(client: AgentClient, session_id: str) -> AgentClientError:
    """The error ``agent/loadSession`` of ``session_id`` fails with."""
    with pytest.raises(AgentClientError) as caught:
        await within(client.load_session(session_id))
    return caught.value


async def test_damaged_headers_cost_only_their_own_session(
    client: AgentClient, data_dir: Path, tmp_path: Path, server_log: ServerLog
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    good = await within(client.new_session())
    assert (await within(client.prompt(good, "Hi", wait=True))).stop_reason == "stop"
    empty = await within(client.new_session())
    folder = data_dir / "sessions"
    for session_id, content in DAMAGED_FILES.items():
        (folder / f"{session_id}.jsonl").write_bytes(content)
    (folder / "afolder.jsonl").mkdir()

    listed = {info.session_id: info for info in await within(client.list_sessions())}
    assert set(listed) == {good, empty}
    assert listed[good].message_count == 2 and listed[empty].message_count == 0
    for session_id in DAMAGED_FILES:
        path = folder / f"{session_id}.jsonl"
        warning = await server_log.wait_for(str(path), "line 1")
        assert "not a readable session file" in warning

        error = await load_error(client, session_id)
        assert error.kind == "storage", (session_id, error.kind, str(error))
        assert f"{path} is not a readable session file (line 1: " in str(error)
    await server_log.wait_for(str(folder / "afolder.jsonl"), "is a folder")
    error = await load_error(client, "afolder")
    assert error.kind == "storage" and f"{folder / 'afolder.jsonl'} is a folder" in str(error)
    with pytest.raises(AgentClientError) as caught:
        await within(client.delete_session("afolder"))
    assert caught.value.kind == "storage" and "afolder.jsonl" in str(caught.value)

    for cwd in ("/tmp/a\0b", str(loop)):  # a listing's own cwd that names no folder
        with pytest.raises(AgentClientError) as caught:
            await within(client.list_sessions(cwd=cwd))
        assert caught.value.kind == "invalidParams" and "is not a usable path" in str(caught.value)

    # the server lives on: the good sessions still run and list
    assert (await within(client.prompt(empty, "Still there?", wait=True))).stop_reason == "stop"
    assert {info.session_id for info in await within(client.list_sessions())} == {good, empty}


async def test_damaged_entry_lines_are_skipped_when_loading(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript, server_log: ServerLog
) -> None:
    session = await within(client.new_session())
    await within(client.prompt(session, "Hi", wait=True))
    await within(client.close())
    faux_script([{"content": "Again."}])  # what the next server's faux model answers
    path = data_dir / "sessions" / f"{session}.jsonl"
    good_lines = len(path.read_bytes().splitlines())
    entry = '{"type":"message","id":"x1","parentId":null,"message":{"role":"user","content":"bad"}'
    damaged = [
        DEEP,
        entry + ',"timestamp":1e999}',
        entry + ',"timestamp":NaN}',
        entry + ',"timestamp":Infinity}',
        entry + f',"timestamp":{10**30}}}',
        entry + ',"timestamp":"5"}',
        '{"type":"message","id":"x2","timestamp":1,"message":' + DEEP + "}",
    ]
    with path.open("ab") as file:
        for line in damaged:
            file.write(line.encode() + b"\n")
        file.write(b'{"type":"message","id":"\xff\xfe","timestamp":1}\n')

    other = await servers.start(server_options(data_dir, faux_script))
    loaded = await within(other.load_session(session))
    assert loaded.message_count == 2
    for number in range(good_lines + 1, good_lines + len(damaged) + 2):
        await server_log.wait_for(f"{path} line {number}: skipped (")
    await server_log.wait_for(f"{path} line {good_lines + 3}: skipped (not JSON that can be read: NaN")
    await server_log.wait_for(f"{path} line {good_lines + len(damaged) + 1}: skipped (not UTF-8")
    # one warning per damaged line and load (the file is read once)
    assert sum(f"{path} line {good_lines + 1}: skipped" in line for line in server_log.lines) == 1

    # the loaded session runs, appends after the damage, and loads again with it skipped
    assert (await within(other.prompt(session, "And now?", wait=True))).stop_reason == "stop"
    assert [info.message_count for info in await within(other.list_sessions())] == [4]
    texts = [m["content"] for m in (await within(other.get_messages(session))).messages]
    assert [t if isinstance(t, str) else t[0]["text"] for t in texts] == [
        "Hi",
        "Hello!",
        "And now?",
        "Again.",
    ]


async def test_non_finite_numbers_in_a_message_are_stored_as_zero(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript
) -> None:
    # Python's json writes (and reads) NaN and Infinity, so the faux script can carry them
    # into a tool call's arguments, as a provider's lenient JSON parser could.
    call = tool_call("c1", "no_such_tool", {"x": float("nan"), "y": [float("inf"), 1.5]})
    faux_script([{"content": [call]}, {"content": "Done."}])
    session = await within(client.new_session())
    assert (await within(client.prompt(session, "Go", wait=True))).stop_reason == "stop"
    text = (data_dir / "sessions" / f"{session}.jsonl").read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text

    other = await servers.start(server_options(data_dir, faux_script))
    assert (await within(other.load_session(session))).message_count == 4
    messages = (await within(other.get_messages(session))).messages
    assert messages[1]["content"][0]["arguments"] == {"x": 0, "y": [0, 1.5]}
