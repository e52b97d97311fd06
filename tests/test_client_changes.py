"""``AgentClient.get_changes`` and ``revert_changes`` against the real server: a faux run's ``bash``
edits, deletes, renames and creates files; the client lists that change and takes parts of it back."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agentls.client import AgentClient, AgentClientError
from agentls.protocol import ChangesResult, PromptResult, RevertChangesResult

from tests.server.conftest import FauxScript, Servers, server_options, tool_call, watchdog, within

A_BEFORE = "".join(f"line {i}\n" for i in range(1, 21))
SHELL = (
    "sed -i 's/line 2$/LINE TWO/; s/line 19$/LINE NINETEEN/' a.txt"
    " && rm b.txt && mv c.txt d.txt && echo made > e.txt"
)


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    with watchdog():
        yield


@pytest.fixture
async def servers() -> AsyncIterator[Servers]:
    started = Servers()
    try:
        yield started
    finally:
        await started.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text(A_BEFORE)
    (project / "b.txt").write_text("bee\n")
    (project / "c.txt").write_text("sea\n")
    return project


async def two_runs(servers: Servers, tmp_path: Path, folder: Path) -> tuple[AgentClient, str, list[str]]:
    """A server, and a session after a plain answer and a run whose ``bash`` is :data:`SHELL`."""
    script = FauxScript(tmp_path / "faux.json")
    script(
        [
            {"content": "Hello!"},
            {"content": [tool_call("b1", "bash", {"command": SHELL})], "stopReason": "toolUse"},
            {"content": "Done."},
        ]
    )
    options = {**server_options(tmp_path / "data", script), "permissions": {"bash": "allow"}}
    client = await servers.start(options)
    session = await within(client.new_session(cwd=str(folder)))
    runs = []
    for text in ("say hello", "change them"):
        accepted = await within(client.prompt(session, text))
        assert isinstance(accepted, PromptResult) and accepted.run_id
        await within(client.wait_settled(accepted.run_id))
        runs.append(accepted.run_id)
    return client, session, runs


def summary(result: ChangesResult) -> list[tuple[str, str, str | None, list[str]]]:
    return [(file.path, file.status, file.old_path, list(file.by)) for file in result.files]


BASH_CHANGES = [
    ("a.txt", "modified", None, ["bash"]),
    ("b.txt", "deleted", None, ["bash"]),
    ("d.txt", "renamed", "c.txt", ["bash"]),
    ("e.txt", "added", None, ["bash"]),
]


async def test_get_changes_of_the_last_run_of_one_run_and_of_the_whole_session(
    servers: Servers, tmp_path: Path, folder: Path
) -> None:
    client, session, (first, second) = await two_runs(servers, tmp_path, folder)

    last = await within(client.get_changes(session))
    assert isinstance(last, ChangesResult) and last.checkpoints == "on"
    assert last.run_id == second and last.from_entry_id and last.to_entry_id
    assert summary(last) == BASH_CHANGES
    a = last.files[0]
    assert [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in a.hunks] == [
        (1, 5, 1, 5),
        (16, 5, 16, 5),
    ]
    assert a.hunks[0].lines == [" line 1", "-line 2", "+LINE TWO", " line 3", " line 4", " line 5"]
    assert a.old_text is None and a.new_text is None  # only with text=True

    assert (await within(client.get_changes(session, run_id=second))).files == last.files
    assert (await within(client.get_changes(session, run_id=first))).files == []

    # from_entry_id=None is sent (from the start), and so it cannot go with a run_id
    whole = await within(client.get_changes(session, from_entry_id=None))
    assert whole.run_id is None and whole.from_entry_id is None and summary(whole) == BASH_CHANGES
    error = await within(_error(client.get_changes(session, run_id=second, from_entry_id=None)))
    assert error.kind == "invalidParams"
    # a span of entries ending before the second run: nothing changed yet
    before = await within(client.get_changes(session, from_entry_id=None, to_entry_id=last.from_entry_id))
    assert before.files == []

    texts = await within(client.get_changes(session, text=True))
    by_path = {file.path: file for file in texts.files}
    assert by_path["a.txt"].old_text == A_BEFORE
    assert by_path["a.txt"].new_text == A_BEFORE.replace("line 2\n", "LINE TWO\n").replace(
        "line 19\n", "LINE NINETEEN\n"
    )
    assert by_path["b.txt"].old_text == "bee\n" and by_path["b.txt"].new_text is None
    assert by_path["e.txt"].old_text is None and by_path["e.txt"].new_text == "made\n"


async def test_revert_changes_files_hunks_and_a_conflict_refused_then_forced(
    servers: Servers, tmp_path: Path, folder: Path
) -> None:
    client, session, _ = await two_runs(servers, tmp_path, folder)

    result = await within(client.revert_changes(session, files=["b.txt"]))
    assert isinstance(result, RevertChangesResult) and result.skipped == []
    assert [(file.path, file.action) for file in result.reverted] == [("b.txt", "restored")]
    assert (folder / "b.txt").read_text() == "bee\n"

    result = await within(client.revert_changes(session, hunks=[("a.txt", 0)]))
    assert [(file.path, file.hunks) for file in result.reverted] == [("a.txt", [0])]
    assert (folder / "a.txt").read_text() == A_BEFORE.replace("line 19\n", "LINE NINETEEN\n")

    error = await within(_error(client.revert_changes(session, files=["nowhere.txt"])))
    assert error.kind == "invalidParams"

    (folder / "d.txt").write_text("sea, changed by hand\n")
    error = await within(_error(client.revert_changes(session)))
    assert error.kind == "fileConflict"
    # c.txt goes back with d.txt (the rename is undone whole or not at all)
    assert [file["path"] for file in error.data["files"]] == ["d.txt", "c.txt"]
    assert not (folder / "c.txt").exists() and (folder / "e.txt").exists()  # nothing was changed

    result = await within(client.revert_changes(session, force=True))
    assert [file.path for file in result.skipped] == ["d.txt", "c.txt"]
    reverted = {file.path: file.action for file in result.reverted}
    assert reverted["e.txt"] == "deleted" and "d.txt" not in reverted
    assert not (folder / "e.txt").exists() and (folder / "d.txt").read_text() == "sea, changed by hand\n"
    assert (folder / "a.txt").read_text() == A_BEFORE

    left = await within(client.get_changes(session))
    assert [file.path for file in left.files] == ["d.txt"]


async def _error(awaitable: object) -> AgentClientError:
    with pytest.raises(AgentClientError) as caught:
        await awaitable  # type: ignore[misc]
    return caught.value
