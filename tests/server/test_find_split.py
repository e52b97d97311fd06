"""``find`` through the real server, its walk shared with a forked helper from the first subfolder
(``AGENTLS_WALK_SPLIT=0``), answers as a server whose walks never fork (``off``); a value that is
neither milliseconds nor ``off`` fails the call with the setting named."""

from __future__ import annotations

import random
from pathlib import Path

from tests.server.conftest import shared_server, tool_call
from tests.server.test_editor_workspace import text_of
from tests.server.test_hardening_search import run
from tests.tools.test_walk_split import generated

CALLS = [
    tool_call("a", "find", {"pattern": "*.py"}),
    tool_call("b", "find", {"pattern": "**/b*", "limit": 7}),
    tool_call("c", "find", {"pattern": "*", "path": "d2"}),
]


async def test_find_answers_the_same_with_and_without_a_helper(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    generated(workspace, random.Random(7))
    answers = []
    for setting in ("0", "off"):
        (tmp_path / setting).mkdir()
        async with shared_server(tmp_path / setting, {"AGENTLS_WALK_SPLIT": setting}) as server:
            results = await run(server, workspace, *CALLS)
            answers.append([(text_of(result), result["details"]) for result in results])
    shared, alone = answers
    assert shared == alone
    assert len(shared) == len(CALLS) and all(details["matches"] > 0 for _, details in shared)


async def test_a_wrong_setting_fails_find_and_names_it(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.py").write_text("x\n")
    (tmp_path / "server").mkdir()
    async with shared_server(tmp_path / "server", {"AGENTLS_WALK_SPLIT": "soon"}) as server:
        (result,) = await run(server, workspace, CALLS[0])
    assert result["isError"] is True
    assert "AGENTLS_WALK_SPLIT must be a number of milliseconds or 'off', not 'soon'" in text_of(result)
