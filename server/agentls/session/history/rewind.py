"""Putting files back when a session moves to another point of its tree.

The ``write`` and ``edit`` tools record each file's content before and after them
(:mod:`agentls.session.history.file_changes`). Moving from one leaf to another entry undoes the
changes of the branch left, back to where the two paths part, and (for a branch switch
that asks for it) redoes those of the branch gone to. For each file that means one
expected content now (what the agent left) and one target content; a file whose content
is not the expected one was changed by someone else, and is not touched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.session.history.file_changes import MAX_RECORDED_BYTES, FileChange, FileChanges, Snapshot
from agentls.session.history.tree import FILE_CHANGES, REWIND, Node, SessionTree
from agentls.tools.workspace import ToolInputError, Workspace


@dataclass(frozen=True)
class FilePlan:
    """What one file must go from and to."""

    path: str
    expected: Snapshot | None
    """What the file holds now if nobody else changed it (``None``: it does not exist)."""
    target: Snapshot | None
    """What it must hold after (``None``: it must not exist)."""
    action: str
    """``reverted``, ``deleted``, ``restored`` or ``applied``."""

    def wire(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "action": self.action,
            "expected": self.expected.sha256 if self.expected else None,
            "target": self.target.sha256 if self.target else None,
        }


@dataclass(frozen=True)
class FileProblem:
    path: str
    reason: str


def _changes(nodes: Sequence[Node]) -> list[FileChange]:
    """The file changes recorded in ``nodes``, in order."""
    changes: list[FileChange] = []
    for node in nodes:
        if node.custom_type == FILE_CHANGES and isinstance(node.data, FileChanges):
            changes.extend(node.data.changes)
    return changes


def plan_files(tree: SessionTree, from_id: str | None, to_id: str | None, redo: bool) -> list[FilePlan]:
    """What moving from ``from_id`` to ``to_id`` does to files: undo the changes of the branch left
    and, with ``redo``, make those of the branch gone to; files ending as they are left out."""
    undo = _changes(tree.left_behind(from_id, to_id))
    again = _changes(tree.left_behind(to_id, from_id)) if redo else []
    paths = list(dict.fromkeys(change.path for change in [*undo, *again]))
    plans = []
    for path in paths:
        undone = _in_order([change for change in undo if change.path == path])
        redone = _in_order([change for change in again if change.path == path])
        expected = undone[-1].after if undone else redone[0].before
        target = redone[-1].after if redone else undone[0].before
        if _digest(expected) == _digest(target):
            continue
        if target is None:
            action = "deleted"
        elif redone:
            action = "applied"
        else:
            action = "restored" if expected is None else "reverted"
        plans.append(FilePlan(path, expected, target, action))
    return plans


def _in_order(changes: list[FileChange]) -> list[FileChange]:
    """One file's changes in the order they happened.

    They are recorded in the order the tool results were written, which for calls that
    ran in parallel need not be the order they wrote in; each change starts from the
    text the one before it left, so the chain gives the order (when it is a plain chain).
    """
    if len(changes) < 2:
        return changes
    after = {_digest(change.after) for change in changes}
    first = [change for change in changes if _digest(change.before) not in after]
    if len(first) != 1:
        return changes  # not a plain chain (a change undone by a later one): keep the recorded order
    ordered = first
    rest = [change for change in changes if change is not first[0]]
    while rest:
        following = next((c for c in rest if _digest(c.before) == _digest(ordered[-1].after)), None)
        if following is None:
            return changes
        ordered.append(following)
        rest.remove(following)
    return ordered


def _digest(snapshot: Snapshot | None) -> str | None:
    return snapshot.sha256 if snapshot is not None else None


async def current_digest(workspace: Workspace, path: str) -> str | None:
    """The SHA-256 of what the file holds now (the editor's buffer if open), ``None`` if it does not exist.

    Raises :class:`OSError` or :class:`ToolInputError` when it cannot be read.
    """
    try:
        data = (await workspace.read_document(path)).data
    except FileNotFoundError:
        return None
    return hashlib.sha256(data).hexdigest()


async def find_conflicts(workspace: Workspace, plans: Sequence[FilePlan]) -> list[FileProblem]:
    """The files that cannot be put back: changed by someone else, unreadable, or not recorded in full."""
    problems = []
    for plan in plans:
        try:
            now = await current_digest(workspace, plan.path)
        except (OSError, ToolInputError) as error:
            problems.append(FileProblem(plan.path, f"cannot be read ({error})"))
            continue
        if now == _digest(plan.target):
            # Already as it must become: a change recorded whose write never landed (the server
            # stopped between the two, or the write failed), or one the user undid by hand.
            continue
        if plan.target is not None and plan.target.text is None:
            problems.append(FileProblem(plan.path, _not_recorded(plan.target)))
        elif now != _digest(plan.expected):
            problems.append(FileProblem(plan.path, _why_changed(plan.expected, now)))
    return problems


def _not_recorded(snapshot: Snapshot) -> str:
    if snapshot.size > MAX_RECORDED_BYTES:
        return (
            f"too large to have been recorded ({snapshot.size} bytes; files over 1 MiB are recorded as "
            "hashes only), so it cannot be put back"
        )
    return "not UTF-8 text, so only its hash was recorded and it cannot be put back"


def _why_changed(expected: Snapshot | None, now: str | None) -> str:
    if expected is None:
        return "it exists now, although the agent's changes began before it did: someone created it since"
    if now is None:
        return "it was deleted since the agent's last change"
    return "it was changed since the agent's last change (by the user or another program)"


async def apply_plans(
    workspace: Workspace, plans: Sequence[FilePlan]
) -> tuple[list[FilePlan], list[FileProblem]]:
    """Put each file in its target state; ``(done, failed)``. A failure does not stop the others."""
    done: list[FilePlan] = []
    failed: list[FileProblem] = []
    for plan in plans:
        try:
            if await current_digest(workspace, plan.path) == _digest(plan.target):
                done.append(plan)  # already so (see find_conflicts)
                continue
            if plan.target is None:
                await workspace.delete_file(plan.path)
            else:
                assert plan.target.text is not None  # find_conflicts refuses the others
                await workspace.write_text(plan.path, plan.target.text)
        except FileNotFoundError:
            done.append(plan)  # already gone
        except (OSError, ToolInputError) as error:
            failed.append(FileProblem(plan.path, f"could not be written ({error})"))
        else:
            done.append(plan)
    return done, failed


async def interrupted_report(tree: SessionTree, workspace: Workspace) -> list[str]:
    """When the session's leaf is a rewind marker whose files were never reported done (the server
    was stopped in between): one line per file saying what state it is in."""
    leaf = tree.get(tree.leaf_id) if tree.leaf_id is not None else None
    if leaf is None or leaf.custom_type != REWIND or not isinstance(leaf.data, dict):
        return []
    files = leaf.data.get("files")
    if not isinstance(files, list) or not files:
        return []
    lines = []
    for item in files:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        path = item["path"]
        try:
            now = await current_digest(workspace, path)
        except (OSError, ToolInputError) as error:
            lines.append(f"{display(workspace.root, path)}: cannot be read ({error})")
            continue
        if now == item.get("target"):
            state = "reverted"
        elif now == item.get("expected"):
            state = "not reverted: still as the agent left it"
        else:
            state = "changed by someone else since: left as it is"
        lines.append(f"{display(workspace.root, path)}: {state}")
    if not lines:
        return []
    head = "A rewind of this session was cut short (the server stopped before it finished):"
    return [head, *lines]


def display(root: Path, path: str) -> str:
    """``path`` relative to the session's folder when it is inside, else as it is."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path
