"""End to end: ``agent/listSessions`` over many stored sessions, as the files change behind it.

The summaries are kept until a file changes (in memory and in ``sessions/index.json``): the
answer must be what reading every file gives, on a server's first listing, its next ones and a
fresh server's, whatever another server, a deleted file or a damaged one did meanwhile; and
the files are read off the event loop, so a live session answers while a listing goes on.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient

from tests.server.conftest import FauxScript, Servers, server_options, within
from tests.server.test_hardening_store import ServerLog, server_log  # noqa: F401 (a fixture)
from tests.session.test_session_summary import BASE, USAGE

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass(frozen=True)
class Stored:
    """What the listing should say of one stored session (its fields as ``SessionInfo`` has them)."""

    session_id: str
    cwd: str
    title: str | None
    created_at: int
    updated_at: int
    message_count: int
    model: tuple[str, str]


def user(text: str, at: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": at}


def assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "faux",
        "provider": "faux",
        "model": "faux-1",
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": 0,
    }


def store_session(folder: Path, index: int, cwd: str) -> Stored:
    """Session ``index``: its own count of messages, times out of order, some renamed, some with another
    model, some with a damaged line; what it should list as."""
    session_id = f"stored{index:04d}"
    created = BASE + ((index * 7919) % 1000) * 60_000
    header = {
        "type": "session",
        "version": 1,
        "id": session_id,
        "cwd": cwd,
        "createdAt": created,
        "systemPrompt": "",
        "model": {"provider": "faux", "id": "faux-1"},
        "thinkingLevel": "off",
    }
    lines = [header]
    parent = None
    at = created
    count = 1 + index % 6
    for number in range(count):
        at += 1000
        message = user(f"Question {index}.{number}", at) if number % 2 == 0 else assistant(f"Answer {number}")
        lines.append(
            {"type": "message", "id": f"m{number}", "parentId": parent, "timestamp": at, "message": message}
        )
        parent = f"m{number}"
    model = ("faux", "faux-1")
    if index % 5 == 0:
        at += 1000
        lines.append(
            {
                "type": "model_change",
                "id": "mc",
                "parentId": parent,
                "timestamp": at,
                "provider": "faux",
                "modelId": "faux-2",
            }
        )
        parent, model = "mc", ("faux", "faux-2")
    title: str | None = f"Question {index}.0"
    if index % 7 == 0:
        at += 1000
        lines.append(
            {
                "type": "session_info",
                "id": "si",
                "parentId": parent,
                "timestamp": at,
                "name": f"Named {index}",
            }
        )
        title = f"Named {index}"
    text = "".join(json.dumps(line) + "\n" for line in lines)
    if index % 11 == 0:
        text += '{"type":"message","id":"bad","timestamp":NaN}\n'
    (folder / f"{session_id}.jsonl").write_text(text, encoding="utf-8")
    return Stored(session_id, cwd, title, created, at, count, model)


def store_sessions(data_dir: Path, count: int, cwds: list[str]) -> dict[str, Stored]:
    folder = data_dir / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    stored = (store_session(folder, index, cwds[index % len(cwds)]) for index in range(count))
    return {session.session_id: session for session in stored}


def newest_first(sessions: Any) -> list[Stored]:
    return sorted(sessions, key=lambda s: (s.updated_at, s.created_at, s.session_id), reverse=True)


async def listed(client: AgentClient, cwd: str | None = None) -> list[Stored]:
    return [
        Stored(
            info.session_id,
            info.cwd,
            info.title,
            info.created_at,
            info.updated_at,
            info.message_count,
            (info.model.provider, info.model.id),
        )
        for info in await within(client.list_sessions(cwd))
    ]


async def test_the_listing_is_what_the_files_say_first_again_and_on_a_fresh_server(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript, tmp_path: Path
) -> None:
    faux_script([{"content": "Hello!"}])
    cwds = [str(tmp_path / "one"), str(tmp_path / "two"), str(tmp_path / "three")]
    for cwd in cwds:
        os.mkdir(cwd)
    live = await within(client.new_session(cwd=cwds[1]))
    await within(client.prompt(live, "A live question", wait=True))
    [info] = await within(client.list_sessions())
    stored = store_sessions(data_dir, 120, cwds)
    stored[live] = Stored(
        live, cwds[1], "A live question", info.created_at, info.updated_at, 2, ("faux", "faux-1")
    )
    expected = newest_first(stored.values())
    in_two = [session for session in expected if session.cwd == cwds[1]]

    assert await listed(client) == expected  # the new files read
    assert await listed(client) == expected  # from memory
    assert await listed(client, cwds[1]) == in_two
    loaded = {info.session_id for info in await within(client.list_sessions()) if info.loaded}
    assert loaded == {live}

    other = await servers.start(server_options(data_dir, faux_script))
    assert await listed(other) == expected  # from the index file
    assert await listed(other, cwds[1]) == in_two
    assert not any(info.loaded for info in await within(other.list_sessions()))


async def test_what_another_server_writes_after_a_listing_is_listed(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "Hello!"}, {"content": "Again!"}])
    stored = store_sessions(data_dir, 20, [str(workspace)])
    assert await listed(client) == newest_first(stored.values())

    other = await servers.start(server_options(data_dir, faux_script))
    written = await within(other.new_session(cwd=str(workspace)))
    await within(other.prompt(written, "Written by the other server", wait=True))
    [first] = [info for info in await within(client.list_sessions()) if info.session_id == written]
    assert (first.title, first.message_count, first.loaded) == ("Written by the other server", 2, False)

    await within(other.prompt(written, "And appended to", wait=True))  # the same file, grown
    await within(other.rename_session("stored0003", "Renamed elsewhere"))
    infos = {info.session_id: info for info in await within(client.list_sessions())}
    assert infos[written].message_count == 4 and infos[written].updated_at >= first.updated_at
    assert infos["stored0003"].title == "Renamed elsewhere"
    assert next(iter(infos)) in (written, "stored0003")  # the newest first


async def test_a_deleted_or_replaced_file_is_not_listed_as_it_was(
    servers: Servers, client: AgentClient, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    stored = store_sessions(data_dir, 20, [str(workspace)])
    assert await listed(client) == newest_first(stored.values())
    folder = data_dir / "sessions"

    (folder / "stored0004.jsonl").unlink()
    del stored["stored0004"]
    assert await listed(client) == newest_first(stored.values())

    # restored from a copy of the same size with the old modification time (as ``cp -p`` does)
    path = folder / "stored0002.jsonl"
    status = path.stat()
    content = path.read_bytes()
    path.write_bytes(content.replace(b"Question 2.0", b"Question 9.9"))
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert path.stat().st_size == status.st_size
    stored["stored0002"] = Stored(**{**stored["stored0002"].__dict__, "title": "Question 9.9"})
    assert await listed(client) == newest_first(stored.values())

    other = await servers.start(server_options(data_dir, faux_script))
    assert await listed(other) == newest_first(stored.values())


async def test_a_damaged_file_is_skipped_with_a_warning_at_every_listing(
    servers: Servers,
    client: AgentClient,
    data_dir: Path,
    faux_script: FauxScript,
    workspace: Path,
    server_log: ServerLog,  # noqa: F811
) -> None:
    stored = store_sessions(data_dir, 12, [str(workspace)])
    assert await listed(client) == newest_first(stored.values())
    damaged_line = f"{data_dir / 'sessions' / 'stored0011.jsonl'} line 8: skipped ("
    await server_log.wait_for(damaged_line)

    path = data_dir / "sessions" / "stored0005.jsonl"
    path.write_text('{"type":"session","version":1,"id":"stored0005"}\n')  # no cwd, no createdAt
    del stored["stored0005"]
    for listing in (1, 2):  # read, then known to be damaged: warned about each time
        assert await listed(client) == newest_first(stored.values())
        await server_log.wait_for(str(path), "not a readable session file")
        warnings = [line for line in server_log.lines if str(path) in line]
        assert len(warnings) == listing
        assert sum(damaged_line in line for line in server_log.lines) == listing + 1

    index = data_dir / "sessions" / "index.json"
    kept = json.loads(index.read_text())
    kept["sessions"]["stored0001"].update(summary=None, warnings=[])  # its key still the file's
    index.write_text(json.dumps(kept))
    other = await servers.start(server_options(data_dir, faux_script))
    assert await listed(other) == newest_first(stored.values())  # an entry that says nothing: read again

    index.write_text('{"version": 1, "sessions": {"stored0001": []}}')
    other = await servers.start(server_options(data_dir, faux_script))
    assert await listed(other) == newest_first(stored.values())  # a damaged index is made again


async def test_a_live_session_answers_while_a_large_listing_reads_the_files(
    client: AgentClient, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "Hello!"}])
    live = await within(client.new_session(cwd=str(workspace)))
    store_sessions(data_dir, 2000, [str(workspace)])
    answered: list[str] = []

    listing = asyncio.ensure_future(within(client.list_sessions(), 60))
    listing.add_done_callback(lambda _: answered.append("listSessions"))
    for _ in range(5):  # the listing's request goes out first
        await asyncio.sleep(0)
    state = asyncio.ensure_future(within(client.get_state(live)))
    state.add_done_callback(lambda _: answered.append("getState"))
    assert (await state).session_id == live
    assert len(await listing) == 2001
    assert answered == ["getState", "listSessions"]


def entry(entry_id: str, parent: str | None, at: int, kind: str = "message", **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": BASE + at, **fields}


HEADER = {
    "type": "session",
    "version": 1,
    "createdAt": BASE,
    "systemPrompt": "",
    "model": {"provider": "faux", "id": "faux-1"},
    "thinkingLevel": "off",
}


def shaped_sessions() -> dict[str, list[Any]]:
    """Sessions with branches, compactions, names, labels and damage: each session's lines (a string
    is written as it is)."""
    refused = {"role": "user", "content": [{"type": "video"}], "timestamp": BASE}
    return {
        "branched": [  # rewound to m1 and answered again: the branch is m0 m1 m4 m5, then a label
            entry("m0", None, 1, message=user("First question", BASE)),
            entry("m1", "m0", 2, message=assistant("One")),
            entry("m2", "m1", 3, message=user("Second question", BASE)),
            entry("m3", "m2", 4, message={**assistant("Two"), "provider": "other", "model": "o-1"}),
            entry("m4", "m1", 5, message=user("Another way", BASE)),
            entry("m5", "m4", 6, message=assistant("Three")),
            entry("l1", "m5", 7, "label", targetId="m1", label="bookmark"),
        ],
        "compacted": [
            *(entry(f"m{n}", f"m{n - 1}" if n else None, n, message=user(f"Q{n}", BASE)) for n in range(4)),
            entry("c1", "m3", 4, "compaction", summary="So far", tokensBefore=900, firstKeptEntryId="m2"),
            entry("m5", "c1", 5, message=user("After the summary", BASE)),
            entry("b1", "m5", 6, "branch_summary", summary="Elsewhere", fromId="m2"),
            entry("m7", "b1", 7, message=assistant("Done")),
        ],
        "named": [
            entry("m0", None, 1, message=user("Unnamed question", BASE)),
            entry("n1", "m0", 2, "session_info", name="  A name  "),
            '{"type":"message","id":"nan","parentId":"n1","timestamp":NaN}',
            entry("m2", "n1", 3, message=assistant("Answer")),
            '{"type":"message","id":"cut","parentId":"m2","timestamp":',  # the write did not finish
        ],
        "cleared": [
            entry("n0", None, 1, "session_info", name="Old name"),
            entry("m1", "n0", 2, message=user("The first prompt\non two lines" + " and more" * 20, BASE)),
            entry("n2", "m1", 3, "session_info", name=None),
            entry("mc", "n2", 4, "model_change", provider="chosen", modelId="c-1"),
        ],
        "damaged": [
            entry("m0", None, 1, message=refused),  # skipped: the title is the next prompt
            entry("m1", "m0", 2, message=user("The prompt that counts", BASE)),
            entry("m1", "m1", 3, message=assistant("A duplicate id")),
            entry("m3", "gone", 4, message=assistant("Its parent is not in the file")),
            entry("f1", "m3", 5, "custom", customType="agentls/fileChanges", data={"bad": True}),  # skipped
            entry("x1", "m3", 6, "mystery"),
            entry("m6", "m3", 20, message={**assistant("Late"), "usage": {"input": "many"}}),  # skipped
        ],
    }


async def test_branches_compactions_names_and_damage_list_as_loading_has_them_with_or_without_the_index(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    folder = data_dir / "sessions"
    folder.mkdir()
    for session_id, lines in shaped_sessions().items():
        start = {**HEADER, "id": session_id, "cwd": str(workspace)}
        text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in [start, *lines])
        (folder / f"{session_id}.jsonl").write_text(text + ("" if session_id == "named" else "\n"))

    first = await servers.start(server_options(data_dir, faux_script))
    without_index = await within(first.list_sessions())
    assert (folder / "index.json").is_file()
    second = await servers.start(server_options(data_dir, faux_script))
    assert await within(second.list_sessions()) == without_index

    listed = {info.session_id: info for info in without_index}
    assert {s: (i.title, i.message_count, i.model and i.model.id) for s, i in listed.items()} == {
        "branched": ("First question", 4, "faux-1"),
        "compacted": ("Q0", 8, "faux-1"),
        "named": ("A name", 2, "faux-1"),
        "cleared": (
            "The first prompt on two lines and more and more and more and more and more and…",
            1,
            "c-1",
        ),
        "damaged": ("The prompt that counts", 2, "faux-1"),
    }
    assert listed["damaged"].updated_at == BASE + 4 and listed["named"].updated_at == BASE + 3
    for session_id, info in listed.items():  # what loading the file says (the model: a loaded
        # session takes one the server has), through a server
        loaded = await within(second.load_session(session_id))
        state = await within(second.get_state(session_id))
        messages = (await within(second.get_messages(session_id))).messages
        assert info.message_count == loaded.message_count == state.message_count == len(messages)
        prompt = next(m for m in messages if m["role"] == "user")
        text = prompt["content"] if isinstance(prompt["content"], str) else prompt["content"][0]["text"]
        if session_id != "named":
            assert info.title is not None and " ".join(text.split()).startswith(info.title.rstrip("…"))
