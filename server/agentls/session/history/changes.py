"""The net change of a span of a session (``agent/getChanges``), and plans to take part of it back.

The steps of the span (:meth:`Checkpoints.steps`) are folded per file into where it started and
where it ended; a file that ended as it started is not a change. A file deleted and another
added with the same content are one rename. Hunks are those of :mod:`agentls.tools.hunks`, so an
``agent/revertChanges`` of hunk ``i`` takes back the hunk ``agent/getChanges`` listed as ``i``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.protocol import ChangedFile, ChangeHunk
from agentls.session.history.checkpoints import Step
from agentls.session.history.file_changes import Snapshot
from agentls.session.history.rewind import FilePlan, action_of, display, in_order
from agentls.tools.hunks import compose, diff_hunks

REVERT = "agentls/revert"
"""The ``customType`` of the message that tells the model what an ``agent/revertChanges`` took back."""


@dataclass(frozen=True)
class NetChange:
    """One file's change over a span: its content before the span and after it (``None``: absent)."""

    path: str
    """Absolute."""
    before: Snapshot | None
    after: Snapshot | None
    by: tuple[str, ...]
    old_path: str | None = None
    """A rename: the path the content came from (whose own change is the deletion)."""

    def text(self, side: Snapshot | None) -> str | None:
        """The text of one side (``""`` for an absent one), ``None`` when it is binary or not recorded."""
        if side is None:
            return ""
        return side.text


def net_changes(steps: Sequence[Step]) -> list[NetChange]:
    """Each file's change over ``steps``, by path."""
    changes = []
    for path in dict.fromkeys(step.change.path for step in steps):
        mine = [step for step in steps if step.change.path == path]
        ordered = in_order([step.change for step in mine])
        before, after = ordered[0].before, ordered[-1].after
        if (before.key if before else None) == (after.key if after else None):
            continue
        by = tuple(dict.fromkeys(who for step in mine for who in step.by))
        changes.append(NetChange(path, before, after, by))
    return sorted(changes, key=lambda change: change.path)


def renames(changes: list[NetChange]) -> dict[str, str]:
    """Added path -> deleted path, for each file added with exactly the content of one deleted."""
    deleted: dict[str, str] = {}
    for change in changes:
        if change.after is None and change.before is not None:
            deleted.setdefault(change.before.key, change.path)
    pairs = {}
    for change in changes:
        if change.before is None and change.after is not None:
            source = deleted.pop(change.after.key, None)
            if source is not None:
                pairs[change.path] = source
    return pairs


def _status(change: NetChange, renamed_from: str | None) -> str:
    if renamed_from is not None:
        return "renamed"
    if change.before is None:
        return "added"
    return "deleted" if change.after is None else "modified"


async def describe(changes: list[NetChange], root: Path, with_text: bool) -> list[ChangedFile]:
    """``agent/getChanges``'s files (blob sides read already); a rename's deletion is folded into it."""
    pairs = renames(changes)
    sources = set(pairs.values())
    files = []
    for change in changes:
        if change.path in sources:
            continue
        renamed_from = pairs.get(change.path)
        before = change.before
        if renamed_from is not None:
            before = next(c.before for c in changes if c.path == renamed_from)
        old, new = change.text(before), change.text(change.after)
        shown = ChangedFile(
            path=display(root, change.path),
            uri=Path(change.path).as_uri(),
            status=_status(change, renamed_from),  # type: ignore[arg-type]
            old_path=display(root, renamed_from) if renamed_from else None,
            by=[who for who in change.by if who in ("write", "edit", "bash", "mcp", "tool", "user")],  # type: ignore[misc]
            hunks=[],
        )
        if old is None or new is None:
            unreadable = [s for s in (before, change.after) if s is not None and not s.restorable]
            if unreadable:
                shown.recorded = False
            else:
                shown.binary = True
        else:
            hunks = await asyncio.to_thread(diff_hunks, old, new)
            shown.hunks = [ChangeHunk.model_validate(hunk.wire()) for hunk in hunks]
            if with_text:
                shown.old_text = old if before is not None else None
                shown.new_text = new if change.after is not None else None
        files.append(shown)
    return files


class RevertError(ValueError):
    """A path or hunk of a revert that is not in the change: the message says which."""


@dataclass(frozen=True)
class RevertPlan:
    """What an ``agent/revertChanges`` does: a plan per file, the hunks each takes back, and the renames
    (new path, old path) whose two plans go together or not at all."""

    plans: list[FilePlan]
    taken: dict[str, list[int]]
    renames: list[tuple[str, str]]


def revert_plans(
    changes: list[NetChange], root: Path, files: Sequence[str] | None, hunks: dict[str, set[int]]
) -> RevertPlan:
    """The plans that take back ``files`` whole and the ``hunks`` (path -> indexes) of others; both empty:
    everything. Paths are as ``agent/getChanges`` shows them."""
    by_shown = {display(root, change.path): change for change in changes}
    pairs = renames(changes)
    for shown in [*(files or []), *hunks]:
        if shown not in by_shown or by_shown[shown].path in pairs.values():
            raise RevertError(f"{shown} is not among the files this span changed (see agent/getChanges)")
    wanted = list(files or []) if files or hunks else list(by_shown)
    plans: list[FilePlan] = []
    taken: dict[str, list[int]] = {}
    together: list[tuple[str, str]] = []
    for shown in wanted:
        change = by_shown[shown]
        if change.path in pairs.values():
            continue  # the deletion of a rename goes back with the added side
        plans.append(_whole(change))
        source = pairs.get(change.path)
        if source is not None:  # a rename reverted whole: the old path comes back too
            plans.append(_whole(next(c for c in changes if c.path == source)))
            together.append((change.path, source))
    for shown, indexes in hunks.items():
        change = by_shown[shown]
        if change.path in pairs:
            raise RevertError(f"{shown} was renamed: revert it whole (files), not by hunks")
        old, new = change.text(change.before), change.text(change.after)
        if old is None or new is None:
            recorded = all(s is None or s.restorable for s in (change.before, change.after))
            why = "binary" if recorded else "not recorded"
            raise RevertError(f"{shown} has no hunks to revert ({why}): revert it whole (files)")
        count = len(diff_hunks(old, new))
        bad = sorted(i for i in indexes if i >= count)
        if bad:
            raise RevertError(f"{shown} has {count} hunks (0 to {count - 1}); there is no hunk {bad[0]}")
        text = compose(old, new, set(range(count)) - indexes)
        target = Snapshot.of(text.encode("utf-8", errors="surrogatepass")) if change.before or text else None
        plans.append(FilePlan(change.path, change.after, target, action_of(change.after, target)))
        taken[change.path] = sorted(indexes)
    return RevertPlan(plans, taken, together)


def _whole(change: NetChange) -> FilePlan:
    return FilePlan(change.path, change.after, change.before, action_of(change.after, change.before))
