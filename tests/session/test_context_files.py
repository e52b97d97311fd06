"""Project instructions: which ``AGENTS.md`` / ``CLAUDE.md`` files are found, in which order, how safely."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from agentls.session.instructions.context_files import context_reader, load_context_files
from agentls.session.instructions.resource_files import MAX_RESOURCE_BYTES, ResourceReader
from agentls.session.instructions.resources import ProjectResources


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def found(
    tree: Path, cwd: Path, data_dir: Path, reader: ResourceReader[str] | None = None
) -> list[tuple[Path, str]]:
    """The files found with ``tree`` as the home folder (so that every folder up to it is read)."""
    files = load_context_files(cwd, data_dir, reader or context_reader(), tree)
    return [(file.path, file.content) for file in files if file.path.is_relative_to(tree)]


def test_the_global_file_comes_first_then_each_folder_from_the_root_down(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cwd = tmp_path / "repo" / "pkg" / "sub"
    global_file = write(data / "AGENTS.md", "global")
    top = write(tmp_path / "repo" / "AGENTS.md", "repo")
    middle = write(tmp_path / "repo" / "pkg" / "CLAUDE.md", "pkg")
    write(cwd / "AGENTS.md", "sub")
    nearest = write(cwd / "AGENTS.override.md", "sub override")  # preferred over AGENTS.md
    write(cwd / "CLAUDE.md", "never read: the folder has an AGENTS file")
    assert found(tmp_path, cwd, data) == [
        (global_file, "global"),
        (top, "repo"),
        (middle, "pkg"),
        (nearest, "sub override"),
    ]


def test_a_folder_that_is_also_the_global_folder_is_read_once(tmp_path: Path) -> None:
    file = write(tmp_path / "AGENTS.md", "both")
    assert found(tmp_path, tmp_path, tmp_path) == [(file, "both")]


def test_unusable_files_are_skipped_with_one_warning_per_version(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "agentls.session")
    binary = tmp_path / "binary"
    (binary / "AGENTS.md").parent.mkdir()
    (binary / "AGENTS.md").write_bytes(b"caf\xe9\n")
    fallback = write(binary / "CLAUDE.md", "the next candidate")
    large = tmp_path / "binary" / "large"
    write(large / "AGENTS.md", "x" * (MAX_RESOURCE_BYTES + 1))
    folder = large / "folder"
    (folder / "AGENTS.md").mkdir(parents=True)
    fifo = folder / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "AGENTS.md")  # a plain open would wait for a writer forever
    reader = context_reader()

    assert found(tmp_path, fifo, tmp_path / "no-data", reader) == [(fallback, "the next candidate")]
    warnings = [r.getMessage() for r in caplog.records]  # the walk goes up from the session's folder
    assert len(warnings) == 4
    assert all("cannot be read (not a regular file); it is skipped" in w for w in warnings[:2])
    assert warnings[2] == f"{large / 'AGENTS.md'} is larger than {MAX_RESOURCE_BYTES} bytes; it is skipped"
    assert warnings[3] == f"{binary / 'AGENTS.md'} is not UTF-8 text (byte 3); it is skipped"

    caplog.clear()
    reader.sweep()
    assert found(tmp_path, fifo, tmp_path / "no-data", reader) == [(fallback, "the next candidate")]
    assert caplog.records == []  # the same versions: nothing new to say

    (binary / "AGENTS.md").write_bytes(b"still \xff not text, and longer")
    reader.sweep()
    found(tmp_path, fifo, tmp_path / "no-data", reader)
    assert [r.getMessage() for r in caplog.records] == [
        f"{binary / 'AGENTS.md'} is not UTF-8 text (byte 6); it is skipped"
    ]


def test_a_changed_file_is_read_again_and_an_unchanged_one_is_not(tmp_path: Path) -> None:
    parsed: list[str] = []

    def parse(path: Path, text: str) -> str:
        parsed.append(text)
        return text

    reader = ResourceReader(parse)
    file = write(tmp_path / "AGENTS.md", "first")
    assert [reader.read(file), reader.read(file)] == ["first", "first"]
    reader.sweep()
    assert reader.read(file) == "first"
    assert parsed == ["first"]
    file.write_text("second, longer", encoding="utf-8")
    reader.sweep()
    assert reader.read(file) == "second, longer"
    file.unlink()
    reader.sweep()
    assert reader.read(file) is None
    assert parsed == ["first", "second, longer"]


def test_context_files_can_be_turned_off(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "instructions")
    write(tmp_path / "data" / "AGENTS.md", "global instructions")
    on = ProjectResources(tmp_path, tmp_path / "data", home=tmp_path / "home").refresh()
    assert [f.content for f in on.context_files if f.path.is_relative_to(tmp_path)] == [
        "global instructions",
        "instructions",
    ]
    off = ProjectResources(tmp_path, tmp_path / "data", context_files=False, home=tmp_path / "home")
    assert off.refresh().context_files == ()


def test_a_nested_worktree_replaces_the_main_checkouts_file(tmp_path: Path) -> None:
    """``repo/.worktrees/feature`` is a linked worktree of ``repo``: its AGENTS.md is the repository's."""
    repo = tmp_path / "repo"
    write(repo / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(repo / ".git" / "worktrees" / "feature" / "HEAD", "ref: refs/heads/feature\n")
    write(repo / ".git" / "worktrees" / "feature" / "commondir", "../..\n")
    write(repo / "AGENTS.md", "main checkout's copy")
    feature = repo / ".worktrees" / "feature"
    write(feature / ".git", f"gitdir: {repo / '.git' / 'worktrees' / 'feature'}\n")
    own = write(feature / "AGENTS.md", "the worktree's copy")
    (feature / "src").mkdir()
    assert found(tmp_path, feature / "src", tmp_path / "data") == [(own, "the worktree's copy")]
    # an ordinary checkout keeps the files above it
    plain = tmp_path / "plain"
    write(plain / ".git" / "HEAD", "ref: refs/heads/main\n")
    above = write(tmp_path / "AGENTS.md", "above")
    inner = write(plain / "AGENTS.md", "inner")
    assert found(tmp_path, plain, tmp_path / "data") == [(above, "above"), (inner, "inner")]


def test_no_folder_above_the_home_folder_is_read(tmp_path: Path) -> None:
    """Pi reads up to ``/``; agentls stops at the home folder (``/home`` and ``/`` are nobody's project)."""
    home = tmp_path / "home"
    write(tmp_path / "AGENTS.md", "above the home folder")
    at_home = write(home / "AGENTS.md", "the home folder's")
    project = write(home / "work" / "app" / "AGENTS.md", "the project's")
    files = load_context_files(home / "work" / "app", tmp_path / "data", context_reader(), home)
    assert [(f.path, f.project) for f in files] == [(at_home, True), (project, True)]


def test_outside_the_home_folder_only_the_repository_is_read(tmp_path: Path) -> None:
    """A folder outside home: up to its git repository's root, or the folder alone outside a repository."""
    home = tmp_path / "home"
    write(tmp_path / "AGENTS.md", "in /tmp, say")
    repo = tmp_path / "repo"
    write(repo / ".git" / "HEAD", "ref: refs/heads/main\n")
    top = write(repo / "AGENTS.md", "the repository's")
    nested = write(repo / "pkg" / "AGENTS.md", "the package's")
    data = tmp_path / "data"
    in_repo = load_context_files(repo / "pkg", data, context_reader(), home)
    assert [f.path for f in in_repo] == [top, nested]
    loose = write(tmp_path / "loose" / "AGENTS.md", "no repository")
    assert [f.path for f in load_context_files(loose.parent, data, context_reader(), home)] == [loose]
