"""Project instructions: ``AGENTS.md`` / ``CLAUDE.md`` files, found as Pi's ``loadProjectContextFiles`` does.

Each folder contributes at most one file, the first of :data:`CANDIDATES` that is
there. The global one comes from the data folder (Pi's agent folder); then every
folder from the filesystem root down to the session's folder, so that the nearest
instructions come last and win where they disagree. A path is loaded once.

A linked git worktree nested inside its main checkout (``repo/.worktrees/feature``)
has its own copy of the repository's ``AGENTS.md``; the main checkout's copy, an
ancestor of the worktree, is then left out, as Pi does, so the same instructions do
not appear twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agentls.session.resource_files import ResourceFileError, ResourceReader, read_resource_text

CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""The names looked for in each folder, in order of preference."""


@dataclass(frozen=True)
class ContextFile:
    path: Path
    content: str


def context_reader() -> ResourceReader[str]:
    """A reader of context files: their text as it is."""
    return ResourceReader(lambda path, text: text)


def load_context_files(cwd: Path, data_dir: Path, reader: ResourceReader[str]) -> list[ContextFile]:
    """The global context file, then those of ``cwd`` and its ancestors, root first."""
    files: list[ContextFile] = []
    seen: set[Path] = set()
    global_file = _from_folder(data_dir, reader)
    if global_file is not None:
        files.append(global_file)
        seen.add(global_file.path)
    shadowed = _shadowed_by_worktree(cwd, reader)
    ancestors: list[ContextFile] = []
    for folder in (cwd, *cwd.parents):
        found = _from_folder(folder, reader)
        if found is not None and found.path not in seen and _real(found.path) != shadowed:
            ancestors.insert(0, found)
            seen.add(found.path)
    return files + ancestors


def _from_folder(folder: Path, reader: ResourceReader[str]) -> ContextFile | None:
    for name in CANDIDATES:
        path = folder / name
        content = reader.read(path)
        if content is not None:
            return ContextFile(path, content)
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
        for folder in (cwd, *cwd.parents):
            dot_git = folder / ".git"
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
