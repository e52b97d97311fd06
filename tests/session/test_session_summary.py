"""A session list's summary of a file is what loading the file gives, though it checks fewer messages.

The summary takes most message entries unchecked (``session_summary``); these tests hold it to
loading on files of every kind of entry, branch and damage, warnings included, and pin down the
one difference: a message its model refuses, which loading skips, is counted unless the summary
shows something of it.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import pytest
from agentls.ai import UserMessage
from agentls.session.history.session_index import SessionSummary
from agentls.session.history.session_summary import title
from agentls.session.history.store import SessionStore, SessionStoreError

BASE = 1_700_000_000_000
"""A time in milliseconds the stored sessions start at."""
IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}

USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def header(session_id: str, cwd: str, created_at: int = BASE, **fields: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 1,
        "id": session_id,
        "cwd": cwd,
        "createdAt": created_at,
        "systemPrompt": "",
        "model": {"provider": "faux", "id": "faux-1"},
        "thinkingLevel": "off",
        **fields,
    }


def user(text: Any, at: int = BASE) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": at}


def assistant(provider: str = "faux", model: str = "faux-1", **fields: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "An answer"}],
        "api": "faux",
        "provider": provider,
        "model": model,
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": 0,
        **fields,
    }


def tool_result(**fields: Any) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": "output"}],
        "isError": False,
        "timestamp": BASE,
        **fields,
    }


def random_entry(rng: random.Random, ids: list[str], number: int, at: int) -> dict[str, Any]:
    """An entry of any type, now and then damaged in its envelope or its fields (never in a message's
    content: that is the one thing the summary does not check)."""
    parent = ids[-1] if ids else None
    draw = rng.random()
    if ids and draw < 0.1:
        parent = rng.choice(ids)  # a branch
    elif draw < 0.13:
        parent = "missing"
    elif draw < 0.15:
        parent = 7
    entry_id = rng.choice(ids) if ids and rng.random() < 0.03 else f"e{number}"
    kind = rng.choices(
        ["message", "session_info", "model_change", "label", "compaction", "branch_summary", "custom",
         "thinking_level_change", "system_prompt_change", "mystery"],
        [70, 4, 4, 3, 3, 2, 5, 2, 1, 1],
    )[0]  # fmt: skip
    entry: dict[str, Any] = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": at}
    if kind == "message":
        message = rng.choice(
            [
                user(f"Question {number}\n  with   spaces " + "x" * rng.randint(0, 100), at),
                user([{"type": "text", "text": f"Q{number}"}, IMAGE]),
                user([IMAGE]),
                assistant(rng.choice(["faux", "other", "unknown"]), rng.choice(["m1", "m2", "unknown"])),
                tool_result(),
                tool_result(details={"size": 2**70}),  # an integer orjson reads as a float
                assistant(usage={**USAGE, "input": 2**70}),  # the same, in what the summary checks
                {"role": "mystery", "content": "a custom message"},
                {"role": 5},
                "not a message",
                {"content": "no role"},
            ]
        )  # fmt: skip
        entry["message"] = message
    elif kind == "session_info":
        entry["name"] = rng.choice([f"Named {number}", "  ", None, 5])
    elif kind == "model_change":
        entry.update(provider="chosen", modelId=rng.choice(["mc", 3]))
    elif kind == "label":
        entry.update(targetId=rng.choice(ids or ["e0"]), label=rng.choice(["L", None]))
    elif kind == "compaction":
        kept = rng.choice([*ids, "nowhere"])
        entry.update(summary="S", tokensBefore=rng.choice([5, -1]), firstKeptEntryId=kept)
    elif kind == "branch_summary":
        entry.update(summary="B", fromId=rng.choice(["e0", 3]))
    elif kind == "custom":
        entry.update(customType=rng.choice(["x", "agentls/fileChanges"]), data={"a": 1})
    elif kind == "thinking_level_change":
        entry["thinkingLevel"] = rng.choice(["high", 1])
    elif kind == "system_prompt_change":
        entry["systemPrompt"] = "Be brief."
    draw = rng.random()
    if draw < 0.02:
        entry["timestamp"] = -1
    elif draw < 0.03:
        entry["timestamp"] = True
    elif draw < 0.04:
        del entry["id"]
    elif draw < 0.05:
        entry["timestamp"] = at + 0.5
    elif draw < 0.06:
        entry["id"] = ""
    return entry


def random_session(rng: random.Random, session_id: str, cwd: str) -> str:
    lines = [json.dumps(header(session_id if rng.random() > 0.05 else "another", cwd, BASE))]
    ids: list[str] = []
    at = BASE
    for number in range(rng.randint(0, 25)):
        at += rng.randint(-500, 2000)
        entry = random_entry(rng, ids, number, at)
        line = json.dumps(entry)
        draw = rng.random()
        if draw < 0.02:
            line = line[: len(line) // 2]
        elif draw < 0.03:
            line = line.replace("{", '{"n":NaN,', 1)
        elif draw < 0.04:
            line = "   "
        elif draw < 0.045:
            line = line.replace(str(at), "123456789012345678901234", 1)  # read as an integer, not a float
        elif draw < 0.05:
            deep = "[" * 150 + "]" * 150
            line = f'{{"type":"message","id":"deep","parentId":null,"timestamp":1,"message":{deep}}}'
        lines.append(line)
        if isinstance(entry.get("id"), str):
            ids.append(entry["id"])
    return "\n".join(lines) + ("\n" if rng.random() > 0.1 else "")


def as_loading_has_it(store: SessionStore, session_id: str) -> SessionSummary:
    loaded = store.load(session_id)
    prompt = next((m for m in loaded.messages if isinstance(m, UserMessage)), None)
    return SessionSummary(
        session_id=session_id,
        cwd=loaded.header.cwd,
        title=loaded.name or (title(prompt) if prompt is not None else None),
        created_at=loaded.header.created_at,
        updated_at=loaded.updated_at,
        message_count=len(loaded.messages),
        model=loaded.model,
    )


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return sorted(record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING)


def test_a_summary_is_what_loading_the_file_gives_whatever_the_file_holds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(tmp_path / "data")
    store.folder.mkdir(parents=True)
    cwd = str(tmp_path)
    rng = random.Random(25)
    for number in range(400):
        session_id = f"s{number:03d}"
        text = random_session(rng, session_id, cwd)
        (store.folder / f"{session_id}.jsonl").write_text(text, encoding="utf-8")

    with caplog.at_level(logging.WARNING):
        listed = {summary.session_id: summary for summary in store.list()}
    listing_warnings = warnings_of(caplog)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        for number in range(400):
            session_id = f"s{number:03d}"
            try:
                assert listed.pop(session_id) == as_loading_has_it(store, session_id), session_id
            except SessionStoreError as error:  # no session: skipped by the listing, with its reason
                assert session_id not in listed
                logging.getLogger("test").warning("skipping a session: %s", error)
    assert listed == {}
    assert listing_warnings == warnings_of(caplog)
    assert any("line" in warning for warning in listing_warnings)  # damaged lines were met


def write_session(store: SessionStore, session_id: str, cwd: str, entries: list[dict[str, Any]]) -> None:
    lines = [header(session_id, cwd), *entries]
    store.folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (store.folder / f"{session_id}.jsonl").write_text(text, encoding="utf-8")


def chain(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n else None, "timestamp": BASE + n,
         "message": message}
        for n, message in enumerate(messages)
    ]  # fmt: skip


def test_a_message_its_model_refuses_is_counted_unless_the_summary_shows_something_of_it(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "data")
    cwd = str(tmp_path)
    refused = tool_result(content=[{"type": "audio", "data": "?"}])
    write_session(store, "middle", cwd, chain(user("First"), assistant(), refused, assistant()))
    write_session(store, "prompt", cwd, chain(user([{"type": "video"}]), assistant(), user("Second")))
    bad_usage = assistant("other", "m2", usage={"input": "many"})
    write_session(store, "answer", cwd, chain(user("First"), assistant("other", "m1"), bad_usage))
    listed = {summary.session_id: summary for summary in store.list()}

    assert store.load("middle").messages[2].role == "assistant"  # the refused result skipped
    assert listed["middle"] == SessionSummary("middle", cwd, "First", BASE, BASE + 3, 4, ("faux", "faux-1"))
    assert as_loading_has_it(store, "middle").message_count == 3
    for session_id in ("prompt", "answer"):  # read again as loading reads them
        assert listed[session_id] == as_loading_has_it(store, session_id)
    assert listed["prompt"].title == "Second"
    assert listed["answer"].model == ("other", "m1")
