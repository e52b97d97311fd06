"""The folder walk of ``ls``, ``find`` and ``grep``: each folder opened from its parent's descriptor.

Opening every folder (and file) of a tree by its path from the workspace root costs a
walk of its depth each time: quadratic in a deep tree (2,100 levels took minutes), and a
path longer than ``PATH_MAX`` cannot be opened by name at all. Here the top folder is
reached once, from the descriptor of the real workspace root one component at a time
without following symlinks (:meth:`Tree.open`); below it each folder is opened relative
to its parent's descriptor with ``O_NOFOLLOW``, so a walk costs what its entries cost.
The descriptors of the folders above the current one stay open down to
:data:`OPEN_DEPTH` levels; below that only the current folder's is open, and going back
up opens ``..`` and checks that it is the folder the walk came from (device and inode),
as ``fts(3)`` does; a tree changed under the walk in a way that breaks this ends the
walk, with a note.

What one call may spend is bounded (:class:`Budget`): the entries it reads, the depth it
descends and its time; the abort signal and the time are checked at every folder and
every run of a folder's files it yields (``grep`` checks them again for each file it
reads). Nothing here opens a FIFO, socket or device: the walk keeps only what its folder
listing says is a regular file, and files are opened with ``O_NONBLOCK`` and checked
with ``fstat`` before use.
The work runs on the search tools' own threads (:func:`run_search`), never the event
loop's shared pool, and an abort answers at once while the thread stops at its next check.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import heapq
import itertools
import os
import stat
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

from agentls.ai import AbortSignal
from agentls.ai.abort import AbortError, unless_aborted
from agentls.tools import walk_split
from agentls.tools.files import is_within
from agentls.tools.ignore import GitIgnore
from agentls.tools.matching import Glob
from agentls.tools.workspace import DiskWorkspace, ToolInputError

T = TypeVar("T")

MAX_ENTRIES = 200_000
"""Folder entries one call may read (files and folders, ignored ones included)."""
MAX_DEPTH = 256
"""Folder levels below the searched folder that a walk enters."""
MAX_SECONDS = 30.0
"""How long one call may search."""
GITIGNORE_MAX_BYTES = 1024 * 1024
"""The part of a ``.gitignore`` that is read."""
OPEN_DEPTH = 16
"""The levels below the searched folder whose descriptors stay open while the walk is deeper (deeper ones
are reopened as ``..`` on the way back up): at most this many and one more per walk."""

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _NONBLOCK
_FILE = os.O_RDONLY | os.O_NOFOLLOW | _NONBLOCK
_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agentls-search")
"""The search tools' threads: a long search waits here, not in the pool the rest of the server shares."""


async def run_search(function: Callable[[], T], signal: AbortSignal | None) -> T:
    """``function()`` on a search thread; :class:`AbortError` at once when ``signal`` aborts."""
    return await unless_aborted(asyncio.get_running_loop().run_in_executor(_WORKERS, function), signal)


@dataclass(frozen=True)
class Bounds:
    """What one ``ls``, ``find`` or ``grep`` call may spend."""

    entries: int = MAX_ENTRIES
    depth: int = MAX_DEPTH
    seconds: float = MAX_SECONDS


DEFAULT_BOUNDS = Bounds()


class Budget:
    """What one call has spent, and which bounds it hit.

    ``out_of_entries``: no more folder entries are read (what was listed is still
    used); ``out_of_time``: the call stops; ``too_deep`` counts the folders left out for
    being deeper than the depth bound; ``changed``: the tree changed under the walk so
    that it could not go on.
    """

    def __init__(self, bounds: Bounds, signal: AbortSignal | None) -> None:
        self.bounds = bounds
        self._signal = signal
        self._deadline = time.monotonic() + bounds.seconds
        self.entries = 0
        self.out_of_entries = False
        self.out_of_time = False
        self.too_deep = 0
        self.changed = False

    def running(self) -> bool:
        """Whether the call may go on (its time is not up). Raises :class:`AbortError` on abort."""
        if self._signal is not None and self._signal.aborted:
            raise AbortError("Operation aborted")
        if not self.out_of_time and time.monotonic() > self._deadline:
            self.out_of_time = True
        return not self.out_of_time

    def read_entries(self, entries: Iterator[os.DirEntry[str]]) -> list[os.DirEntry[str]]:
        """As many of a folder's ``entries`` as the entries bound leaves, counted (none when time is up)."""
        if not self.running() or self.out_of_entries:
            return []
        left = self.bounds.entries - self.entries
        read = list(itertools.islice(entries, left))
        self.entries += len(read)
        if len(read) == left and next(entries, None) is not None:
            self.entries += 1
            self.out_of_entries = True
        return read

    def hit(self) -> list[str]:
        """The bounds hit, for ``details.boundsHit``: ``entries``, ``time``, ``depth``, ``changed``."""
        flags = {
            "entries": self.out_of_entries,
            "time": self.out_of_time,
            "depth": self.too_deep > 0,
            "changed": self.changed,
        }
        return [name for name, hit in flags.items() if hit]

    def notes(self) -> list[str]:
        """One line for each bound hit, for the result's text."""
        notes: list[str] = []
        if self.out_of_entries:
            notes.append(
                f"[Stopped after reading {self.bounds.entries:,} folder entries, the most one call may read: "
                "the results are incomplete. Search a narrower path]"
            )
        if self.out_of_time:
            notes.append(
                f"[Stopped after {self.bounds.seconds:g} s, the longest one call may search: "
                "the results are incomplete. Search a narrower path, or use a glob]"
            )
        if self.too_deep:
            count = f"{self.too_deep} folder{'s' if self.too_deep > 1 else ''}"
            notes.append(
                f"[{count} more than {self.bounds.depth} levels deep not searched. "
                "To search one, pass a folder at that depth as path]"
            )
        if self.changed:
            notes.append("[The folders changed while they were searched: the results may be incomplete]")
        return notes


class WalkFile(NamedTuple):
    """A file the walk found, or an open document that is not on disk."""

    relative: str
    """Its ``/``-separated path relative to the searched folder (as the tools show it)."""
    absolute: str
    name: str
    folder: int | None = None
    """The descriptor of its folder: valid while the walk waits at this file."""
    target: str | None = None
    """The path it is opened by, from the workspace root, when not through ``folder``: for a symlink,
    the real path it leads to (inside the workspace); for a file of a folder a helper walked, its own."""


@dataclass
class _Folder:
    """A folder of the walk's current chain, with the files and subfolders it has left to visit."""

    fd: int | None
    """Open while the walk is in it, and kept open below it down to :data:`OPEN_DEPTH` levels."""
    identity: tuple[int, int]
    relative: str
    depth: int
    rules: GitIgnore
    files: list[str]
    """The names of the files it keeps, sorted."""
    folders: list[str]
    """The subfolders it enters, each as its name and ``/``, sorted: merged with ``files``, the order of
    sorted relative paths."""
    targets: dict[str, str]
    """The real paths of the symlinks among ``files``."""
    next_file: int = 0
    next_folder: int = 0


@dataclass(frozen=True)
class _Scan:
    """What every folder of one walk is scanned with."""

    top: str
    prefix: str
    """The searched folder's path from the workspace root (``""`` or ``"a/b/"``), for ``.gitignore``."""
    glob: Glob | None
    budget: Budget


def _identity(fd: int) -> tuple[int, int]:
    result = os.fstat(fd)
    return result.st_dev, result.st_ino


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a symlink swapped in while it was opened"


def _read_regular(fd: int, limit: int) -> bytes | None:
    """Up to ``limit + 1`` bytes of the open ``fd`` if it is a regular file (``None`` if not); closes it."""
    try:
        result = os.fstat(fd)
        if not stat.S_ISREG(result.st_mode):
            return None
        chunks: list[bytes] = []
        want, size = min(result.st_size, limit) + 1, 0  # one more: to tell a file over the limit
        while size <= limit:
            asked = min(want, limit + 1 - size)
            chunk = os.read(fd, asked)
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < asked:  # a regular file's end
                break
            want = 1 << 16  # it grew since fstat
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


SPLIT_WORTH = 4
"""How many times the split time the helper's part of a walk must look to take for a walk to fork one."""


class _Split:
    """When one walk forks a helper (:mod:`~agentls.tools.walk_split`), for which folder, and what it takes
    from it: a subfolder the helper walked completely, if it fits in the entries bound where the walk is
    (else the walk reads it itself, and stops where one walk would have stopped)."""

    def __init__(self, after: float) -> None:
        self._after = after
        self._started = time.monotonic()
        self._helper: walk_split.Helper | None = None
        self._parent: _Folder | None = None

    def walked(
        self,
        chain: list[_Folder],
        folder: _Folder,
        scan: _Scan,
        walk_one: Callable[[_Folder, int, _Scan], walk_split.Walked | None],
    ) -> list[walk_split.Run] | None:
        """The runs of ``folder``'s subfolder the walk is about to enter, if the helper walked it; counted
        in the budget. Forks the helper first when the walk has run long enough."""
        if self._parent is None:
            elapsed = time.monotonic() - self._started
            if elapsed >= self._after:
                self._fork(chain, scan, walk_one, elapsed)
            return None
        if folder is not self._parent or self._helper is None:
            return None
        walked = self._helper.walked(folder.next_folder - 1)
        budget = scan.budget
        if walked is None or budget.entries + walked.entries > budget.bounds.entries:
            return None
        budget.entries += walked.entries
        budget.too_deep += walked.too_deep
        return walked.runs

    def _fork(
        self,
        chain: list[_Folder],
        scan: _Scan,
        walk_one: Callable[[_Folder, int, _Scan], walk_split.Walked | None],
        elapsed: float,
    ) -> None:
        """A helper for the subfolders left in the outermost folder of ``chain`` that has two or more left
        (and is open, at most :data:`OPEN_DEPTH` levels deep and not at the depth bound), if their walk
        looks long enough to pay for a fork and its copied pages (a few milliseconds): at least
        :data:`SPLIT_WORTH` times the split time, the time so far shared out over the subfolders begun
        (no guess before one is done)."""
        depth = min(OPEN_DEPTH, scan.budget.bounds.depth)
        parent = next((f for f in chain if len(f.folders) - f.next_folder >= 2), None)
        if parent is None or parent.depth >= depth or parent.fd is None:
            return
        done, share = 0.0, 1.0  # how much of the walk is done, and how much the helper would take
        for folder in reversed(chain):
            done = (folder.next_folder - 1 + done) / len(folder.folders) if folder.folders else done
            if folder is parent:
                share = (len(folder.folders) - folder.next_folder) / len(folder.folders)
            elif folder.depth < parent.depth:
                share /= len(folder.folders)
        if self._after and (done <= 0 or elapsed / done * share < SPLIT_WORTH * self._after):
            return  # (split time 0: at once)
        self._parent = parent
        self._helper = walk_split.Helper.start(
            parent.next_folder, len(parent.folders), parent.fd, lambda index: walk_one(parent, index, scan)
        )

    def close(self) -> None:
        if self._helper is not None:
            self._helper.close()


class Tree:
    """Where the walks of one workspace may go: under its real root (anywhere if it allows outside paths).

    Never into the workspace's protected folders (agentls's data folder), which walks
    recognise by device and inode, however they are reached. Make one for each call:
    it reads the protected folders when it is made.
    """

    def __init__(self, workspace: DiskWorkspace) -> None:
        self._root = os.path.realpath(workspace.root)
        self._top = os.path.abspath(os.sep) if workspace.allow_outside else self._root
        self._protected = [os.path.realpath(folder) for folder in workspace.protected]
        self._protected_ids: set[tuple[int, int]] = set()
        for folder in self._protected:
            try:
                result = os.stat(folder)
            except OSError:
                continue
            self._protected_ids.add((result.st_dev, result.st_ino))

    def open(self, path: Path, shown: str) -> int:
        """A descriptor of the folder or regular file at ``path`` (from ``resolve``), checked as opened.

        ``path`` is resolved and then walked from the real root's descriptor without
        following symlinks, so one swapped in since cannot lead out. Raises
        :class:`ToolInputError` (naming ``shown``) for a missing path, a FIFO, socket or
        device (never opened), or a path out of the workspace.
        """
        real = os.path.realpath(path)
        if not is_within(real, self._top):
            raise ToolInputError(
                f"path {shown} resolves through a symlink to {real}, which is outside the workspace; "
                "only files inside the workspace can be used"
            )
        parts = [] if real == self._top else os.path.relpath(real, self._top).split(os.sep)
        fd = os.open(self._top, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for index, part in enumerate(parts):
                last = index == len(parts) - 1
                if last:
                    mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                        raise ToolInputError(
                            f"{shown} is {_kind(mode)}, not a file or folder: only regular files and "
                            "folders can be searched"
                        )
                child = os.open(part, _FILE if last else _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = child
        except (FileNotFoundError, NotADirectoryError):
            os.close(fd)
            raise ToolInputError(f"Path not found: {shown}") from None
        except OSError as error:
            os.close(fd)
            raise ToolInputError(f"Cannot open {shown}: {error.strerror or error}") from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_folder(self, path: Path, shown: str) -> int:
        """:meth:`open` for a folder: ``Not a directory`` for anything else."""
        fd = self.open(path, shown)
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            os.close(fd)
            raise ToolInputError(f"Not a directory: {shown}")
        return fd

    def read_file(self, file: WalkFile, limit: int) -> bytes | None:
        """Up to ``limit + 1`` bytes of ``file``; ``None`` if it is not (now) a regular file or unreadable."""
        try:
            if file.target is not None:
                fd = self.open(Path(file.target), file.relative)
            elif file.folder is not None:
                fd = os.open(file.name, _FILE, dir_fd=file.folder)
            else:
                return None
            return _read_regular(fd, limit)
        except (OSError, ToolInputError):
            return None

    def ancestor_ignores(self, path: Path) -> tuple[GitIgnore, str]:
        """The ``.gitignore`` rules from the workspace root down to the folder ``path``'s parent.

        Returns them with the prefix of ``path`` relative to the root (``""`` when it is
        the root, or outside it, where only its own and nested files count).
        """
        real = os.path.realpath(path)
        if real == self._root or not is_within(real, self._root):
            return GitIgnore(), ""
        ignore, base = GitIgnore(), ""
        fd = os.open(self._root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in os.path.relpath(real, self._root).split(os.sep):
                text = _gitignore(fd)
                if text is not None:
                    ignore = ignore.extended(base, text)
                base += part + "/"
                child = os.open(part, _FOLDER, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError:
            pass  # the search itself reports a folder it cannot open
        finally:
            os.close(fd)
        return ignore, base

    def list(self, fd: int, budget: Budget) -> list[tuple[str, bool]]:
        """The entries of the folder open as ``fd``: ``(name, is_dir)``, symlinks followed. Closes ``fd``."""
        found: list[tuple[str, bool]] = []
        try:
            with os.scandir(fd) as entries:
                for entry in budget.read_entries(entries):
                    try:
                        found.append((entry.name, entry.is_dir()))
                    except OSError:
                        found.append((entry.name, False))
        finally:
            os.close(fd)
        return found

    def walk(
        self,
        top: Path,
        shown: str,
        budget: Budget,
        glob: Glob | None = None,
        chosen: Callable[[str, list[str]], list[str]] | None = None,
        split_after: float | None = None,
    ) -> Iterator[WalkFile]:
        """The files under the folder ``top`` (from ``resolve``) that ``.gitignore`` files keep.

        Yields them in the order of their sorted relative paths; with ``glob``, only
        those whose relative path it matches (entering no folder that cannot hold one);
        with ``chosen``, of each run of a folder's files (the folder's relative path and
        the names), those it returns, and the symlinks among them.
        Skips ``.git`` and ignored folders without entering them, does not follow
        symlinked folders, nor links to files outside the workspace; leaves out FIFOs,
        sockets and devices. Stops when ``budget`` is spent (checked at each folder and
        each run of files). Raises what :meth:`open_folder` raises for ``top`` (named
        ``shown``). Close the iterator when done with it early. Blocking: run it in a thread.
        ``split_after``: as :meth:`runs` (a file of a folder the helper walked is opened by its
        path, from the root).
        """
        base = os.path.join(top, "")
        with contextlib.closing(self._split_runs(top, shown, budget, glob, split_after)) as runs:
            for relative, names, fd, targets in runs:
                if chosen is not None:
                    picked = chosen(relative, names)
                    if targets and len(picked) < len(names):
                        picked = sorted({*picked, *(name for name in names if name in targets)})
                    names = picked
                for name in names:
                    path = relative + name
                    target = targets.get(name) if targets else None
                    if fd is None and target is None:
                        target = base + path
                    yield WalkFile(path, base + path, name, fd, target)

    def runs(
        self,
        top: Path,
        shown: str,
        budget: Budget,
        glob: Glob | None = None,
        split_after: float | None = None,
    ) -> Iterator[tuple[str, list[str]]]:
        """:meth:`walk`'s files a run of one folder's files at a time: the folder's relative path (``""`` or
        ``"a/b/"``) and the names of the files, in order.

        With ``split_after`` (seconds), a walk still going after that long is shared with a
        forked helper (:mod:`~agentls.tools.walk_split`): the same runs, sooner on a large tree.
        """
        with contextlib.closing(self._split_runs(top, shown, budget, glob, split_after)) as runs:
            for relative, names, _, _ in runs:
                yield relative, names

    def _split_runs(
        self, top: Path, shown: str, budget: Budget, glob: Glob | None, split_after: float | None
    ) -> Iterator[tuple[str, list[str], int | None, dict[str, str]]]:
        """:meth:`_runs`, with a helper after ``split_after`` seconds (if given and this system forks)."""
        split = _Split(split_after) if split_after is not None and walk_split.SUPPORTED else None
        try:
            with contextlib.closing(self._runs(top, shown, budget, glob, split)) as runs:
                yield from runs
        finally:
            if split is not None:
                split.close()

    def _runs(
        self, top: Path, shown: str, budget: Budget, glob: Glob | None, split: _Split | None = None
    ) -> Iterator[tuple[str, list[str], int | None, dict[str, str]]]:
        """:meth:`walk`'s files in runs: a folder's relative path, the names of its next files, the folder's
        descriptor (open while the walk waits at the run; ``None`` for a run a helper walked) and the real
        paths of the symlinks among the names."""
        ignore, prefix = self.ancestor_ignores(top)
        fd = self.open_folder(top, shown)
        scan = _Scan(str(top), prefix, glob, budget)
        try:
            chain = [self._scan(fd, _identity(fd), scan, "", 0, ignore)]
        except BaseException:
            os.close(fd)
            raise
        try:
            yield from self._follow(chain, scan, split)
        finally:
            for folder in chain:
                if folder.fd is not None:
                    os.close(folder.fd)

    def _follow(
        self, chain: list[_Folder], scan: _Scan, split: _Split | None
    ) -> Iterator[tuple[str, list[str], int | None, dict[str, str]]]:
        """The runs of the folders in ``chain`` (the walk's current folders, outermost first) and of every
        folder below them that is left to visit, until ``chain`` is empty."""
        budget = scan.budget
        while chain and budget.running():
            folder = chain[-1]
            files, start = folder.files, folder.next_file
            folders, next_folder = folder.folders, folder.next_folder
            inner = folders[next_folder] if next_folder < len(folders) else None
            end = len(files) if inner is None else bisect.bisect_left(files, inner, start)
            if end > start:
                folder.next_file = end
                yield folder.relative, files[start:end], folder.fd, folder.targets
            if inner is None:
                chain.pop()
                if chain and not self._leave(folder, chain[-1]):
                    budget.changed = True
                    return
                if not chain and folder.fd is not None:
                    os.close(folder.fd)
                    folder.fd = None
                continue
            folder.next_folder += 1
            if budget.out_of_entries:
                continue  # what was listed is still shown, but no more is read
            if folder.depth >= budget.bounds.depth:
                budget.too_deep += 1
                continue
            if split is not None:
                walked = split.walked(chain, folder, scan, self._walk_one)
                if walked is not None:
                    for relative, names, targets in walked:
                        yield relative, names, None, targets
                    continue
            entered = self._enter(folder, inner[:-1], scan)
            if entered is not None:
                chain.append(entered)

    def _walk_one(self, parent: _Folder, index: int, scan: _Scan) -> walk_split.Walked | None:
        """The subfolder ``index`` of ``parent`` walked completely, for a helper (``None`` if a bound or a
        change stopped it)."""
        budget = scan.budget
        entries, too_deep = budget.entries, budget.too_deep
        entered = self._enter(parent, parent.folders[index][:-1], scan)
        chain = [] if entered is None else [entered]
        runs = [
            (relative, names, {name: targets[name] for name in names if name in targets} if targets else {})
            for relative, names, _, targets in self._follow(chain, scan, None)
        ]
        if chain or budget.out_of_entries or budget.out_of_time or budget.changed:
            return None
        return walk_split.Walked(runs, budget.entries - entries, budget.too_deep - too_deep)

    def _enter(self, folder: _Folder, name: str, scan: _Scan) -> _Folder | None:
        """The subfolder ``name`` of ``folder``, scanned; ``folder``'s descriptor is closed then if it is
        :data:`OPEN_DEPTH` levels deep."""
        assert folder.fd is not None
        try:
            fd = os.open(name, _FOLDER, dir_fd=folder.fd)
        except OSError:
            return None  # gone, unreadable, or swapped for a symlink since the listing
        try:
            identity = _identity(fd)
            if identity in self._protected_ids:
                os.close(fd)
                return None
            relative = folder.relative + name + "/"
            inner = self._scan(fd, identity, scan, relative, folder.depth + 1, folder.rules)
        except OSError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        if folder.depth >= OPEN_DEPTH:
            os.close(folder.fd)
            folder.fd = None
        return inner

    @staticmethod
    def _leave(inner: _Folder, folder: _Folder) -> bool:
        """Close ``inner`` for its parent ``folder``, reopened as its ``..`` if it was closed; whether it is
        still the same folder."""
        assert inner.fd is not None
        if folder.fd is not None:
            os.close(inner.fd)
            inner.fd = None
            return True
        try:
            fd = os.open("..", _FOLDER, dir_fd=inner.fd)
        except OSError:
            return False
        finally:
            os.close(inner.fd)
            inner.fd = None
        if _identity(fd) != folder.identity:
            os.close(fd)
            return False
        folder.fd = fd
        return True

    def _scan(
        self, fd: int, identity: tuple[int, int], scan: _Scan, relative: str, depth: int, rules: GitIgnore
    ) -> _Folder:
        """The folder open as ``fd``: its ``.gitignore`` and the glob applied, its kept entries sorted."""
        folders: list[str] = []
        files: list[str] = []
        links: list[str] = []
        with os.scandir(fd) as listing:
            for entry in scan.budget.read_entries(listing):
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.name)
                    elif entry.is_file(follow_symlinks=False):
                        files.append(entry.name)
                    elif entry.is_symlink():
                        links.append(entry.name)
                except OSError:
                    continue  # FIFOs, sockets and devices are left out: they are never opened
        for names in (folders, files, links):
            if ".git" in names:
                names.remove(".git")
        path = scan.prefix + relative
        if ".gitignore" in files:
            text = _gitignore(fd)
            if text is not None:
                rules = rules.extended(path, text)
        deciding = rules.narrowed(path, [*folders, *files, *links])
        if deciding is not None:
            folders = [name for name in folders if not deciding.ignored(path + name, True)]
            files = [name for name in files if not deciding.ignored(path + name, False)]
            links = [name for name in links if not deciding.ignored(path + name, False)]
        glob = scan.glob
        if glob is not None:
            folders = [name for name in folders if glob.may_hold(relative + name + "/")]
            files = glob.matching(relative, files)
            links = glob.matching(relative, links) if links else links
        targets: dict[str, str] = {}
        for name in links:
            target = self._link_target(os.path.join(scan.top, relative + name))
            if target is not None:
                targets[name] = target
        if targets:
            files = [*files, *targets]
        files.sort()
        keys = [name + "/" for name in folders]
        keys.sort()
        return _Folder(fd, identity, relative, depth, rules, files, keys, targets)

    def _link_target(self, path: str) -> str | None:
        """The real path of the symlink ``path`` if it leads to a regular file the tools may read."""
        try:  # realpath itself fails when a link on the way is swapped while it reads it
            target = os.path.realpath(path)
            regular = stat.S_ISREG(os.stat(target).st_mode)
        except OSError:
            return None
        protected = any(is_within(target, folder) for folder in self._protected)
        return target if regular and is_within(target, self._top) and not protected else None


def _gitignore(folder: int) -> str | None:
    """The text of the ``.gitignore`` in the folder open as ``folder``, if it is a regular file."""
    try:
        data = _read_regular(os.open(".gitignore", _FILE, dir_fd=folder), GITIGNORE_MAX_BYTES)
    except OSError:
        return None
    return None if data is None else data[:GITIGNORE_MAX_BYTES].decode("utf-8", errors="replace")


def open_documents(buffers: dict[str, str], top: Path, glob: Glob | None = None) -> list[WalkFile]:
    """The open documents under ``top``, sorted by relative path; with ``glob``, those whose relative path
    it matches (as the walk's ``glob``)."""
    documents = sorted(
        (
            WalkFile(Path(absolute).relative_to(top).as_posix(), absolute, Path(absolute).name)
            for absolute in buffers
            if absolute != str(top) and is_within(absolute, str(top))
        ),
        key=lambda file: file.relative,
    )
    return documents if glob is None else [file for file in documents if glob.fullmatch(file.relative)]


def with_documents(files: Iterator[T], documents: list[T], key: Callable[[T], str]) -> Iterator[T]:
    """``files`` (in sorted order) and ``documents`` (sorted, :func:`open_documents`), in sorted order.

    A document that is on disk comes once, as the walk found it; documents not on disk,
    or in folders the walk left out, are added.
    """
    return files if not documents else _merged(files, documents, key)


def _merged(files: Iterator[T], documents: list[T], key: Callable[[T], str]) -> Iterator[T]:
    last = None
    for item in heapq.merge(files, documents, key=key):
        if key(item) != last:
            last = key(item)
            yield item
