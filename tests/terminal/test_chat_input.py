"""What ``agentls chat``'s input line does, in a real terminal (tmux): ids, pickers, mentions, keys."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.terminal.conftest import Pane
from tests.terminal.test_terminal import workspace


def store_session(data: Path, session_id: str, cwd: Path, prompt: str, answer: str) -> None:
    """A stored session of one exchange, as the server writes it (``sessions/ID.jsonl``)."""
    now = int(time.time() * 1000)
    entries = [
        {
            "type": "session",
            "version": 1,
            "id": session_id,
            "cwd": str(cwd),
            "createdAt": now,
            "systemPrompt": "",
            "model": {"provider": "faux", "id": "faux-1"},
            "thinkingLevel": "off",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": now,
            "message": {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": now},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": now,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": answer}],
                "provider": "faux",
                "model": "faux-1",
                "api": "faux",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                "stopReason": "stop",
                "timestamp": now,
            },
        },
    ]
    folder = data / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(entry) + "\n" for entry in entries)
    (folder / f"{session_id}.jsonl").write_text(lines, encoding="utf-8")


FIRST = "abc1" + "0" * 28
SECOND = "abc2" + "0" * 28
THIRD = "def0" + "0" * 28


def test_sessions_are_resumed_by_the_start_of_their_id(pane: Pane, tmp_path: Path) -> None:
    folder = workspace(tmp_path)
    data = tmp_path / "data"
    store_session(data, FIRST, folder, "the first question", "The first answer.")
    store_session(data, SECOND, folder, "the second question", "The second answer.")
    store_session(data, THIRD, folder, "the third question", "The third answer.")
    pane.start(["chat", "--demo", "--data-dir", str(data), "--session", "def"], folder)
    pane.wait_for(f"resumed session {THIRD} · 2 messages")
    pane.wait_for("/help for the keys")
    pane.type("/sessions abc")
    screen = pane.wait_for("): give more of the id")
    assert "✗ abc is the start of 2 sessions (abc" in screen
    assert "abc100000000" in screen and "abc200000000" in screen
    pane.type("/sessions abc2")
    screen = pane.wait_for(f"resumed session {SECOND} · 2 messages")
    assert "The second answer." in screen
    pane.wait_for(" · abc20000 · ")  # the status line: the chat goes on in that session
    pane.keys("C-d")
    pane.wait_for("[exited 0]")
