"""Project instructions: ``AGENTS.md`` / ``CLAUDE.md`` files, found as Pi's ``loadProjectContextFiles`` does.

Each folder contributes at most one file, the first of :data:`CANDIDATES` that is
there. The global one comes from the data folder (Pi's agent folder); then the
project's, from the top of :func:`project_folders` down to the session's folder, so that
the nearest instructions come last and win where they disagree. A path is loaded once.

Unlike Pi, which reads every folder up to ``/``, the project's folders end at the user's
home folder (a session in ``~/work/app`` reads ``~/work/app``, ``~/work`` and ``~``), or,
for a folder outside the home folder, at its git repository's root (only the folder
itself outside a repository): a file in ``/tmp`` or ``/`` is nobody's project. The
project's files are loaded only once the user trusts the folder
(:mod:`agentls.session.policy.project_trust`).

A linked git worktree nested inside its main checkout (``repo/.worktrees/feature``)
has its own copy of the repository's ``AGENTS.md``; the main checkout's copy, an
ancestor of the worktree, is then left out, as Pi does, so the same instructions do
not appear twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agentls.session.instructions.resource_files import (
    ResourceFileError,
    ResourceReader,
    child,
    read_resource_text,
    up_from,
)

CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""The names looked for in each folder, in order of preference."""


@dataclass(frozen=True)
class ContextFile:
    path: Path
    content: str
    project: bool = False
    """From the project's folders (not the data folder): loaded once the folder is trusted."""


def context_reader() -> ResourceReader[str]:
    """A reader of context files: their text as it is."""
    return ResourceReader(lambda path, text: text)


def load_context_files(
    cwd: Path, data_dir: Path, reader: ResourceReader[str], home: Path
) -> list[ContextFile]:
    """The global context file, then the project's (``project=True``), the topmost folder first."""
    files: list[ContextFile] = []
    seen: set[Path] = set()
    global_file = _from_folder(data_dir, reader)
    if global_file is not None:
        files.append(global_file)
        seen.add(global_file.path)
    shadowed = _shadowed_by_worktree(cwd, reader)
    ancestors: list[ContextFile] = []
    for folder in project_folders(cwd, home):
        found = _from_folder(folder, reader, project=True)
        if found is not None and found.path not in seen and _real(found.path) != shadowed:
            ancestors.insert(0, found)
            seen.add(found.path)
    return files + ancestors


def project_folders(cwd: Path, home: Path) -> list[Path]:
    """``cwd`` and the folders above it whose context files are the project's, nearest first.

    Up to ``home`` when ``cwd`` is in it; else up to the git repository's root (the first
    folder holding ``.git``), or ``cwd`` alone outside a repository.
    """
    if cwd == home or home in cwd.parents:
        return [cwd, *(folder for folder in cwd.parents if folder == home or home in folder.parents)]
    folders = []
    for folder in up_from(cwd):
        folders.append(folder)
        if os.path.lexists(child(folder, ".git")):
            return folders
    return [cwd]


def _from_folder(folder: Path, reader: ResourceReader[str], *, project: bool = False) -> ContextFile | None:
    for name in CANDIDATES:
        path = child(folder, name)
        content = reader.read(path)
        if content is not None:
            return ContextFile(path, content, project)
    return None


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path


@dataclass(frozen=True)
class _GitPaths:
    worktree: Path
    common_git_dir: Path


def _git_paths(cwd: Path) -> _GitPaths | None:
    """The checkout holding ``cwd`` and its repository's common git folder (Pi's ``findGitPaths``)."""
    try:
        for folder in up_from(cwd):
            dot_git = child(folder, ".git")
            if dot_git.is_dir():
                return _GitPaths(folder, dot_git) if (dot_git / "HEAD").exists() else None
            if not dot_git.is_file():
                continue
            pointer = read_resource_text(dot_git)[0].strip()
            if not pointer.startswith("gitdir: "):
                continue
            git_dir = (folder / pointer[len("gitdir: ") :].strip()).resolve()
            if not (git_dir / "HEAD").exists():
                return None
            if (git_dir / "commondir").exists():
                common, _ = read_resource_text(git_dir / "commondir")
                git_dir = (git_dir / common.strip()).resolve()
            return _GitPaths(folder, git_dir)
    except (OSError, RuntimeError, ResourceFileError):  # RuntimeError: a symlink loop
        return None
    return None


def _shadowed_by_worktree(cwd: Path, reader: ResourceReader[str]) -> Path | None:
    """The main checkout's context file that a nested linked worktree's own copy replaces, if any."""
    paths = _git_paths(cwd)
    if paths is None:
        return None
    common, worktree = _real(paths.common_git_dir), _real(paths.worktree)
    main = common.parent
    # Not nested in the main checkout (an ordinary repository, a sibling worktree), or a bare
    # layout or a submodule, whose common folder is not the main checkout's .git.
    if main not in worktree.parents or _real(main / ".git") != common:
        return None
    own = _from_folder(paths.worktree, reader)
    return _real(main / own.path.name) if own is not None else None
