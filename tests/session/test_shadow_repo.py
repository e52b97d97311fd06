"""The shadow repository of a folder, as two sessions of that folder use it at once."""

from __future__ import annotations

import os
import random
import subprocess
import threading
from pathlib import Path

from agentls.session.history.shadow_repo import COUNT_EVERY, Bounds, ShadowRepo


def test_two_sessions_of_one_folder_make_its_repository_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    git_dir = tmp_path / "data" / "checkpoints" / "f" / "git"
    repos = [ShadowRepo(git_dir, folder) for _ in range(4)]  # each session has its own
    start = threading.Barrier(len(repos))
    trees: list[str] = []
    errors: list[BaseException] = []

    def snapshot(repo: ShadowRepo) -> None:
        start.wait()  # all of them make the repository at the same moment
        try:
            trees.append(repo.snapshot())
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=snapshot, args=(repo,)) for repo in repos]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(trees)) == 1  # the same folder, the same snapshot
    (folder / "a.txt").write_text("two\n")
    [change] = repos[0].diff(trees[0], repos[1].snapshot())
    assert change.path == "a.txt"


def _git(repo: ShadowRepo, *args: str) -> str:
    env = {**os.environ, "GIT_DIR": str(repo.git_dir)}
    return subprocess.run(["git", *args], env=env, capture_output=True, check=True, text=True).stdout


def _store_and_refs(repo: ShadowRepo) -> tuple[int, list[str]]:
    """What ``git count-objects`` says the objects take, and the trees the snapshots' refs keep."""
    sizes = dict(line.split(": ") for line in _git(repo, "count-objects", "-v").splitlines())
    refs = _git(repo, "for-each-ref", "--format=%(objectname)", "refs/agentls/").split()
    return (int(sizes["size"]) + int(sizes["size-pack"])) * 1024, refs


def test_snapshots_past_the_store_bound_prune_the_oldest_and_keep_the_newest(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    bound = 600 * 1024
    repo = ShadowRepo(tmp_path / "git", folder, bounds=Bounds(max_store_bytes=bound))
    trees = []
    for step in range(12):  # 100 KiB that does not compress, new at each step
        (folder / f"data-{step}.bin").write_bytes(random.Random(step).randbytes(100 * 1024))
        (folder / f"data-{step - 1}.bin").unlink(missing_ok=True)
        trees.append(repo.snapshot())
        store, refs = _store_and_refs(repo)
        assert store <= bound or len(refs) <= 2, (step, store, refs)
    store, refs = _store_and_refs(repo)
    assert trees[-1] in refs and trees[-2] in refs  # the newest stay, readable
    assert len(refs) < len(trees)  # the oldest went
    assert repo.diff(trees[-2], trees[-1]) != []


def test_a_folder_that_stays_small_is_never_pruned_however_many_snapshots(tmp_path: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    repo = ShadowRepo(tmp_path / "git", folder, bounds=Bounds(max_store_bytes=10 * 1024 * 1024))
    trees = []
    for step in range(COUNT_EVERY + 3):  # past the snapshots after which the objects are counted again
        (folder / "a.txt").write_text(f"step {step}\n")
        trees.append(repo.snapshot())
    _, refs = _store_and_refs(repo)
    assert sorted(refs) == sorted(trees)


def test_a_snapshot_after_another_sessions_sees_the_index_that_session_wrote(tmp_path: Path) -> None:
    """Nothing changed since this session's last snapshot as far as the index can tell, but another
    session of the folder wrote the index meanwhile: the tree is the index's, not the one before."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    git_dir = tmp_path / "git"
    mine, theirs = ShadowRepo(git_dir, folder), ShadowRepo(git_dir, folder)
    before = mine.snapshot()
    assert mine.snapshot() == before  # nothing changed
    (folder / "a.txt").write_text("two\n")
    after = theirs.snapshot()
    assert after != before
    assert mine.snapshot() == after  # the work tree is the index now: nothing for mine to add
    [change] = mine.diff(before, after)
    assert change.path == "a.txt"
    (folder / "a.txt").write_text("one\n")
    assert mine.snapshot() == before
