"""Putting files back when a session moves to another point of its tree, or reverts changes.

The session's records (:mod:`agentls.session.history.checkpoints`) say what each action did to
each file. Moving from one leaf to another entry undoes the changes of the branch left, back to
where the two paths part, and (for a branch switch that asks for it) redoes those of the branch
gone to. For each file that means one expected content now (what the agent left) and one target
content; a file whose content is not the expected one was changed by someone else, and is not
touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.session.history.checkpoints import EXECUTABLE_MODE
from agentls.session.history.file_changes import MAX_RECORDED_BYTES, FileChange, Fingerprint, Snapshot
from agentls.session.history.tree import REWIND, SessionTree
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
            "expected": _key(self.expected),
            "target": _key(self.target),
        }


@dataclass(frozen=True)
class FileProblem:
    path: str
    reason: str


def plan_files(undo: Sequence[FileChange], again: Sequence[FileChange] = ()) -> list[FilePlan]:
    """What undoing the changes ``undo`` and making those of ``again`` does to files (in the order they
    were made); files ending as they are left out."""
    paths = list(dict.fromkeys(change.path for change in [*undo, *again]))
    plans = []
    for path in paths:
        undone = in_order([change for change in undo if change.path == path])
        redone = in_order([change for change in again if change.path == path])
        expected = undone[-1].after if undone else redone[0].before
        target = redone[-1].after if redone else undone[0].before
        if _key(expected) == _key(target):
            continue
        plans.append(FilePlan(path, expected, target, action_of(expected, target, bool(redone))))
    return plans


def action_of(expected: Snapshot | None, target: Snapshot | None, redo: bool = False) -> str:
    if target is None:
        return "deleted"
    if redo:
        return "applied"
    return "restored" if expected is None else "reverted"


def in_order(changes: list[FileChange]) -> list[FileChange]:
    """One file's changes in the order they happened.

    They are recorded in the order the tool results were written, which for calls that
    ran in parallel need not be the order they wrote in; each change starts from the
    text the one before it left, so the chain gives the order (when it is a plain chain).
    """
    if len(changes) < 2:
        return changes
    after = {_key(change.after) for change in changes}
    first = [change for change in changes if _key(change.before) not in after]
    if len(first) != 1:
        return changes  # not a plain chain (a change undone by a later one): keep the recorded order
    ordered = first
    rest = [change for change in changes if change is not first[0]]
    while rest:
        following = next((c for c in rest if _key(c.before) == _key(ordered[-1].after)), None)
        if following is None:
            return changes
        ordered.append(following)
        rest.remove(following)
    return ordered


def _key(snapshot: Snapshot | None) -> str | None:
    return snapshot.key if snapshot is not None else None


def holds(snapshot: Snapshot | None, now: Fingerprint | None) -> bool:
    """Whether a file that holds ``now`` (``None``: absent) holds ``snapshot``."""
    if snapshot is None or now is None:
        return snapshot is None and now is None
    return snapshot.matches(now)


async def current(workspace: Workspace, path: str) -> Fingerprint | None:
    """What the file holds now (the editor's buffer if open), ``None`` if it does not exist.

    Raises :class:`OSError` or :class:`ToolInputError` when it cannot be read.
    """
    try:
        data = (await workspace.read_document(path)).data
    except FileNotFoundError:
        return None
    return Fingerprint.of(data)


async def find_conflicts(workspace: Workspace, plans: Sequence[FilePlan]) -> list[FileProblem]:
    """The files that cannot be put back: changed by someone else, unreadable, or not recorded in full.

    Blob targets must have been read (:meth:`Checkpoints.filled`): one still unread was pruned.
    """
    problems = []
    for plan in plans:
        try:
            now = await current(workspace, plan.path)
        except (OSError, ToolInputError) as error:
            problems.append(FileProblem(plan.path, f"cannot be read ({error})"))
            continue
        if holds(plan.target, now):
            # Already as it must become: a change recorded whose write never landed (the server
            # stopped between the two, or the write failed), or one the user undid by hand.
            continue
        if plan.target is not None and not plan.target.restorable:
            problems.append(FileProblem(plan.path, not_recorded(plan.target)))
        elif not holds(plan.expected, now):
            problems.append(FileProblem(plan.path, _why_changed(plan.expected, now)))
    return problems


def rename_pairs(plans: Sequence[FilePlan]) -> list[tuple[str, str]]:
    """``(new path, old path)`` of each rename the plans undo: a file they delete whose content
    another file they bring back gets."""
    deleted = {plan.expected.key: plan.path for plan in plans if plan.target is None and plan.expected}
    pairs = []
    for plan in plans:
        if plan.expected is None and plan.target is not None:
            source = deleted.pop(plan.target.key, None)
            if source is not None:
                pairs.append((source, plan.path))
    return pairs


def whole_renames(
    problems: list[FileProblem], pairs: Sequence[tuple[str, str]], shown: Callable[[str], str]
) -> list[FileProblem]:
    """``problems`` and, for each rename one side of which cannot be put back, the other side: a
    rename is undone whole or not at all (never the old path back beside a new one kept)."""
    problems = list(problems)
    for new, old in pairs:
        stuck = {problem.path for problem in problems}
        for path, other in ((new, old), (old, new)):
            if other in stuck and path not in stuck:
                why = f"it goes back with {shown(other)} (a rename), which cannot be put back"
                problems.append(FileProblem(path, why))
    return problems


def not_recorded(snapshot: Snapshot) -> str:
    if snapshot.sha256 is None:
        return "its snapshot was pruned (the shadow repository's size bound), so it cannot be put back"
    if snapshot.size is not None and snapshot.size > MAX_RECORDED_BYTES:
        return (
            f"too large to have been recorded ({snapshot.size} bytes; files over 1 MiB are recorded as "
            "hashes only), so it cannot be put back"
        )
    return "not UTF-8 text, so only its hash was recorded and it cannot be put back"


def _why_changed(expected: Snapshot | None, now: Fingerprint | None) -> str:
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
            if holds(plan.target, await current(workspace, plan.path)):
                done.append(plan)  # already so (see find_conflicts)
                continue
            await _write(workspace, plan)
        except FileNotFoundError:
            done.append(plan)  # already gone
        except (OSError, ToolInputError) as error:
            failed.append(FileProblem(plan.path, f"could not be written ({error})"))
        else:
            done.append(plan)
    return done, failed


async def _write(workspace: Workspace, plan: FilePlan) -> None:
    target = plan.target
    if target is None:
        await workspace.delete_file(plan.path)
        return
    executable = target.mode == EXECUTABLE_MODE
    opened = str(workspace.resolve(plan.path)) in workspace.buffers()
    if target.text is not None and (opened or not executable):
        await workspace.write_text(plan.path, target.text)  # through the editor when it is open there
        return
    data = target.data if target.data is not None else (target.text or "").encode("utf-8")
    await workspace.write_bytes(plan.path, data, executable=executable)


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
            now = await current(workspace, path)
        except (OSError, ToolInputError) as error:
            lines.append(f"{display(workspace.root, path)}: cannot be read ({error})")
            continue
        if _is(now, item.get("target")):
            state = "reverted"
        elif _is(now, item.get("expected")):
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


def _is(now: Fingerprint | None, key: Any) -> bool:
    """Whether ``now`` is the content a rewind marker names (a blob id, ``sha256:HEX``, or, in files of
    earlier versions, the bare SHA-256)."""
    if now is None:
        return key is None
    return key in (now.blob, f"sha256:{now.sha256}", now.sha256)
