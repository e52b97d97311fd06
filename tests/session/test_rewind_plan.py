"""What a move in the session tree does to files (``plan_files``), on trees built by hand."""

from __future__ import annotations

import asyncio

from agentls.ai import user_message
from agentls.session.history.checkpoints import Checkpoints, tool_names
from agentls.session.history.file_changes import FileChange, FileChanges, Snapshot
from agentls.session.history.rewind import FilePlan, plan_files
from agentls.session.history.tree import FILE_CHANGES, SessionTree


def plan(tree: SessionTree, from_id: str | None, to_id: str | None, *, redo: bool) -> list[FilePlan]:
    """What the session's move does: the steps of the branch left (and gone to), planned."""
    checkpoints, names = Checkpoints(None, "off", None), tool_names(tree)
    undo = asyncio.run(checkpoints.steps(tree.left_behind(from_id, to_id), names))
    again = asyncio.run(checkpoints.steps(tree.left_behind(to_id, from_id), names)) if redo else []
    return plan_files([step.change for step in undo], [step.change for step in again])


def snap(text: str) -> Snapshot:
    return Snapshot.of(text.encode())


def change(path: str, before: str | None, after: str) -> FileChange:
    return FileChange(path, snap(before) if before is not None else None, snap(after))


def grow(tree: SessionTree, *changes: FileChange) -> str:
    """A user message, then (if any) a file-change record below it; the id of the message."""
    message = tree.grow("message", 1, message=user_message("go")).id
    if changes:
        tree.grow("custom", 1, custom_type=FILE_CHANGES, data=FileChanges("call", tuple(changes)))
    return message


def test_a_rewind_puts_each_file_back_as_it_was_before_the_first_change_after_the_entry() -> None:
    tree = SessionTree()
    start = grow(tree)
    grow(tree, change("/a", "a0", "a1"), change("/new", None, "n1"))
    grow(tree, change("/a", "a1", "a2"))
    [a, new] = plan(tree, tree.leaf_id, start, redo=False)
    assert (a.path, a.expected, a.target, a.action) == ("/a", snap("a2"), snap("a0"), "reverted")
    assert (new.path, new.expected, new.target, new.action) == ("/new", snap("n1"), None, "deleted")


def test_changes_recorded_out_of_order_are_put_in_the_order_they_happened() -> None:
    tree = SessionTree()
    start = grow(tree)
    # two parallel edits of one file whose results were written in the other order
    grow(tree, change("/a", "a1", "a2"), change("/a", "a0", "a1"))
    [a] = plan(tree, tree.leaf_id, start, redo=False)
    assert (a.expected, a.target) == (snap("a2"), snap("a0"))


def test_a_switch_undoes_one_branch_and_redoes_the_other_leaving_files_that_end_the_same() -> None:
    tree = SessionTree()
    fork = grow(tree)
    grow(tree, change("/a", "a0", "left"), change("/same", "s0", "s1"))
    left = tree.leaf_id
    tree.leaf_id = fork
    grow(tree, change("/a", "a0", "right"), change("/same", "s0", "s1"), change("/b", None, "b1"))
    right = tree.leaf_id
    plans = {plan.path: plan for plan in plan(tree, left, right, redo=True)}
    assert set(plans) == {"/a", "/b"}  # /same ends as it is
    assert (plans["/a"].expected, plans["/a"].target, plans["/a"].action) == (
        snap("left"),
        snap("right"),
        "applied",
    )
    assert (plans["/b"].expected, plans["/b"].target, plans["/b"].action) == (None, snap("b1"), "applied")
    assert plan(tree, left, right, redo=False)[0].target == snap("a0")  # without redo: only undone


def test_nothing_to_do_on_the_path_itself() -> None:
    tree = SessionTree()
    grow(tree, change("/a", "a0", "a1"))
    assert plan(tree, tree.leaf_id, tree.leaf_id, redo=True) == []
    assert [p.path for p in plan(tree, tree.leaf_id, None, redo=False)] == ["/a"]
