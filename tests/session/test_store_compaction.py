"""Compaction entries in the session file: written, read back into the transcript, checked like the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentls.ai import Usage, to_wire
from agentls.session.history.store import SessionStore, SessionStoreError
from agentls.session.history.transcript import Compaction
from agentls.session.messages import CompactionSummaryMessage, as_coding_message, compaction_summary_message

from tests.session.compaction.helpers import answer, user
from tests.session.test_store import make_header, session_file


async def stored_session(tmp_path: Path) -> tuple[SessionStore, list[str]]:
    """A session of two prompts and answers, compacted to keep the second; the entry ids."""
    store = SessionStore(tmp_path / "data")
    writer = store.create(make_header("s1", tmp_path, compaction={"enabled": False, "keepRecentTokens": 5}))
    ids = [await writer.append_message(m) for m in (user(1, "a"), answer(1), user(1, "b"), answer(1))]
    summary = compaction_summary_message("## Goal\nG", 1234, 5_000)
    usage = Usage(input=100, output=20, total_tokens=120)
    ids.append(await writer.append_compaction(summary, Compaction(ids[2], ("a.py",), ("b.py",), usage)))
    ids.append(await writer.append_message(user(1, "c")))
    writer.close()
    return store, ids


async def test_a_compaction_is_written_as_pis_entry(tmp_path: Path) -> None:
    store, ids = await stored_session(tmp_path)
    line = json.loads(session_file(store, "s1").read_text().splitlines()[5])
    assert line == {
        "type": "compaction",
        "id": ids[4],
        "parentId": ids[3],
        "timestamp": 5_000,
        "summary": "## Goal\nG",
        "firstKeptEntryId": ids[2],
        "tokensBefore": 1234,
        "details": {"readFiles": ["a.py"], "modifiedFiles": ["b.py"]},
        "usage": to_wire(Usage(input=100, output=20, total_tokens=120)),
    }


async def test_a_loaded_session_has_its_history_and_its_compacted_context(tmp_path: Path) -> None:
    store, ids = await stored_session(tmp_path)
    loaded = store.load("s1")
    assert loaded.warnings == [] and loaded.header.compaction == {"enabled": False, "keepRecentTokens": 5}
    history = loaded.messages
    roles = ["user", "assistant", "user", "assistant", "compactionSummary", "user"]
    assert [m.role for m in history] == roles
    summary = history[4]
    typed = as_coding_message(summary)
    assert isinstance(typed, CompactionSummaryMessage)
    assert (typed.summary, typed.tokens_before, typed.timestamp) == ("## Goal\nG", 1234, 5_000)
    assert loaded.transcript.context() == [summary, history[2], history[3], history[5]]
    mark = loaded.transcript.entries[4].compaction
    assert mark is not None and mark.first_kept_entry_id == ids[2] and mark.usage is not None
    assert [e.id for e in loaded.transcript.entries] == ids
    [info] = store.list()
    assert info.message_count == 6 and info.title == "aaaa"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"summary": 7}, "without a string summary and a token count tokensBefore"),
        ({"tokensBefore": -1}, "without a string summary and a token count tokensBefore"),
        ({"tokensBefore": True}, "without a string summary and a token count tokensBefore"),
        ({"firstKeptEntryId": "nowhere"}, "whose firstKeptEntryId 'nowhere' names no message entry before"),
        ({"details": {"readFiles": [1]}}, "whose details are not"),
        ({"details": "files"}, "whose details are not"),
        ({"usage": {"input": "many"}}, "whose usage does not parse"),
    ],
)
async def test_a_damaged_compaction_is_skipped_and_the_whole_conversation_stays(
    tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    store, _ = await stored_session(tmp_path)
    path = session_file(store, "s1")
    lines = path.read_text().splitlines()
    lines[5] = json.dumps({**json.loads(lines[5]), **change})
    path.write_text("\n".join(lines) + "\n")
    loaded = store.load("s1")
    [warning] = loaded.warnings
    assert f"line 6: skipped (compaction entry {reason}" in warning
    assert [m.role for m in loaded.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert len(loaded.transcript.context()) == 5  # no summary: the model sees everything


@pytest.mark.parametrize(
    "settings", [{"enabled": "yes"}, {"reserveTokens": -5}, {"keepRecentTokens": 1.5}, {"other": 1}, []]
)
def test_a_header_with_unusable_compaction_settings_is_refused(tmp_path: Path, settings: Any) -> None:
    store = SessionStore(tmp_path / "data")
    store.create(make_header("s1", tmp_path)).close()
    path = session_file(store, "s1")
    header = {**json.loads(path.read_text()), "compaction": settings}
    path.write_text(json.dumps(header) + "\n")
    with pytest.raises(SessionStoreError, match="the header's compaction is not"):
        store.load("s1")
