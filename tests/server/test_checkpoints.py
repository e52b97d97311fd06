"""Checkpoints end to end: what ``bash`` changed, put back by a rewind, listed by ``agent/getChanges``
and taken back in part by ``agent/revertChanges``; reviews answered hunk by hunk.

pytest-lsp's client plays the editor (:class:`DeletingEditor`): ``a.txt`` is open in it, and
when a command changes the file on disk the editor reloads it, as VS Code and Neovim's
``autoread`` do (a full ``didChange``). The faux model's run calls the real ``bash`` tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.server.conftest import FauxScript, Servers, tool_call
from tests.server.test_e2e import agent_error
from tests.server.test_editor_workspace import Editor, editor_session
from tests.server.test_session_tree import CAPABILITIES, DeletingEditor, call, error_of, prompt, user_entry

pytestmark = pytest.mark.asyncio(loop_scope="module")

A_BEFORE = "".join(f"line {i}\n" for i in range(1, 21))
SHELL = (
    "sed -i 's/line 2$/LINE TWO/; s/line 19$/LINE NINETEEN/' a.txt"
    " && rm b.txt && mv c.txt d.txt && echo made > e.txt"
)


def options(data_dir: Path, faux_script: FauxScript, **more: Any) -> dict[str, Any]:
    return {
        "dataDir": str(data_dir),
        "fauxScript": str(faux_script.path),
        "permissions": {"bash": "allow"},
        **more,
    }


def prepare(workspace: Path) -> None:
    (workspace / "a.txt").write_text(A_BEFORE)
    (workspace / "b.txt").write_text("bee\n")
    (workspace / "c.txt").write_text("sea\n")


def bash_run(faux_script: FauxScript, command: str = SHELL, *after: dict[str, Any]) -> None:
    """A first plain answer, then a run whose one tool call is ``command``."""
    faux_script(
        [
            {"content": "Hello!"},
            {"content": [tool_call("b1", "bash", {"command": command})], "stopReason": "toolUse"},
            {"content": "Done."},
            *after,
        ]
    )


def on_disk(workspace: Path) -> dict[str, str | None]:
    names = ("a.txt", "b.txt", "c.txt", "d.txt", "e.txt")
    return {n: (workspace / n).read_text() if (workspace / n).exists() else None for n in names}


@contextlib.asynccontextmanager
async def prompted(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> AsyncIterator[tuple[LanguageClient, str]]:
    """A server whose editor deletes files when asked, and a session after its prompt "go"."""
    async with editor_session(
        data_dir,
        faux_script,
        CAPABILITIES,
        options=options(data_dir, faux_script),
        editor_class=DeletingEditor,
    ) as (client, _):
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        await prompt(client, session, "go")
        yield client, session


@contextlib.asynccontextmanager
async def bash_session(
    data_dir: Path, faux_script: FauxScript, workspace: Path, **more: Any
) -> AsyncIterator[tuple[LanguageClient, Editor, str]]:
    """A server with ``a.txt`` open and a session after its two runs (the second one's bash)."""
    async with editor_session(
        data_dir,
        faux_script,
        CAPABILITIES,
        options=options(data_dir, faux_script, **more),
        editor_class=DeletingEditor,
    ) as (client, editor):
        editor.open(workspace / "a.txt")
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        await prompt(client, session, "say hello")
        await prompt(client, session, "change them")
        editor.type(workspace / "a.txt", (workspace / "a.txt").read_text())  # the editor reloads the file
        yield client, editor, session


async def test_a_rewind_puts_back_what_bash_changed_the_open_buffer_through_the_editor(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace)
    bash_run(faux_script)
    async with bash_session(data_dir, faux_script, workspace) as (client, editor, session):
        assert on_disk(workspace)["e.txt"] == "made\n" and on_disk(workspace)["b.txt"] is None

        changes = await call(client, "agent/getChanges", sessionId=session)
        assert changes["checkpoints"] == "on" and changes["runId"].startswith("run-")
        by_path = {f["path"]: f for f in changes["files"]}
        assert {p: (f["status"], f["by"]) for p, f in by_path.items()} == {
            "a.txt": ("modified", ["bash"]),
            "b.txt": ("deleted", ["bash"]),
            "d.txt": ("renamed", ["bash"]),
            "e.txt": ("added", ["bash"]),
        }
        assert by_path["d.txt"]["oldPath"] == "c.txt" and by_path["d.txt"]["hunks"] == []
        assert [h["lines"] for h in by_path["a.txt"]["hunks"]] == [
            [" line 1", "-line 2", "+LINE TWO", " line 3", " line 4", " line 5"],
            [" line 16", " line 17", " line 18", "-line 19", "+LINE NINETEEN", " line 20"],
        ]
        assert by_path["e.txt"]["hunks"][0]["lines"] == ["+made"]
        state = await call(client, "agent/getState", sessionId=session)
        assert state["checkpoints"] == {"state": "on"}

        tree = await call(client, "agent/getTree", sessionId=session)
        edits_before = len(editor.edits)
        result = await call(
            client, "agent/rewind", sessionId=session, entryId=user_entry(tree, "change them")["parentId"]
        )
        assert sorted((r["path"], r["action"]) for r in result["reverted"]) == [
            ("a.txt", "reverted"),
            ("b.txt", "restored"),
            ("c.txt", "restored"),
            ("d.txt", "deleted"),
            ("e.txt", "deleted"),
        ]
        assert on_disk(workspace) == {
            "a.txt": A_BEFORE,
            "b.txt": "bee\n",
            "c.txt": "sea\n",
            "d.txt": None,
            "e.txt": None,
        }
        # the open document went back through one workspace/applyEdit, undoable in the editor (and the
        # files that come back are created through it, as the write tool creates files)
        labels = [edit.label for edit in editor.edits[edits_before:]]
        assert labels == ["agentls: edit a.txt", "agentls: create b.txt", "agentls: create c.txt"]
        assert editor.text(workspace / "a.txt") == A_BEFORE


async def test_a_file_changed_since_is_a_conflict_until_forced(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace)
    bash_run(faux_script)
    async with bash_session(data_dir, faux_script, workspace) as (client, _, session):
        (workspace / "d.txt").write_text("the user's own\n")
        tree = await call(client, "agent/getTree", sessionId=session)
        target = user_entry(tree, "change them")["parentId"]
        error = await error_of(client, "agent/rewind", sessionId=session, entryId=target)
        assert "cannot be put back: d.txt: it was changed since" in str(error)
        assert on_disk(workspace)["b.txt"] is None  # nothing changed

        result = await call(client, "agent/rewind", sessionId=session, entryId=target, force=True)
        # the rename c.txt -> d.txt is undone whole or not at all: c.txt does not come back beside d.txt
        assert result["skipped"] == [
            {
                "path": "d.txt",
                "reason": "it was changed since the agent's last change (by the user or another program)",
            },
            {"path": "c.txt", "reason": "it goes back with d.txt (a rename), which cannot be put back"},
        ]
        assert on_disk(workspace) | {"d.txt": "kept"} == {
            "a.txt": A_BEFORE,
            "b.txt": "bee\n",
            "c.txt": None,
            "d.txt": "kept",
            "e.txt": None,
        }
        assert (workspace / "d.txt").read_text() == "the user's own\n"


async def test_a_hunk_reverted_leaves_the_other_and_the_model_is_told(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    prepare(workspace)
    bash_run(faux_script)
    async with bash_session(data_dir, faux_script, workspace) as (client, editor, session):
        result = await call(
            client, "agent/revertChanges", sessionId=session, hunks=[{"path": "a.txt", "index": 1}]
        )
        assert result == {"reverted": [{"path": "a.txt", "action": "reverted", "hunks": [1]}], "skipped": []}
        expected = A_BEFORE.replace("line 2\n", "LINE TWO\n")
        assert (workspace / "a.txt").read_text() == expected and editor.text(workspace / "a.txt") == expected

        # the run's change now has one hunk less, and the model reads what the user took back
        changes = await call(client, "agent/getChanges", sessionId=session, fromEntryId=None)
        a = next(f for f in changes["files"] if f["path"] == "a.txt")
        assert len(a["hunks"]) == 1 and "user" in a["by"]
        messages = (await call(client, "agent/getMessages", sessionId=session))["messages"]
        told = messages[-1]
        assert told["role"] == "custom" and told["customType"] == "agentls/revert"
        assert told["content"].startswith("The user reverted some of your changes: a.txt: hunk 2")

        for bad, why in (
            ({"hunks": [{"path": "a.txt", "index": 5}]}, "there is no hunk 5"),
            ({"files": ["nowhere.txt"]}, "nowhere.txt is not among the files"),
            ({"hunks": [{"path": "d.txt", "index": 0}]}, "was renamed"),
        ):
            error = await error_of(client, "agent/revertChanges", sessionId=session, **bad)
            assert why in str(error)

        (workspace / "d.txt").write_text("edited since\n")
        whole = await call(
            client, "agent/revertChanges", sessionId=session, files=["d.txt", "b.txt"], force=True
        )
        # the rename cannot be undone (d.txt changed since), so it is not undone half: c.txt stays away
        assert whole["reverted"] == [{"path": "b.txt", "action": "restored"}]
        assert sorted(item["path"] for item in whole["skipped"]) == ["c.txt", "d.txt"]
        assert "goes back with d.txt (a rename)" in next(
            i["reason"] for i in whole["skipped"] if i["path"] == "c.txt"
        )
        assert on_disk(workspace)["b.txt"] == "bee\n" and on_disk(workspace)["c.txt"] is None


async def test_changes_name_who_made_them_and_the_users_command_is_rewound_too(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "w.txt").write_text("one\n")
    faux_script(
        [
            {
                "content": [tool_call("w1", "write", {"path": "w.txt", "content": "two\n"})],
                "stopReason": "toolUse",
            },
            {
                "content": [tool_call("b1", "bash", {"command": "echo x >> w.txt; echo y > y.txt"})],
                "stopReason": "toolUse",
            },
            {"content": "Done."},
        ]
    )
    async with prompted(data_dir, faux_script, workspace) as (client, session):
        changes = await call(client, "agent/getChanges", sessionId=session)
        assert {f["path"]: f["by"] for f in changes["files"]} == {
            "w.txt": ["write", "bash"],
            "y.txt": ["bash"],
        }
        assert (workspace / "w.txt").read_text() == "two\nx\n"

        ended = client.protocol.wait_for_notification_async("agent/bashEnd")
        await call(client, "agent/bash", sessionId=session, command="rm y.txt && echo z > z.txt")
        await ended
        span = await call(client, "agent/getChanges", sessionId=session, fromEntryId=None, text=True)
        files = {f["path"]: f for f in span["files"]}
        assert {p: (f["status"], f["by"]) for p, f in files.items()} == {
            "w.txt": ("modified", ["write", "bash"]),
            "z.txt": ("added", ["user"]),
        }  # y.txt was made and removed within the span: no change
        assert files["w.txt"]["oldText"] == "one\n" and files["w.txt"]["newText"] == "two\nx\n"
        assert "oldText" not in files["z.txt"] and files["z.txt"]["newText"] == "z\n"

        result = await call(client, "agent/rewind", sessionId=session, entryId=None)
        assert sorted(r["path"] for r in result["reverted"]) == ["w.txt", "z.txt"]
        assert (workspace / "w.txt").read_text() == "one\n"
        assert not (workspace / "y.txt").exists() and not (workspace / "z.txt").exists()


async def test_binary_and_executable_files_come_back_after_a_restart(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "blob.bin").write_bytes(bytes(range(256)) * 4)
    (workspace / ".gitignore").write_text("ignored/\n")
    (workspace / "ignored").mkdir()
    (workspace / "ignored" / "cache").write_text("cached\n")
    faux_script(
        [
            {
                "content": [tool_call("b1", "bash", {"command": "rm run.sh blob.bin ignored/cache"})],
                "stopReason": "toolUse",
            },
            {"content": "Removed."},
        ]
    )
    opts = options(data_dir, faux_script)
    async with editor_session(data_dir, faux_script, CAPABILITIES, options=opts) as (client, _):
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        await prompt(client, session, "remove them")
        changes = await call(client, "agent/getChanges", sessionId=session)
        files = {f["path"]: f for f in changes["files"]}
        assert set(files) == {"run.sh", "blob.bin"}  # what .gitignore ignores is not captured
        assert files["blob.bin"]["binary"] is True and files["blob.bin"]["hunks"] == []
    async with editor_session(data_dir, faux_script, CAPABILITIES, options=opts) as (client, _):
        await call(client, "agent/loadSession", sessionId=session)
        result = await call(client, "agent/rewind", sessionId=session, entryId=None)
        assert sorted(r["path"] for r in result["reverted"]) == ["blob.bin", "run.sh"]
    assert (workspace / "blob.bin").read_bytes() == bytes(range(256)) * 4
    assert (workspace / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert os.stat(workspace / "run.sh").st_mode & stat.S_IXUSR
    assert not (workspace / "ignored" / "cache").exists()
    # the user's own repository is never touched: the shadow one lives in the data folder
    assert not (workspace / ".git").exists()
    [shadow] = (data_dir / "checkpoints").iterdir()
    assert (shadow / "git" / "work-tree").read_text().strip() == str(workspace)
    refs = subprocess.run(  # noqa: ASYNC221 (the server is done; a quick look at its repository)
        ["git", "--git-dir", str(shadow / "git"), "for-each-ref", "refs/agentls/"],
        capture_output=True,
        text=True,
    )
    assert refs.stdout.count("refs/agentls/") >= 2


async def test_a_folder_too_large_says_so_and_keeps_the_write_and_edit_records(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    for i in range(5):
        (workspace / f"f{i}.txt").write_text(f"{i}\n")
    faux_script(
        [
            {
                "content": [tool_call("w1", "write", {"path": "f0.txt", "content": "changed\n"})],
                "stopReason": "toolUse",
            },
            {"content": [tool_call("b1", "bash", {"command": "rm f1.txt"})], "stopReason": "toolUse"},
            {"content": "Done."},
        ]
    )
    opts = options(data_dir, faux_script, checkpoints={"maxFiles": 3})
    async with editor_session(data_dir, faux_script, CAPABILITIES, options=opts) as (client, _):
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        await prompt(client, session, "go")
        state = await call(client, "agent/getState", sessionId=session)
        assert state["checkpoints"]["state"] == "unavailable"
        assert "more than 3 files" in state["checkpoints"]["reason"]
        changes = await call(client, "agent/getChanges", sessionId=session)
        assert changes["checkpoints"] == "unavailable"
        assert [(f["path"], f["by"]) for f in changes["files"]] == [("f0.txt", ["write"])]
        await call(client, "agent/rewind", sessionId=session, entryId=None)
        assert (workspace / "f0.txt").read_text() == "0\n" and not (workspace / "f1.txt").exists()

    off = options(data_dir, faux_script, checkpoints={"enabled": False})
    async with editor_session(data_dir, faux_script, CAPABILITIES, options=off) as (client, _):
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        assert (await call(client, "agent/getState", sessionId=session))["checkpoints"] == {"state": "off"}


async def test_a_bad_checkpoints_option_is_refused_at_initialize(servers: Servers, data_dir: Path) -> None:
    for bad, field in (({"maxFiles": "many"}, "maxFiles"), ({"exclude": "build"}, "exclude")):
        error = await agent_error(servers.start({"dataDir": str(data_dir), "checkpoints": bad}))
        assert error.kind == "invalidParams"
        assert str(error).startswith(
            f"Invalid params for initialize: initializationOptions.checkpoints.{field}: "
        )


async def test_a_review_answered_with_one_of_two_hunks_lands_that_hunk_only(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    (workspace / "a.txt").write_text(A_BEFORE)
    new = A_BEFORE.replace("line 2\n", "LINE TWO\n").replace("line 19\n", "LINE NINETEEN\n")
    faux_script(
        [
            {
                "content": [tool_call("w1", "write", {"path": "a.txt", "content": new})],
                "stopReason": "toolUse",
            },
            {"content": "Written."},
        ]
    )
    opts = options(data_dir, faux_script, permissions={"write": "review"})
    capabilities = types.ClientCapabilities(
        workspace=CAPABILITIES.workspace, experimental={"agent": {"reviewEdit": True}}
    )
    async with editor_session(data_dir, faux_script, capabilities, options=opts) as (client, editor):
        editor.review_answer.set_result({"outcome": "accept", "hunks": [0]})
        session = (await call(client, "agent/newSession", cwd=str(workspace)))["sessionId"]
        await prompt(client, session, "write it")
        [review] = editor.reviews
        changed = [[line for line in h["lines"] if line[0] in "+-"] for h in review["hunks"]]
        assert changed == [["-line 2", "+LINE TWO"], ["-line 19", "+LINE NINETEEN"]]
        assert (workspace / "a.txt").read_text() == A_BEFORE.replace("line 2\n", "LINE TWO\n")
        messages = (await call(client, "agent/getMessages", sessionId=session))["messages"]
        result = next(m for m in messages if m["role"] == "toolResult")
        text = result["content"][0]["text"]
        assert (
            "The user accepted hunk 1 of 2 of the change to a.txt and rejected hunk 2 (@@ -16,5 +16,5 @@)"
            in text
        )
        assert "+LINE TWO" in text and "NINETEEN" not in text


async def test_each_batchs_snapshot_pair_sits_between_its_results_and_the_next_message(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    # The snapshots of a run's start and of a batch's end are taken beside the next model request:
    # the session file still has each pair right after its batch's results, and the next batch
    # starts from the state the pair ends at.
    faux_script(
        [
            {"content": [tool_call("b1", "bash", {"command": "echo one > x.txt"})], "stopReason": "toolUse"},
            {"content": [tool_call("b2", "bash", {"command": "echo two >> x.txt"})], "stopReason": "toolUse"},
            {"content": "Done."},
        ]
    )
    async with prompted(data_dir, faux_script, workspace) as (client, session):
        entries = [
            json.loads(line) for line in (data_dir / "sessions" / f"{session}.jsonl").read_text().splitlines()
        ]
        kinds = [
            entry.get("customType") or entry.get("message", {}).get("role") or entry["type"]
            for entry in entries[1:]
        ]
        assert kinds == [
            "agentls/run",
            "user",
            "assistant",
            "toolResult",
            "agentls/workspaceChanges",
            "assistant",
            "toolResult",
            "agentls/workspaceChanges",
            "assistant",
        ]
        assert entries[1]["data"] == {"runId": entries[1]["data"]["runId"]}
        first, second = (
            entry["data"] for entry in entries if entry.get("customType") == "agentls/workspaceChanges"
        )
        assert first["after"] == second["before"] and first["before"] != first["after"]
        span = await call(client, "agent/getChanges", sessionId=session, text=True)
        assert [(f["path"], f["status"], f["by"], f.get("newText")) for f in span["files"]] == [
            ("x.txt", "added", ["bash"], "one\ntwo\n")
        ]


async def eventually(check: Callable[[], Awaitable[bool]], what: str, seconds: float = 15) -> None:
    """Until ``check`` holds (nothing tells when a background snapshot ends: look again every 20 ms)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"no {what} after {seconds} s"
        await asyncio.sleep(0.02)


async def test_a_new_session_snapshots_its_folder_before_any_prompt(
    data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    """The folder's first snapshot (the shadow repository made, every file added: seconds in a large
    folder) is taken in the background as the session opens, not when the first run needs it; a folder
    too large says so then too."""
    (workspace / "notes.txt").write_text("notes\n")
    large = tmp_path / "large"
    large.mkdir()
    for i in range(5):
        (large / f"f{i}.txt").write_text(f"{i}\n")
    faux_script([{"content": "unused"}])

    async def snapshotted() -> bool:
        shadows = (data_dir / "checkpoints").glob("*/git")
        refs = await asyncio.gather(*(_refs(git) for git in shadows if (git / "HEAD").exists()))
        return sum(found.count("refs/agentls/") for found in refs) == 1

    opts = options(data_dir, faux_script, checkpoints={"maxFiles": 3})
    async with editor_session(data_dir, faux_script, CAPABILITIES, options=opts) as (client, _):
        await call(client, "agent/newSession", cwd=str(workspace))
        await eventually(snapshotted, "snapshot of the new session's folder")
        session = (await call(client, "agent/newSession", cwd=str(large)))["sessionId"]

        async def refused() -> bool:
            state = (await call(client, "agent/getState", sessionId=session))["checkpoints"]
            return state["state"] == "unavailable" and "more than 3 files" in state["reason"]

        await eventually(refused, "word that the large folder has too many files")


async def _refs(git: Path) -> str:
    listing = await asyncio.create_subprocess_exec(
        "git", "--git-dir", str(git), "for-each-ref", "refs/agentls/", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await listing.communicate()
    return out.decode()
