"""The permission policy against a hostile folder, data folder and session file (real servers).

A remembered "allow always" answers only the defaults' question: ``deny``, ``*: deny``,
an ``ask`` that was set and ``review`` win over it. Two servers on one data folder see
each other's rules and revocations, and a save never writes back a revoked rule. MCP
server names cannot carry ``__`` (so ``mcp__github__*`` covers ``github`` alone). A
session file's header may narrow the policy but not widen it without the user's say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient
from agentls.protocol import RequestPermissionParams

from tests.mcp.conftest import quirky_command
from tests.server import test_mcp
from tests.server.conftest import FauxScript, Servers, server_options, tool_call, within

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Questions:
    """A client's permission answers (one per question, the last one repeated) and what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[RequestPermissionParams] = []

    def __call__(self, request: RequestPermissionParams) -> str:
        self.asked.append(request)
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def calls(faux_script: FauxScript, *tool_calls: dict[str, Any]) -> None:
    """The faux model makes each call in its own turn, then answers."""
    faux_script([*({"content": [c], "stopReason": "toolUse"} for c in tool_calls), {"content": "done"}])


def bash(command: str, call_id: str = "b1") -> dict[str, Any]:
    return tool_call(call_id, "bash", {"command": command})


async def results(client: AgentClient, session: str) -> list[dict[str, Any]]:
    messages = (await within(client.get_messages(session))).messages
    return [m for m in messages if m["role"] == "toolResult"]


async def run(client: AgentClient, session: str) -> list[dict[str, Any]]:
    settled = await within(client.prompt(session, "go", wait=True))
    assert settled.stop_reason == "stop"
    return await results(client, session)


def rules_file(data_dir: Path, *rules: tuple[str, str]) -> None:
    """``permissions.json`` as an earlier server (or version) left it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    entries = [{"workspace": w, "toolName": t} for w, t in rules]
    (data_dir / "permissions.json").write_text(json.dumps({"rules": entries}))


def stored_rules(data_dir: Path) -> list[dict[str, str]]:
    return json.loads((data_dir / "permissions.json").read_text())["rules"]


DENIED = "The permission policy denies the {} tool."


# --- the order: deny > review > a set ask > remembered allow > the defaults' ask ---------------


async def test_a_remembered_bash_rule_does_not_beat_a_new_sessions_deny(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    questions = Questions("allowAlways")
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    calls(faux_script, bash("touch first"))
    session = await within(client.new_session(cwd=str(workspace)))
    [first] = await run(client, session)
    assert not first["isError"] and (workspace / "first").exists() and len(questions.asked) == 1
    assert stored_rules(data_dir) == [{"workspace": str(workspace), "toolName": "bash"}]

    for permissions in ({"bash": "deny"}, {"*": "deny"}):
        calls(faux_script, bash("touch second"))
        denied = await within(client.new_session(cwd=str(workspace), permissions=permissions))
        [result] = await run(client, denied)
        assert result["isError"] and result["content"][0]["text"] == DENIED.format("bash")
        assert not (workspace / "second").exists()
    assert len(questions.asked) == 1  # deny never asks


async def test_write_deny_and_star_deny_win_over_stored_write_and_server_rules(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    rules_file(data_dir, (str(workspace), "write"), (str(workspace), "mcp__quirky__*"))
    questions = Questions("reject")
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    calls(faux_script, tool_call("w1", "write", {"path": "written.txt", "content": "no"}))
    session = await within(client.new_session(cwd=str(workspace), permissions={"write": "deny", "*": "deny"}))
    [result] = await run(client, session)
    assert result["isError"] and result["content"][0]["text"] == DENIED.format("write")
    assert not (workspace / "written.txt").exists() and questions.asked == []


async def test_an_ask_that_was_set_asks_despite_a_rule_and_offers_no_allow_always(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    rules_file(data_dir, (str(workspace), "bash"))
    questions = Questions("allowAlways", "allowOnce")  # "allowAlways" was not offered: a rejection
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    calls(faux_script, bash("touch one", "b1"), bash("touch two", "b2"))
    session = await within(client.new_session(cwd=str(workspace), permissions={"bash": "ask"}))
    first, second = await run(client, session)
    assert [[o.id for o in q.options] for q in questions.asked] == [["allowOnce", "reject"]] * 2
    assert first["isError"] and not (workspace / "one").exists()
    assert not second["isError"] and (workspace / "two").exists()
    assert stored_rules(data_dir) == [{"workspace": str(workspace), "toolName": "bash"}]

    # the defaults' ask: the remembered rule answers it, no question
    calls(faux_script, bash("touch three"))
    default = await within(client.new_session(cwd=str(workspace)))
    [third] = await run(client, default)
    assert not third["isError"] and (workspace / "three").exists() and len(questions.asked) == 2


# --- two servers on one data folder ---------------------------------------------------------


async def test_two_servers_see_each_others_rules_and_a_save_never_restores_a_revoked_one(
    servers: Servers, data_dir: Path, faux_script: FauxScript, tmp_path: Path
) -> None:
    first_folder, second_folder = tmp_path / "one", tmp_path / "two"
    first_folder.mkdir()
    second_folder.mkdir()
    asked_a, asked_b = Questions("allowAlways"), Questions("allowAlways")
    options = server_options(data_dir, faux_script)
    a = await servers.start(options, on_permission=asked_a)
    b = await servers.start(options, on_permission=asked_b)

    # a rule A stores after B read the file is honoured by B
    calls(faux_script, bash("touch by-b"))
    later = await within(b.new_session(cwd=str(first_folder)))
    calls(faux_script, bash("true"))
    await run(a, await within(a.new_session(cwd=str(first_folder))))
    [ran] = await run(b, later)
    assert not ran["isError"] and (first_folder / "by-b").exists() and asked_b.asked == []

    # revoked in A: B asks again
    revoked = await within(
        a._call("agent/revokePermissionRule", {"workspace": str(first_folder), "toolName": "bash"})
    )
    assert revoked == {"revoked": True}
    asked_b.answers = ["reject"]
    calls(faux_script, bash("touch again-by-b"))
    [rejected] = await run(b, await within(b.new_session(cwd=str(first_folder))))
    assert rejected["isError"] and len(asked_b.asked) == 1 and not (first_folder / "again-by-b").exists()

    # B's next save (a rule for another folder) merges with the file: the revoked rule stays gone
    asked_b.answers = ["allowAlways"]
    calls(faux_script, bash("true"))
    await run(b, await within(b.new_session(cwd=str(second_folder))))
    expected = [{"workspace": str(second_folder), "toolName": "bash"}]
    assert stored_rules(data_dir) == expected
    listed = await within(a._call("agent/listPermissionRules", {}))
    assert listed == {"rules": expected}


# --- MCP server names ------------------------------------------------------------------------


async def test_a_server_name_with_a_double_underscore_is_refused_so_a_wildcard_covers_one_server(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    quirky = test_mcp.stdio(quirky_command())
    option = {"github": quirky, "github__evil": quirky, "github_": quirky, "a..b": quirky}
    questions = test_mcp.Questions(lambda _: "reject")
    client, recorder = await test_mcp.start(
        servers, data_dir, faux_script, questions, mcpServers=option, permissions={"mcp__github__*": "allow"}
    )
    calls(
        faux_script,
        tool_call("e1", "mcp__github__evil__echo", {"text": "evil"}),
        tool_call("e2", "mcp__github__echo", {"text": "good"}),
    )
    session = await within(client.new_session(cwd=str(workspace)))
    await test_mcp.ready(recorder, "github")
    listing = await within(client.list_mcp_servers(session))
    assert [s.name for s in listing.servers] == ["github"]
    problems = "\n".join(listing.problems)
    for name, shown in (("github__evil", "github__evil"), ("github_", "github_"), ("a..b", "a__b")):
        refused = f"initializationOptions: mcpServers.{name}: the name {shown!r} must not contain '__'"
        assert refused in problems
    evil, good = await run(client, session)
    assert evil["isError"] and test_mcp.text(evil) == "Tool mcp__github__evil__echo not found"
    assert not good["isError"] and "good" in test_mcp.text(good)
    assert questions.asked == []


# --- a session file's header ------------------------------------------------------------------

WRITTEN = "written outside\n"


async def session_written_outside(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, outside: str
) -> str:
    """A stored session that may go outside its folder, allows ``bash``, denies ``edit``, and wrote
    ``outside``: its file is what a crafted one could be (the server that loads it cannot tell)."""
    first = await servers.start(server_options(data_dir, faux_script), on_permission=Questions("allowOnce"))
    calls(faux_script, tool_call("w1", "write", {"path": outside, "content": WRITTEN}))
    session = await within(
        first.new_session(
            cwd=str(workspace), allow_outside_workspace=True, permissions={"bash": "allow", "edit": "deny"}
        )
    )
    [written] = await run(first, session)
    assert not written["isError"]
    await within(first.close())
    return session


def bash_then_edit(faux_script: FauxScript, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("one\n")
    edit = {"path": "notes.txt", "edits": [{"oldText": "one", "newText": "two"}]}
    calls(faux_script, bash("touch by-bash"), tool_call("e1", "edit", edit))


async def test_a_loaded_header_narrows_the_policy_but_does_not_widen_it(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    session = await session_written_outside(servers, data_dir, faux_script, workspace, str(outside))
    assert outside.read_text() == WRITTEN
    questions = Questions("reject")
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    bash_then_edit(faux_script, workspace)
    loaded = await within(client.load_session(session))
    warnings = "\n".join(loaded.warnings or [])
    assert "The session file's permission 'bash': 'allow' was not applied" in warnings
    assert "The session file's allowOutsideWorkspace was not applied" in warnings
    assert "'edit'" not in warnings  # a deny narrows: applied

    *_, by_bash, by_edit = await run(client, session)
    assert [q.tool_name for q in questions.asked] == ["bash"] and by_bash["isError"]
    assert not (workspace / "by-bash").exists()
    assert by_edit["isError"] and by_edit["content"][0]["text"] == DENIED.format("edit")

    # the rewind does not touch the file outside: the session may not go there
    rewound = await within(client.rewind(session, None, force=True))
    assert [s.path for s in rewound.skipped] == [str(outside)] and rewound.reverted == []
    assert "is outside the workspace" in rewound.skipped[0].reason
    assert outside.read_text() == WRITTEN


async def test_the_load_request_gives_what_the_file_may_not(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    session = await session_written_outside(servers, data_dir, faux_script, workspace, str(outside))
    assert outside.read_text() == WRITTEN
    questions = Questions("reject")
    client = await servers.start(server_options(data_dir, faux_script), on_permission=questions)
    bash_then_edit(faux_script, workspace)
    loaded = await within(
        client.load_session(session, permissions={"bash": "allow"}, allow_outside_workspace=True)
    )
    assert loaded.warnings is None
    *_, by_bash, by_edit = await run(client, session)
    assert not by_bash["isError"] and (workspace / "by-bash").exists() and questions.asked == []
    assert by_edit["isError"]  # the file's deny still applies

    # a fork keeps the policy its session was loaded with
    (workspace / "by-bash").unlink()
    bash_then_edit(faux_script, workspace)
    entries = (await within(client.get_messages(session))).entry_ids
    fork = await within(client.fork(session, entries[-1]))
    *_, forked_bash, _ = await run(client, fork)
    assert not forked_bash["isError"] and (workspace / "by-bash").exists() and questions.asked == []

    rewound = await within(client.rewind(session, None))
    assert str(outside) in [r.path for r in rewound.reverted] and not outside.exists()
