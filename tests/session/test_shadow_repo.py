"""The shadow repository of a folder, as two sessions of that folder use it at once."""

from __future__ import annotations

import threading
from pathlib import Path

from agentls.session.history.shadow_repo import ShadowRepo


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
