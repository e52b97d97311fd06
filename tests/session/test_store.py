"""The session store: JSONL round trips, ordering, damaged files, listing and crash safety."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from agentls.ai import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    to_wire,
    user_message,
)
from agentls.data_dir import default_data_dir
from agentls.session.history import session_writer as writer_module
from agentls.session.history.session_lines import MAX_LINE_BYTES
from agentls.session.history.store import (
    SessionHeader,
    SessionNotFound,
    SessionStore,
    SessionStoreError,
    SessionWriter,
    new_session_id,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def make_header(session_id: str, cwd: Path | str, created_at: int = 1_000, **kwargs: Any) -> SessionHeader:
    values: dict[str, Any] = {
        "system_prompt": "You are helpful.",
        "model": ("faux", "faux-1"),
        "thinking_level": "off",
    }
    values.update(kwargs)
    return SessionHeader(id=session_id, cwd=str(cwd), created_at=created_at, **values)


def session_file(store: SessionStore, session_id: str) -> Path:
    return store.root / "sessions" / f"{session_id}.jsonl"


def read_lines(path: Path) -> list[dict[str, Any]]:
    # splitlines() on purpose: it also breaks at U+2028, which the store must escape
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "data")


@pytest.fixture
def resolved_tmp(tmp_path: Path) -> str:
    return str(tmp_path.resolve())


async def write_session(store: SessionStore, session_id: str, cwd: Path, texts: list[str]) -> None:
    writer = store.create(make_header(session_id, cwd))
    for text in texts:
        await writer.append_message(user_message(text))
    writer.close()


# --- round trip ------------------------------------------------------------------------


async def test_round_trip_of_every_entry_kind(store: SessionStore, tmp_path: Path, resolved_tmp: str) -> None:
    messages = [
        user_message("Read the file", images=[ImageContent(data="aGVsbG8=", mime_type="image/png")]),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="I should read it", thinking_signature="sig"),
                TextContent(text="Reading"),
                ToolCall(id="call-1", name="read", arguments={"path": "a.txt", "n": [1, 2.5]}),
            ],
            provider="faux",
            model="faux-1",
            usage=Usage(input=10, output=5, total_tokens=15),
            stop_reason="toolUse",
            error_message=None,  # set explicitly: written as null, and must come back as null
            timestamp=5,
        ),
        ToolResultMessage(
            tool_call_id="call-1",
            tool_name="read",
            content=[TextContent(text="line one\nline two \u2028 \U0001f600")],
            details={"bytes": 18, "nested": {"ok": True, "none": None}},
            is_error=False,
            timestamp=6,
        ),
        CustomMessage.model_validate(
            {"role": "bashExecution", "command": "ls", "output": "a.txt", "exitCode": 0, "timestamp": 7}
        ),
        UserMessage(content="plain string content", timestamp=8),
    ]
    writer = store.create(make_header("s1", tmp_path))
    ids = [await writer.append_message(messages[0])]
    ids.append(await writer.append_model_change("anthropic", "claude-x"))
    ids.append(await writer.append_thinking_level_change("high"))
    for message in messages[1:3]:
        ids.append(await writer.append_message(message))
    ids.append(await writer.append_system_prompt_change("Be brief."))
    for message in messages[3:]:
        ids.append(await writer.append_message(message))
    writer.close()

    loaded = store.load("s1")
    assert loaded.warnings == []
    assert loaded.header == make_header("s1", resolved_tmp)
    assert [to_wire(m) for m in loaded.messages] == [to_wire(m) for m in messages]
    assert [type(m) for m in loaded.messages] == [type(m) for m in messages]
    assert loaded.messages[1].error_message is None and loaded.messages[1].defined("error_message")
    # as Pi's getSessionContextSettings: the model that answered after the model_change counts
    assert loaded.model == ("faux", "faux-1")
    assert loaded.thinking_level == "high"
    assert loaded.system_prompt == "Be brief."
    assert loaded.updated_at >= 1_000

    lines = read_lines(session_file(store, "s1"))
    assert lines[0] == {
        "type": "session",
        "version": 1,
        "id": "s1",
        "cwd": resolved_tmp,
        "createdAt": 1_000,
        "systemPrompt": "You are helpful.",
        "model": {"provider": "faux", "id": "faux-1"},
        "thinkingLevel": "off",
    }
    entries = lines[1:]
    assert [e["id"] for e in entries] == ids
    assert len(set(ids)) == len(ids)
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    assert [e["type"] for e in entries] == [
        "message",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
        "system_prompt_change",
        "message",
        "message",
    ]
    assert entries[1] == {**entries[1], "provider": "anthropic", "modelId": "claude-x"}
    assert entries[2]["thinkingLevel"] == "high"
    assert entries[5]["systemPrompt"] == "Be brief."
    assert entries[3]["message"] == to_wire(messages[1])
    assert all(isinstance(e["timestamp"], int) for e in entries)


async def test_header_without_model_and_lone_surrogate(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path, model=None))
    await writer.append_message(user_message("bad \udc80 text"))
    writer.close()
    assert read_lines(session_file(store, "s1"))[0]["model"] is None
    loaded = store.load("s1")
    assert loaded.model is None
    assert loaded.messages[0].content[0].text == "bad \udc80 text"


async def test_create_refuses_an_existing_id(store: SessionStore, tmp_path: Path) -> None:
    store.create(make_header("s1", tmp_path)).close()
    with pytest.raises(SessionStoreError, match="already exists"):
        store.create(make_header("s1", tmp_path))


async def test_open_writer_continues_the_chain(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    first = await writer.append_message(user_message("one"))
    writer.close()
    writer = store.open_writer("s1")
    assert writer.last_entry_id == first
    second = await writer.append_message(user_message("two"))
    writer.close()
    entries = read_lines(session_file(store, "s1"))[1:]
    assert [(e["id"], e["parentId"]) for e in entries] == [(first, None), (second, first)]
    assert [m.content[0].text for m in store.load("s1").messages] == ["one", "two"]


async def test_closed_writer_refuses_appends(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    writer.close()
    writer.close()
    with pytest.raises(SessionStoreError, match="closed"):
        await writer.append_message(user_message("late"))


# --- ordering and threads --------------------------------------------------------------


async def test_concurrent_appends_keep_call_order(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    appends = []
    for i in range(60):
        if i % 3 == 0:
            appends.append(writer.append_message(user_message(f"m{i}")))
        elif i % 3 == 1:
            appends.append(writer.append_thinking_level_change(f"level{i}"))
        else:
            appends.append(writer.append_model_change("p", f"model{i}"))
    ids = await asyncio.gather(*appends)
    writer.close()
    entries = read_lines(session_file(store, "s1"))[1:]
    assert [e["id"] for e in entries] == ids
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    loaded = store.load("s1")
    assert [m.content[0].text for m in loaded.messages] == [f"m{i}" for i in range(0, 60, 3)]
    assert loaded.thinking_level == "level58"
    assert loaded.model == ("p", "model59")


async def test_writes_happen_off_the_event_loop_thread(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[int] = []
    real_write_all = writer_module.write_all

    def recording_write_all(fd: int, data: bytes) -> None:
        threads.append(threading.get_ident())
        real_write_all(fd, data)

    writer = store.create(make_header("s1", tmp_path))
    monkeypatch.setattr(writer_module, "write_all", recording_write_all)
    await writer.append_message(user_message("one"))
    await writer.append_message(user_message("two"))
    writer.close()
    assert len(threads) == 2
    assert threading.get_ident() not in threads


async def test_cancelled_append_is_still_written_in_order(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    task = asyncio.create_task(writer.append_message(user_message("first")))
    await asyncio.sleep(0)  # the append has started: its line is queued
    task.cancel()
    await writer.append_message(user_message("second"))
    writer.close()
    with pytest.raises(asyncio.CancelledError):
        await task
    entries = read_lines(session_file(store, "s1"))[1:]
    assert [e["message"]["content"][0]["text"] for e in entries] == ["first", "second"]
    assert entries[1]["parentId"] == entries[0]["id"]


async def test_a_failed_write_stops_the_writer(
    store: SessionStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = store.create(make_header("s1", tmp_path))
    await writer.append_message(user_message("kept"))

    def full_disk(fd: int, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer_module, "write_all", full_disk)
    with pytest.raises(SessionStoreError, match="No space left"):
        await writer.append_message(user_message("lost"))
    monkeypatch.undo()
    with pytest.raises(SessionStoreError, match="no longer being saved"):
        await writer.append_message(user_message("refused"))
    writer.close()
    assert [m.content[0].text for m in store.load("s1").messages] == ["kept"]


# --- damaged files ---------------------------------------------------------------------


async def test_truncated_last_line_is_skipped_and_fenced_off(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await write_session(store, "s1", tmp_path, ["one", "two"])
    path = session_file(store, "s1")
    whole = json.dumps({"type": "message", "id": "x", "parentId": None, "timestamp": 1, "message": {}})
    with path.open("a", encoding="utf-8") as file:
        file.write(whole[: len(whole) // 2])  # half a line, no newline: a write cut short

    with caplog.at_level(logging.WARNING, logger="agentls.session.history.store"):
        loaded = store.load("s1")
    assert [m.content[0].text for m in loaded.messages] == ["one", "two"]
    assert len(loaded.warnings) == 1
    assert "line 4" in loaded.warnings[0] and "truncated" in loaded.warnings[0]
    assert any("truncated" in r.getMessage() for r in caplog.records)

    last_good = read_lines_before_garbage(path)[-1]["id"]
    writer = store.open_writer("s1")
    assert writer.last_entry_id == last_good
    new_id = await writer.append_message(user_message("three"))
    writer.close()
    loaded = store.load("s1")
    assert [m.content[0].text for m in loaded.messages] == ["one", "two", "three"]
    assert len(loaded.warnings) == 1  # the half line stays a skipped line of its own
    last_entry = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert (last_entry["id"], last_entry["parentId"]) == (new_id, last_good)


def read_lines_before_garbage(path: Path) -> list[dict[str, Any]]:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            break
    return lines


async def test_malformed_middle_lines_are_skipped(store: SessionStore, tmp_path: Path) -> None:
    await write_session(store, "s1", tmp_path, ["one"])
    path = session_file(store, "s1")
    bad_lines = [
        "this is not json",
        "[1, 2, 3]",
        json.dumps({"type": "bookmark", "id": "b", "parentId": None, "timestamp": 2}),
        json.dumps({"type": "message", "id": "m", "parentId": None, "timestamp": 2, "message": {"x": 1}}),
        json.dumps(
            {"type": "message", "id": "m2", "parentId": None, "timestamp": 2, "message": {"role": "user"}}
        ),
        json.dumps({"type": "model_change", "id": "c", "parentId": None, "timestamp": 2, "provider": 3}),
        json.dumps({"type": "thinking_level_change", "parentId": None, "timestamp": 2, "thinkingLevel": "x"}),
        "\udcff".encode("utf-8", "surrogateescape").decode("latin-1"),  # invalid UTF-8 once re-encoded
        "",
    ]
    with path.open("ab") as file:
        for line in bad_lines:
            file.write(line.encode("latin-1" if line.startswith("\xff") else "utf-8") + b"\n")
    writer = store.open_writer("s1")
    await writer.append_message(user_message("two"))
    writer.close()

    loaded = store.load("s1")
    assert [m.content[0].text for m in loaded.messages] == ["one", "two"]
    assert loaded.model == ("faux", "faux-1")
    assert loaded.thinking_level == "off"
    assert len(loaded.warnings) == len(bad_lines) - 1  # the blank line is not a warning
    assert all("skipped" in w for w in loaded.warnings)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "\n",
        "not json\n",
        json.dumps({"type": "message", "id": "a", "parentId": None, "timestamp": 1, "message": {}}) + "\n",
        json.dumps({"type": "session", "version": 1, "cwd": "/x", "createdAt": 1}) + "\n",  # no id
        '{"type":"session","version":1,"id":"s1","cwd":"/x","crea',  # truncated header
    ],
)
def test_missing_or_broken_header_raises(store: SessionStore, content: str) -> None:
    path = session_file(store, "s1")
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SessionStoreError, match="not a readable session file") as info:
        store.load("s1")
    assert not isinstance(info.value, SessionNotFound)
    with pytest.raises(SessionStoreError):
        store.open_writer("s1")


def test_newer_format_version_asks_for_an_upgrade(store: SessionStore) -> None:
    path = session_file(store, "s1")
    path.parent.mkdir(parents=True)
    header = {"type": "session", "version": 2, "id": "s1", "cwd": "/x", "createdAt": 1}
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    with pytest.raises(SessionStoreError, match="upgrade agentls"):
        store.load("s1")


# --- hostile damage: every value read from a file is checked ---------------------------

DEEP = "[" * 10_000 + "]" * 10_000
"""Nested deeper than Python's JSON parser can recurse."""


def raw_json(value: dict[str, Any], **raw: str) -> str:
    """``value`` as JSON with the given fields' values spliced in as raw text (``NaN``, ``1e999``...)."""
    text = json.dumps({**value, **{key: f"@{key}@" for key in raw}})
    for key, literal in raw.items():
        text = text.replace(f'"@{key}@"', literal)
    return text


HEADER: dict[str, Any] = {
    "type": "session",
    "version": 1,
    "id": "s1",
    "cwd": "/x",
    "createdAt": 1_000,
    "systemPrompt": "",
    "model": None,
    "thinkingLevel": "off",
}

DAMAGED_HEADERS: dict[str, tuple[bytes, str]] = {
    # name: (file content, what the error says is wrong)
    "deep nesting": (DEEP.encode() + b"\n", "nests too deeply"),
    "deep field": (raw_json(HEADER, systemPrompt=DEEP).encode() + b"\n", "nests too deeply"),
    "1e999": (raw_json(HEADER, createdAt="1e999").encode() + b"\n", "out of range"),
    "-1e999": (raw_json(HEADER, createdAt="-1e999").encode() + b"\n", "out of range"),
    "NaN": (raw_json(HEADER, createdAt="NaN").encode() + b"\n", "NaN is not a JSON value"),
    "Infinity": (raw_json(HEADER, createdAt="Infinity").encode() + b"\n", "Infinity is not"),
    "-Infinity": (raw_json(HEADER, createdAt="-Infinity").encode() + b"\n", "-Infinity is not"),
    "NaN elsewhere": (raw_json(HEADER, thinkingLevel="NaN").encode() + b"\n", "NaN is not"),
    "huge int": (json.dumps({**HEADER, "createdAt": 10**30}).encode() + b"\n", "createdAt"),
    "5000 digits": (raw_json(HEADER, createdAt="9" * 5000).encode() + b"\n", "not JSON that can be read"),
    "negative time": (json.dumps({**HEADER, "createdAt": -1}).encode() + b"\n", "createdAt"),
    "string time": (json.dumps({**HEADER, "createdAt": "1000"}).encode() + b"\n", "createdAt"),
    "bool time": (json.dumps({**HEADER, "createdAt": True}).encode() + b"\n", "createdAt"),
    "no time": (json.dumps({**HEADER, "createdAt": None}).encode() + b"\n", "createdAt"),
    "int id": (json.dumps({**HEADER, "id": 3}).encode() + b"\n", "id"),
    "relative cwd": (json.dumps({**HEADER, "cwd": "some/where"}).encode() + b"\n", "cwd"),
    "NUL in cwd": (json.dumps({**HEADER, "cwd": "/x\u0000y"}).encode() + b"\n", "cwd"),
    "list cwd": (json.dumps({**HEADER, "cwd": ["/x"]}).encode() + b"\n", "cwd"),
    "model": (json.dumps({**HEADER, "model": {"provider": 1, "id": "x"}}).encode() + b"\n", "model"),
    "permissions": (json.dumps({**HEADER, "permissions": {"read": 1}}).encode() + b"\n", "permissions"),
    "prompt": (json.dumps({**HEADER, "systemPrompt": {"text": "x"}}).encode() + b"\n", "systemPrompt"),
    "array": (b"[1, 2]\n", 'not a {"type":"session"} header'),
    "string": (b'"session"\n', 'not a {"type":"session"} header'),
    "number": (b"42\n", 'not a {"type":"session"} header'),
    "null": (b"null\n", 'not a {"type":"session"} header'),
    "empty file": (b"", "no header"),
    "blank lines": (b"\n  \n", "no header"),
    "not UTF-8": (b'{"type":"session","id":"\xff\xfe"}\n', "not UTF-8"),
}


@pytest.mark.parametrize("name", DAMAGED_HEADERS)
async def test_damaged_header_is_a_store_error_and_list_skips_it(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    await write_session(store, "good", tmp_path, ["hello"])
    content, reason = DAMAGED_HEADERS[name]
    path = session_file(store, "s1")
    path.write_bytes(content)

    for call in (store.load, store.open_writer):
        with pytest.raises(SessionStoreError) as info:
            call("s1")
        assert not isinstance(info.value, SessionNotFound)
        assert f"{path} is not a readable session file (line 1: " in str(info.value)
        assert reason in str(info.value)
        assert len(str(info.value)) < 600  # a huge damaged value is not copied into the message
    with caplog.at_level(logging.WARNING, logger="agentls.session.history.store"):
        assert [s.session_id for s in store.list()] == ["good"]
    [record] = [r for r in caplog.records if str(path) in r.getMessage()]
    assert record.levelno == logging.WARNING and "line 1" in record.getMessage()
    assert path.read_bytes() == content  # nothing was written to the damaged file


def test_header_line_of_a_huge_size(store: SessionStore) -> None:
    path = session_file(store, "s1")
    path.parent.mkdir(parents=True)
    with path.open("wb") as file:
        file.write(raw_json(HEADER, systemPrompt='"' + "x" * MAX_LINE_BYTES + '"').encode())
        file.write(b"\n")
    with pytest.raises(SessionStoreError, match=r"line 1: it is \d+ bytes long, more than the 67108864"):
        store.load("s1")


@pytest.mark.parametrize("kind", ["folder", "fifo"])
async def test_something_else_where_a_session_file_should_be(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    await write_session(store, "good", tmp_path, ["hello"])
    path = session_file(store, "s1")
    if kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)  # opening it for reading the usual way would block the server for good
    expected = "a folder" if kind == "folder" else "not a regular file"

    for call in (store.load, store.open_writer):
        with pytest.raises(SessionStoreError, match=f"is {expected}, not a session file") as info:
            call("s1")
        assert not isinstance(info.value, SessionNotFound) and str(path) in str(info.value)
    with caplog.at_level(logging.WARNING, logger="agentls.session.history.store"):
        assert [s.session_id for s in store.list()] == ["good"]
    assert any(str(path) in r.getMessage() for r in caplog.records)
    if kind == "folder":
        with pytest.raises(SessionStoreError, match="Cannot delete"):
            store.delete("s1")


ENTRY: dict[str, Any] = {"type": "message", "id": "e1", "parentId": None, "timestamp": 5_000}
MESSAGE = {"role": "user", "content": "hi", "timestamp": 5_000}

DAMAGED_ENTRIES: list[tuple[bytes, str]] = [
    # (line, what the warning says is wrong)
    (DEEP.encode(), "nests too deeply"),
    (raw_json(ENTRY, message='{"role":"user","content":' + DEEP + "}").encode(), "nests too deeply"),
    (raw_json({**ENTRY, "message": MESSAGE}, timestamp="1e999").encode(), "out of range"),
    (raw_json({**ENTRY, "message": MESSAGE}, timestamp="-1e999").encode(), "out of range"),
    (raw_json({**ENTRY, "message": MESSAGE}, timestamp="NaN").encode(), "NaN is not a JSON value"),
    (raw_json({**ENTRY, "message": MESSAGE}, timestamp="Infinity").encode(), "Infinity is not"),
    (raw_json({**ENTRY, "message": MESSAGE}, timestamp="-Infinity").encode(), "-Infinity is not"),
    (raw_json({**ENTRY, "message": MESSAGE}, timestamp="9" * 5000).encode(), "not JSON that can be read"),
    (json.dumps({**ENTRY, "message": MESSAGE, "timestamp": 10**30}).encode(), "timestamp"),
    (json.dumps({**ENTRY, "message": MESSAGE, "timestamp": -5}).encode(), "timestamp"),
    (json.dumps({**ENTRY, "message": MESSAGE, "timestamp": "5000"}).encode(), "timestamp"),
    (json.dumps({**ENTRY, "message": MESSAGE, "timestamp": True}).encode(), "timestamp"),
    (json.dumps({**ENTRY, "message": MESSAGE, "timestamp": None}).encode(), "timestamp"),
    (json.dumps({**ENTRY, "message": MESSAGE, "id": 7}).encode(), "without a string id"),
    (json.dumps({**ENTRY, "message": MESSAGE, "id": ""}).encode(), "without a string id"),
    (json.dumps({**ENTRY, "type": {"x": 1}}).encode(), "unknown entry type"),
    (json.dumps({**ENTRY, "type": "x" * 10_000}).encode(), "unknown entry type"),
    (raw_json(ENTRY, message='{"role":"user","content":"hi","usage":{"input":NaN}}').encode(), "NaN is not"),
    (json.dumps({**ENTRY, "message": {"role": "user", "content": 5}}).encode(), "does not parse"),
    (b'{"type":"message","id":"\xff\xfe","timestamp":1}', "not UTF-8"),
    (json.dumps({**ENTRY, "type": "model_change", "provider": ["x"], "modelId": "y"}).encode(), "provider"),
    (b"[]", "not a JSON object"),
]


async def test_damaged_entry_lines_are_skipped_with_a_warning(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await write_session(store, "s1", tmp_path, ["one"])
    path = session_file(store, "s1")
    with path.open("ab") as file:
        for line, _ in DAMAGED_ENTRIES:
            file.write(line + b"\n")
    writer = store.open_writer("s1")
    await writer.append_message(user_message("two"))
    writer.close()

    with caplog.at_level(logging.WARNING, logger="agentls.session.history.store"):
        loaded = store.load("s1")
    assert [m.content[0].text for m in loaded.messages] == ["one", "two"]
    assert loaded.updated_at < 10**13  # no damaged timestamp counted
    assert len(loaded.warnings) == len(DAMAGED_ENTRIES)
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for number, ((_, reason), warning) in enumerate(zip(DAMAGED_ENTRIES, loaded.warnings, strict=True), 3):
        assert warning.startswith(f"{path} line {number}: skipped (") and reason in warning, warning
        assert len(warning) < 600
        assert any(warning in message for message in logged)
    assert [s.message_count for s in store.list()] == [2]


async def test_entry_lines_of_a_huge_size_are_skipped(store: SessionStore, tmp_path: Path) -> None:
    await write_session(store, "s1", tmp_path, ["one"])
    path = session_file(store, "s1")
    huge = b'{"type":"message","text":"' + b"x" * MAX_LINE_BYTES + b'"}'
    with path.open("ab") as file:
        file.write(huge + b"\n")
    writer = store.open_writer("s1")
    await writer.append_message(user_message("two"))
    writer.close()
    with path.open("ab") as file:
        file.write(huge)  # a huge last line that does not end either

    loaded = store.load("s1")
    assert [m.content[0].text for m in loaded.messages] == ["one", "two"]
    first, last = loaded.warnings
    assert first == (
        f"{path} line 3: skipped (it is {len(huge)} bytes long, more than the 67108864 a line may hold)"
    )
    assert last.startswith(f"{path} line 5: skipped (truncated")
    writer = store.open_writer("s1")  # fences the huge partial line off, as any partial line
    await writer.append_message(user_message("three"))
    writer.close()
    assert [m.content[0].text for m in store.load("s1").messages] == ["one", "two", "three"]


async def test_a_symlink_loop_as_a_stored_cwd_does_not_break_listing(
    store: SessionStore, tmp_path: Path
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    await write_session(store, "good", tmp_path, ["hello"])
    path = session_file(store, "s1")
    path.write_text(json.dumps({**HEADER, "cwd": str(loop)}) + "\n", encoding="utf-8")
    assert {s.session_id for s in store.list()} == {"good", "s1"}
    assert [s.session_id for s in store.list(str(tmp_path))] == ["good"]


# --- what the store writes, it reads back ----------------------------------------------


async def test_non_finite_numbers_are_written_as_zero(store: SessionStore, tmp_path: Path) -> None:
    nan, inf = float("nan"), float("inf")
    message = AssistantMessage(
        content=[ToolCall(id="c1", name="ls", arguments={"x": nan, "y": [-inf, 1.5]})],
        usage=Usage(input=3, cost={"input": nan, "output": inf, "total": nan}),
        stop_reason="toolUse",
        timestamp=5,
    )
    writer = store.create(make_header("s1", tmp_path))
    await writer.append_message(message)
    writer.close()

    text = session_file(store, "s1").read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    loaded = store.load("s1")
    assert loaded.warnings == []
    [back] = loaded.messages
    assert back.content[0].arguments == {"x": 0.0, "y": [0.0, 1.5]}
    assert (back.usage.input, back.usage.cost.input, back.usage.cost.output, back.usage.cost.total) == (
        3,
        0,
        0,
        0,
    )


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


async def test_entries_nested_too_deeply_are_refused(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    deep = AssistantMessage(content=[ToolCall(id="c1", name="ls", arguments={"a": nested(150)})])
    with pytest.raises(SessionStoreError, match="nests more than 100 levels deep"):
        await writer.append_message(deep)
    fine = AssistantMessage(content=[ToolCall(id="c2", name="ls", arguments={"a": nested(90)})])
    await writer.append_message(fine)  # the writer goes on: nothing of the refused entry was written
    writer.close()
    loaded = store.load("s1")
    assert loaded.warnings == []
    assert [to_wire(m) for m in loaded.messages] == [to_wire(fine)]


async def test_entries_longer_than_a_line_may_be_are_refused(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    with pytest.raises(SessionStoreError, match="bytes as JSON, more than the 67108864"):
        await writer.append_message(user_message("x" * MAX_LINE_BYTES))
    await writer.append_message(user_message("short"))
    writer.close()
    loaded = store.load("s1")
    assert loaded.warnings == [] and [m.content[0].text for m in loaded.messages] == ["short"]


def test_create_refuses_what_could_not_be_read_back(store: SessionStore, tmp_path: Path) -> None:
    for created_at in (-1, 10**30):
        with pytest.raises(ValueError, match="not a time in milliseconds"):
            store.create(make_header("s1", tmp_path, created_at=created_at))
    store.root.mkdir()
    (store.root / "sessions").write_text("a file where the folder should be", encoding="utf-8")
    with pytest.raises(SessionStoreError, match="Cannot create") as info:
        store.create(make_header("s1", tmp_path))
    assert "already exists" not in str(info.value)


# --- listing, deleting, ids ------------------------------------------------------------


async def test_list_orders_filters_and_titles(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    long_text = "word " * 40
    writer = store.create(make_header("old", project, created_at=100))
    await writer.append_message(AssistantMessage(content=[TextContent(text="hello")]))
    await writer.append_message(user_message("  Fix\nthe   bug  "))
    await writer.append_message(user_message("second prompt"))
    writer.close()
    await asyncio.sleep(0.01)
    writer = store.create(make_header("new", project, created_at=200))
    await writer.append_message(user_message(long_text))
    await writer.append_model_change("anthropic", "claude-x")
    writer.close()
    store.create(make_header("elsewhere", other, created_at=300)).close()
    broken = session_file(store, "broken")
    broken.write_text("garbage\n", encoding="utf-8")
    (store.root / "sessions" / "notes.txt").write_text("not a session", encoding="utf-8")

    with caplog.at_level(logging.WARNING, logger="agentls.session.history.store"):
        everything = store.list()
    assert "broken" in caplog.text
    assert {s.session_id for s in everything} == {"old", "new", "elsewhere"}
    updated = [s.updated_at for s in everything]
    assert updated == sorted(updated, reverse=True)

    listed = store.list(str(project))
    assert [s.session_id for s in listed] == ["new", "old"]
    new, old = listed
    assert old.title == "Fix the bug"
    assert old.message_count == 3
    assert old.model == ("faux", "faux-1")
    assert old.cwd == str(project.resolve())
    assert old.created_at == 100
    assert new.title is not None and len(new.title) == 80 and new.title.endswith("…")
    assert new.title[:-1] == long_text.strip()[:79].rstrip()
    assert new.model == ("anthropic", "claude-x")
    assert new.updated_at > old.updated_at

    # cwd is compared after resolving: a relative path and a trailing "/.." both match
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert [s.session_id for s in store.list("project")] == ["new", "old"]
    assert [s.session_id for s in store.list(str(project / "sub" / ".."))] == ["new", "old"]
    assert [s.session_id for s in store.list(str(other))] == ["elsewhere"]
    assert store.list(str(other))[0].title is None
    assert store.list(str(tmp_path / "nowhere")) == []


def test_list_of_an_empty_store(tmp_path: Path) -> None:
    assert SessionStore(tmp_path / "nothing-here").list() == []


async def test_delete_and_exists(store: SessionStore, tmp_path: Path) -> None:
    await write_session(store, "s1", tmp_path, ["one"])
    assert store.exists("s1")
    assert store.delete("s1") is True
    assert not store.exists("s1")
    assert store.delete("s1") is False
    with pytest.raises(SessionNotFound, match="s1") as info:
        store.load("s1")
    assert str(store.root / "sessions") in str(info.value)
    with pytest.raises(SessionNotFound):
        store.open_writer("s1")


@pytest.mark.parametrize(
    "bad_id", ["../x", "a/b", "", "..", "a\\b", "/etc/passwd", "a b", "x.jsonl", "a\x00b", "é", "a" * 129]
)
async def test_bad_ids_are_rejected_everywhere(store: SessionStore, tmp_path: Path, bad_id: str) -> None:
    # a file the traversal would reach if ids were not checked
    (store.root / "sessions").mkdir(parents=True)
    (store.root / "x.jsonl").write_text("secret\n", encoding="utf-8")
    for call in (store.load, store.open_writer, store.delete, store.exists):
        with pytest.raises(SessionNotFound) as info:
            call(bad_id)
        assert repr(bad_id) in str(info.value) and str(store.root / "sessions") in str(info.value)
    with pytest.raises(SessionNotFound):
        store.create(make_header(bad_id, tmp_path))
    assert (store.root / "x.jsonl").read_text(encoding="utf-8") == "secret\n"
    assert sorted(p.name for p in (store.root / "sessions").iterdir()) == []


def test_good_ids_are_accepted(store: SessionStore, tmp_path: Path) -> None:
    for session_id in (new_session_id(), "a", "A-b_9", "z" * 128):
        writer = store.create(make_header(session_id, tmp_path))
        writer.close()
        assert store.exists(session_id)
        assert store.load(session_id).header.id == session_id
    assert len(new_session_id()) == 32 and new_session_id() != new_session_id()


def test_default_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTLS_DATA_DIR", str(tmp_path / "custom"))
    assert default_data_dir() == tmp_path / "custom"
    monkeypatch.delenv("AGENTLS_DATA_DIR")
    assert default_data_dir().name == "agentls"
    assert default_data_dir().is_absolute()


def test_writer_is_exported_type(store: SessionStore, tmp_path: Path) -> None:
    writer = store.create(make_header("s1", tmp_path))
    assert isinstance(writer, SessionWriter)
    assert writer.session_id == "s1" and writer.path == session_file(store, "s1")
    writer.close()
    assert writer.closed


# --- crash safety ----------------------------------------------------------------------

CHILD = r"""
import asyncio, sys
from pathlib import Path
from agentls.ai import user_message
from agentls.session.history.store import SessionHeader, SessionStore

async def main() -> None:
    store = SessionStore(Path(sys.argv[1]))
    writer = store.create(SessionHeader("crash", sys.argv[2], 1, "prompt", None, "off"))
    print("ready", flush=True)
    padding = "x" * 20000  # long lines make a kill in the middle of a write likely
    i = 0
    while True:
        await writer.append_message(user_message(f"{i} {padding}"))
        print(i, flush=True)
        i += 1

asyncio.run(main())
"""


def skipped_lines(warnings: list[str]) -> list[int]:
    return [int(match.group(1)) for w in warnings if (match := re.search(r" line (\d+): skipped", w))]


def run_and_kill_child(root: Path, cwd: Path, returned: int) -> list[int]:
    """Run CHILD, SIGKILL it once it has reported ``returned`` appends; every number it printed."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "server")}
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(cwd)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        first = process.stdout.readline()
        assert first == "ready\n", process.stderr.read()
        printed: list[int] = []
        while len(printed) < returned:
            line = process.stdout.readline()
            assert line, f"the child stopped early: {process.stderr.read()}"
            printed.append(int(line))
        time.sleep(random.uniform(0, 0.02))  # land the kill anywhere in the loop, mid-write included
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        printed.extend(int(line) for line in process.stdout.read().split())  # printed before the kill
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    return printed


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
async def test_kill_9_keeps_every_returned_append(store: SessionStore, tmp_path: Path) -> None:
    printed = await asyncio.to_thread(run_and_kill_child, store.root, tmp_path, 25)
    assert printed == list(range(len(printed)))

    loaded = store.load("crash")
    numbers = [int(m.content[0].text.split()[0]) for m in loaded.messages]
    assert numbers == list(range(len(numbers)))  # in order, no gap
    assert len(numbers) >= len(printed)  # every returned append is there (maybe one more)
    assert len(loaded.warnings) <= 1  # at most the one line being written at the kill

    # the session can be continued after the crash
    writer = store.open_writer("crash")
    await writer.append_message(user_message("after the crash"))
    writer.close()
    loaded_again = store.load("crash")
    assert len(loaded_again.messages) == len(numbers) + 1
    assert loaded_again.messages[-1].content[0].text == "after the crash"
    # the same lines are skipped (a line cut by the kill is "truncated" before the append ends it with a
    # newline and not JSON after)
    assert skipped_lines(loaded_again.warnings) == skipped_lines(loaded.warnings)
