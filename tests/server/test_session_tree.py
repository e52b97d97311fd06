"""The session tree end to end: ``agent/getTree``, ``agent/rewind``, ``agent/switchBranch``, labels.

pytest-lsp's client plays the editor (:class:`~tests.server.test_editor_workspace.Editor`,
which here also deletes files as ``DeleteFile`` asks): a run of the faux model edits a
file open in the editor and one that is not, and creates a third; rewinding puts all
three back, through the editor for the open one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClientError
from agentls.session.compaction.branch_summary import BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT
from agentls.session.compaction.summary import SUMMARIZATION_SYSTEM_PROMPT
from agentls.session.messages import BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.ai.providers.mock_http import MockServer, Reply
from tests.server.conftest import FauxScript, Servers, tool_call, within
from tests.server.test_compaction_requests import MODEL, conversation, point_at, says, system_text
from tests.server.test_editor_workspace import EDITING, Editor, editor_session
from tests.server.test_providers_e2e import NO_KEYS
from tests.server.test_pytest_lsp import plain

pytestmark = pytest.mark.asyncio(loop_scope="module")

OPEN, CLOSED = "open = 1\nkeep = 'me'\n", "closed = 1\n"
CALLS = [
    tool_call(
        "c1", "edit", {"path": "closed.txt", "edits": [{"oldText": "closed = 1", "newText": "closed = 2"}]}
    ),
    tool_call("c2", "edit", {"path": "open.txt", "edits": [{"oldText": "open = 1", "newText": "open = 2"}]}),
    tool_call("c3", "write", {"path": "new.txt", "content": "created\n"}),
]
CAPABILITIES = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[types.ResourceOperationKind.Create, types.ResourceOperationKind.Delete],
        ),
    )
)
assert EDITING.workspace is not None


class DeletingEditor(Editor):
    """An :class:`Editor` that also carries out ``DeleteFile`` operations, as VS Code does."""

    def _apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        result = super()._apply(params)
        if result.applied:
            for change in params.edit.document_changes or []:
                if isinstance(change, types.DeleteFile):
                    Path(change.uri.removeprefix("file://")).unlink()
                    self.buffers.pop(change.uri, None)
        return result


async def call(client: LanguageClient, method: str, **params: Any) -> Any:
    return plain(await within(client.protocol.send_request_async(method, params)))


async def prompt(client: LanguageClient, session: str, text: str) -> None:
    settled = client.protocol.wait_for_notification_async("agent/settled")
    await call(client, "agent/prompt", sessionId=session, text=text)
    assert plain(await within(settled))["stopReason"] == "stop"


async def error_of(client: LanguageClient, method: str, **params: Any) -> Any:
    with pytest.raises(Exception) as caught:
        await call(client, method, **params)
    return caught.value


def files(workspace: Path) -> dict[str, str | None]:
    return {
        name: (workspace / name).read_text() if (workspace / name).exists() else None
        for name in ("open.txt", "closed.txt", "new.txt")
    }


def prepare(workspace: Path, faux_script: FauxScript, *after: dict[str, Any]) -> None:
    """The two files, and a script: a first plain answer, then the run that edits and creates."""
    (workspace / "open.txt").write_text(OPEN)
    (workspace / "closed.txt").write_text(CLOSED)
    runs = [{"content": [c], "stopReason": "toolUse"} for c in CALLS]
    faux_script([{"content": "Hello!"}, *runs, {"content": "Edited all three."}, *after])


@contextlib.asynccontextmanager
async def edited(data_dir: Path, faux_script: FauxScript, workspace: Path):  # type: ignore[no-untyped-def]
    """A server with ``open.txt`` open, and a session after its two runs: ``(client, editor, session)``."""
    async with editor_session(data_dir, faux_script, CAPABILITIES, editor_class=DeletingEditor) as (
        client,
        editor,
    ):
        editor.open(workspace / "open.txt")
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        await prompt(client, session, "say hello")
        await prompt(client, session, "edit them")
        yield client, editor, session


def user_entry(tree: dict[str, Any], text: str) -> dict[str, Any]:
    return next(e for e in tree["entries"] if e["role"] == "user" and e["preview"] == text)


async def test_rewind_puts_back_the_open_the_closed_and_the_created_file_then_continues_there(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace, faux_script, {"content": "Second try."})
    branches: list[dict[str, Any]] = []
    async with edited(data_dir, faux_script, workspace) as (client, editor, session):
        assert files(workspace) == {
            "open.txt": "open = 2\nkeep = 'me'\n",
            "closed.txt": "closed = 2\n",
            "new.txt": "created\n",
        }
        tree = await call(client, "agent/getTree", sessionId=session)
        results = [e for e in tree["entries"] if e["role"] == "toolResult"]
        assert [r["files"] for r in results] == [["closed.txt"], ["open.txt"], ["new.txt"]]
        run = user_entry(tree, "edit them")
        before_run = run["parentId"]
        assert before_run is not None and all(e["onBranch"] for e in tree["entries"])
        edits_before = len(editor.edits)

        branch_note = client.protocol.wait_for_notification_async("agent/branch")
        result = await call(client, "agent/rewind", sessionId=session, entryId=before_run)
        note = plain(await within(branch_note))

        assert result["leafId"] == before_run and result["messageCount"] == 2
        assert sorted((r["path"], r["action"]) for r in result["reverted"]) == [
            ("closed.txt", "reverted"),
            ("new.txt", "deleted"),
            ("open.txt", "reverted"),
        ]
        assert result["skipped"] == []
        assert note == {"sessionId": session, "seq": note["seq"], "leafId": before_run, "messageCount": 2}
        assert files(workspace) == {"open.txt": OPEN, "closed.txt": CLOSED, "new.txt": None}
        # the open document was put back by one versioned edit of its buffer (the editor's undo redoes it)
        [revert] = editor.edits[edits_before:]
        [change] = revert.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.version is not None
        assert editor.text(workspace / "open.txt") == OPEN
        messages = await call(client, "agent/getMessages", sessionId=session)
        assert [m["role"] for m in messages["messages"]] == ["user", "assistant"]

        await prompt(client, session, "try again")
        messages = await call(client, "agent/getMessages", sessionId=session)
        assert [m["role"] for m in messages["messages"]] == ["user", "assistant", "user", "assistant"]
        assert messages["messages"][3]["content"][0]["text"] == "Second try."
        tree = await call(client, "agent/getTree", sessionId=session)
        branches = tree["branches"]
        assert user_entry(tree, "try again")["parentId"] == before_run
        assert not user_entry(tree, "edit them")["onBranch"]
    assert [(b["preview"], b["current"]) for b in branches] == [("edit them", False), ("try again", True)]

    async with editor_session(data_dir, faux_script, CAPABILITIES) as (client, _):  # a later load
        loaded = await call(client, "agent/loadSession", sessionId=session)
        assert loaded["messageCount"] == 4 and "warnings" not in loaded
        messages = await call(client, "agent/getMessages", sessionId=session)
        assert [m.get("content") for m in messages["messages"] if m["role"] == "user"] == [
            [{"type": "text", "text": "say hello"}],
            [{"type": "text", "text": "try again"}],
        ]


async def test_a_file_changed_since_refuses_the_rewind_until_forced(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace, faux_script)
    async with edited(data_dir, faux_script, workspace) as (client, editor, session):
        editor.type(workspace / "open.txt", "open = 2\nkeep = 'me'\n# the user's line\n")
        (workspace / "new.txt").write_text("created\nand the user's\n")
        tree = await call(client, "agent/getTree", sessionId=session)
        before_run = user_entry(tree, "edit them")["parentId"]

        error = await error_of(client, "agent/rewind", sessionId=session, entryId=before_run)
        assert error.data["kind"] == "fileConflict"
        assert sorted(f["path"] for f in error.data["files"]) == ["new.txt", "open.txt"]
        assert "changed since the agent's last change" in error.data["files"][0]["reason"]
        assert "open.txt" in str(error) and "force: true" in str(error)
        # nothing changed: files, transcript, position
        assert (workspace / "closed.txt").read_text() == "closed = 2\n"
        assert editor.text(workspace / "open.txt").endswith("# the user's line\n")
        assert (await call(client, "agent/getTree", sessionId=session))["leafId"] == tree["leafId"]

        result = await call(client, "agent/rewind", sessionId=session, entryId=before_run, force=True)
        assert [r["path"] for r in result["reverted"]] == ["closed.txt"]
        assert sorted(s["path"] for s in result["skipped"]) == ["new.txt", "open.txt"]
        assert files(workspace)["closed.txt"] == CLOSED
        assert editor.text(workspace / "open.txt").endswith("# the user's line\n")
        assert (workspace / "new.txt").read_text() == "created\nand the user's\n"


async def test_rewind_without_files_then_switch_back_with_files(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace, faux_script, {"content": "Other branch."})
    async with edited(data_dir, faux_script, workspace) as (client, editor, session):
        tree = await call(client, "agent/getTree", sessionId=session)
        first_tip = tree["leafId"]
        before_run = user_entry(tree, "edit them")["parentId"]
        kept = await call(client, "agent/rewind", sessionId=session, entryId=before_run, files=False)
        assert kept["reverted"] == [] and files(workspace)["new.txt"] == "created\n"
        # back to the edited branch: files untouched by default, they are already as it left them
        back = await call(client, "agent/switchBranch", sessionId=session, entryId=first_tip)
        assert back["reverted"] == [] and back["messageCount"] == 10
        # to the start with files, then to the edited branch with files: undone, then made again
        await call(client, "agent/rewind", sessionId=session, entryId=before_run)
        assert files(workspace) == {"open.txt": OPEN, "closed.txt": CLOSED, "new.txt": None}
        again = await call(client, "agent/switchBranch", sessionId=session, entryId=first_tip, files=True)
        assert sorted((r["path"], r["action"]) for r in again["reverted"]) == [
            ("closed.txt", "applied"),
            ("new.txt", "applied"),
            ("open.txt", "applied"),
        ]
        assert files(workspace) == {
            "open.txt": "open = 2\nkeep = 'me'\n",
            "closed.txt": "closed = 2\n",
            "new.txt": "created\n",
        }
        assert editor.text(workspace / "open.txt") == "open = 2\nkeep = 'me'\n"


async def test_labels_and_bad_requests(data_dir: Path, faux_script: FauxScript, workspace: Path) -> None:
    prepare(workspace, faux_script)
    async with edited(data_dir, faux_script, workspace) as (client, _, session):
        tree = await call(client, "agent/getTree", sessionId=session)
        hello = user_entry(tree, "say hello")
        assert (
            await call(
                client, "agent/setLabel", sessionId=session, entryId=hello["id"], label=" start\n here "
            )
        )["label"] == "start here"
        tree = await call(client, "agent/getTree", sessionId=session)
        assert user_entry(tree, "say hello")["label"] == "start here"
        assert (await call(client, "agent/setLabel", sessionId=session, entryId=hello["id"], label=None)) == {
            "label": None
        }
        assert "label" not in user_entry(await call(client, "agent/getTree", sessionId=session), "say hello")

        unknown = await error_of(client, "agent/rewind", sessionId=session, entryId="nope")
        assert unknown.data["kind"] == "invalidParams" and "no entry 'nope'" in str(unknown)
        label = await error_of(client, "agent/setLabel", sessionId=session, entryId="nope", label="x")
        assert label.data["kind"] == "invalidParams"
        missing = await error_of(client, "agent/rewind", sessionId=session)
        assert missing.data["kind"] == "invalidParams" and "entryId" in str(missing)
        # off the branch: rewind refuses, switchBranch goes there
        await call(
            client, "agent/rewind", sessionId=session, entryId=hello["parentId"] or hello["id"], files=False
        )
        tree = await call(client, "agent/getTree", sessionId=session)
        off = next(e for e in tree["entries"] if not e["onBranch"])
        refused = await error_of(client, "agent/rewind", sessionId=session, entryId=off["id"])
        assert refused.data["kind"] == "invalidParams" and "agent/switchBranch" in str(refused)
        # rewound to before the first message: an empty transcript, and the next prompt a new root
        start = await call(client, "agent/rewind", sessionId=session, entryId=None, files=False)
        assert start["leafId"] is None and start["messageCount"] == 0


class _Killed(Exception):
    pass


async def _rewind_killed(data_dir: Path, faux_script: FauxScript, workspace: Path) -> None:
    """Two runs, then a rewind during which the server is killed (``kill -9``) at its first edit."""
    async with edited(data_dir, faux_script, workspace) as (client, editor, session):
        tree = await call(client, "agent/getTree", sessionId=session)
        before_run = user_entry(tree, "edit them")["parentId"]
        server = client._server
        assert server is not None

        def kill() -> None:  # the rewind's edit of the open document arrives: the server dies there
            os.kill(server.pid, signal.SIGKILL)

        editor.before_apply = kill
        rewind = asyncio.ensure_future(
            client.protocol.send_request_async("agent/rewind", {"sessionId": session, "entryId": before_run})
        )
        assert await within(server.wait()) == -signal.SIGKILL
        rewind.cancel()
        raise _Killed(session, before_run)  # out of the editor session, past its shutdown


async def test_a_server_killed_in_the_middle_of_a_rewind_leaves_a_session_that_loads_and_says_so(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace, faux_script)
    with pytest.raises(_Killed) as killed:
        await _rewind_killed(data_dir, faux_script, workspace)
    session, before_run = killed.value.args
    # closed.txt came first and was put back; open.txt's edit was the one cut short; new.txt never came
    assert files(workspace) == {
        "open.txt": "open = 2\nkeep = 'me'\n",
        "closed.txt": CLOSED,
        "new.txt": "created\n",
    }

    async with editor_session(data_dir, faux_script, CAPABILITIES) as (client, _):
        loaded = await call(client, "agent/loadSession", sessionId=session)
        assert loaded["messageCount"] == 2  # on the new branch
        warnings = loaded["warnings"]
        assert "cut short" in warnings[0]
        assert sorted(warnings[1:]) == [
            "closed.txt: reverted",
            "new.txt: not reverted: still as the agent left it",
            "open.txt: not reverted: still as the agent left it",
        ]
        # a new rewind from the old branch finishes the job
        tree = await call(client, "agent/getTree", sessionId=session)
        old_tip = next(b["leafId"] for b in tree["branches"] if not b["current"])
        await call(client, "agent/switchBranch", sessionId=session, entryId=old_tip)
        await call(client, "agent/rewind", sessionId=session, entryId=before_run, force=True)
        assert files(workspace) == {"open.txt": OPEN, "closed.txt": CLOSED, "new.txt": None}


async def test_the_branch_summary_reaches_the_next_request_and_fork_leaves_the_original(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    replies = [
        says("First answer."),
        says("Approach A is slow."),
        says("## Goal\nTry approach A."),
        says("B it is."),
    ]
    async with MockServer(replies) as mock:
        point_at(data_dir, mock.url)
        client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
        session = await within(client.new_session(cwd=str(workspace), model=("anthropic", MODEL)))
        await within(client.prompt(session, "First question?", wait=True))
        await within(client.prompt(session, "Explore approach A", wait=True))
        tree = await within(client.get_tree(session))
        explore = next(e for e in tree.entries if e.preview == "Explore approach A")
        before = (await within(client.get_messages(session))).messages

        fork = await within(client.fork(session, explore.parent_id))
        assert [m["role"] for m in (await within(client.get_messages(fork))).messages] == [
            "user",
            "assistant",
        ]
        assert (await within(client.get_messages(session))).messages == before

        result = await within(
            client.rewind(session, explore.parent_id, summarize=True, instructions="the speed")
        )
        assert result.summary is not None and result.summary.startswith(BRANCH_SUMMARY_PREAMBLE)
        assert "## Goal\nTry approach A." in result.summary
        messages = (await within(client.get_messages(session))).messages
        assert [m["role"] for m in messages] == ["user", "assistant", "branchSummary"]
        await within(client.prompt(session, "Try approach B", wait=True))
        summary_request, after = (request.json() for request in mock.requests[2:])
    assert system_text(summary_request) == SUMMARIZATION_SYSTEM_PROMPT
    [(role, [(_, asked)])] = conversation(summary_request)
    assert role == "user" and asked.startswith("<conversation>\n[User]: Explore approach A")
    assert asked.endswith(BRANCH_SUMMARY_PROMPT + "\n\nAdditional focus: the speed")
    assert summary_request["max_tokens"] == 4096
    summary = ("text", BRANCH_SUMMARY_PREFIX + result.summary + BRANCH_SUMMARY_SUFFIX)
    assert conversation(after) == [
        ("user", [("text", "First question?")]),
        ("assistant", [("text", "First answer.")]),
        ("user", [summary]),
        ("user", [("text", "Try approach B")]),
    ]


async def test_a_rewind_while_running_is_busy_and_an_abort_during_its_summary_changes_nothing(
    servers: Servers, data_dir: Path, workspace: Path
) -> None:
    async with MockServer([says("Hello!"), Reply(silent=True), Reply(silent=True)]) as mock:
        point_at(data_dir, mock.url)
        client = await servers.start({"dataDir": str(data_dir)}, env=NO_KEYS)
        session = await within(client.new_session(cwd=str(workspace), model=("anthropic", MODEL)))
        await within(client.prompt(session, "one", wait=True))
        await within(client.prompt(session, "two"))
        await within(mock.wait_for_requests(2))  # the run's model call is waiting for an answer
        with pytest.raises(AgentClientError) as busy:
            await within(client.rewind(session, None))
        assert busy.value.kind == "busy"
        await within(client.abort(session))

        tree = await within(client.get_tree(session))
        rewind = asyncio.ensure_future(client.rewind(session, None, summarize=True))
        await within(mock.wait_for_requests(3))  # the branch summary's request
        assert (await within(client.abort(session))).aborted
        with pytest.raises(AgentClientError) as failed:
            await within(rewind)
        assert failed.value.kind == "summaryFailed" and "nothing was changed" in str(failed.value)
        assert await within(client.get_tree(session)) == tree
