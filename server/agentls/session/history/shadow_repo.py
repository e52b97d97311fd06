"""Snapshots of a folder in a git repository of agentls's own (the *shadow repository*).

Its git folder is apart from the folder (under the data folder), the folder is its work
tree, and it has its own index, so the user's ``.git`` is never read, written or locked.
A snapshot is a git tree: the index is brought up to date with what git would add (the
folder's ``.gitignore`` files apply, and the patterns given), files over a size bound left
out, and ``git write-tree`` names the result. Trees are kept alive by refs
(``refs/agentls/<ms>-<tree>``), and when the objects grow past a bound the oldest refs go
and ``git gc`` prunes what no ref keeps.

No user or system configuration applies (``GIT_CONFIG_GLOBAL``/``GIT_CONFIG_NOSYSTEM``),
so no hook, filter, fsmonitor or credential helper of the user's runs; ``core.autocrlf``
is off, so a file's bytes are stored as they are. Every call blocks: run them in a worker
thread. Calls on one repository from several sessions or servers are serialised by an
``flock`` on a file in its git folder (git's own ``index.lock`` would fail instead of wait).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_SECONDS = 60.0
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""git's empty tree (a folder with nothing to snapshot)."""
REFS = "refs/agentls/"
_SETTINGS = tuple(
    option
    for setting in ("core.autocrlf=false", "core.quotePath=false", "core.fsmonitor=false", "gc.auto=0")
    for option in ("-c", setting)
)
"""Given to every git command rather than written to the repository's config: a file's bytes stored
as they are, paths listed unquoted, no fsmonitor, no automatic ``gc`` (pruning runs it)."""
COUNT_EVERY = 64
"""Snapshots after which the objects are counted again, whatever this repository's snapshots wrote."""
_BLOCK = 4096


def _written(size: int) -> int:
    """At most how many bytes of disk a snapshot's objects take for a file of ``size`` bytes: its
    blob (compressed, which can grow incompressible data by a little; ``count-objects`` counts
    whole blocks) and a block for the trees rewritten on its path."""
    blob = size + size // 256 + 64
    return -(-blob // _BLOCK) * _BLOCK + _BLOCK


class SnapshotUnavailable(Exception):
    """The folder cannot be snapshot: the message says why (no git, too many files, too slow, a git error)."""


def blob_id(data: bytes) -> str:
    """The id git gives a file of these bytes (``git hash-object``), computed without git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class TreeChange:
    """One path that differs between two trees: its blob id and git mode on each side (``None``: absent)."""

    path: str
    """Relative to the work tree, ``/``-separated."""
    old_blob: str | None
    old_mode: int | None
    new_blob: str | None
    new_mode: int | None


@dataclass(frozen=True)
class Bounds:
    max_file_bytes: int = 10 * 1024 * 1024
    max_files: int = 100_000
    max_store_bytes: int = 1024 * 1024 * 1024


class ShadowRepo:
    """The shadow repository of one folder."""

    def __init__(
        self, git_dir: Path, work_tree: Path, *, exclude: Iterable[str] = (), bounds: Bounds = Bounds()
    ) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.bounds = bounds
        self._exclude = list(exclude)
        self._ready = False
        self._store: int | None = None
        """At most how many bytes the objects take: their last count plus what snapshots wrote since
        (``None``: not counted yet)."""
        self._snapshots_uncounted = 0
        self._written: tuple[str, tuple[int, int, int] | None] | None = None
        """The last tree this repository wrote, and the index it wrote it from."""

    # --- running git ---------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
        )
        return env

    def _git(self, *args: str, stdin: bytes | None = None) -> bytes:
        try:
            done = subprocess.run(
                ["git", "-c", f"core.excludesFile={self.git_dir / 'agentls-exclude'}", *_SETTINGS, *args],
                cwd=self.work_tree,
                env=self._env(),
                input=stdin,
                capture_output=True,
                timeout=GIT_TIMEOUT_SECONDS,
                check=False,
            )
        except FileNotFoundError:
            raise SnapshotUnavailable("git is not installed (it is not on PATH)") from None
        except subprocess.TimeoutExpired:
            raise SnapshotUnavailable(
                f"git took more than {GIT_TIMEOUT_SECONDS:.0f} s to snapshot {self.work_tree}"
            ) from None
        if done.returncode != 0:
            error = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
            raise SnapshotUnavailable(f"git {args[0]} failed: {error[-1] if error else done.returncode}")
        return done.stdout

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The repository, made if need be, held by this process alone (two sessions of one folder
        share it: made by both at once, ``git init``'s config lock failed for one of them)."""
        if not self.work_tree.is_dir():
            raise SnapshotUnavailable(f"{self.work_tree} is not a folder")
        self.git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self.git_dir / "agentls.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._prepare()
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _prepare(self) -> None:
        """Make the repository the first time (``git init``), and write the exclude patterns; under
        :meth:`_locked`."""
        if self._ready:
            return
        if not (self.git_dir / "HEAD").exists():
            self._git("init", "--quiet")
            self._store = 0
        (self.git_dir / "work-tree").write_text(f"{self.work_tree}\n")
        (self.git_dir / "agentls-exclude").write_text("".join(f"{line}\n" for line in self._exclude))
        self._ready = True

    # --- snapshots -----------------------------------------------------------------------

    def snapshot(self) -> str:
        """The id of a tree of what the folder holds now (raises :class:`SnapshotUnavailable`)."""
        with self._locked():
            # the files git would add and the tracked ones changed or deleted ("x/": a nested repository)
            listed = _paths(self._git("ls-files", "-z", "--others", "--modified", "--exclude-standard"))
            paths = list(dict.fromkeys(path for path in listed if not path.endswith("/")))
            if len(paths) > self.bounds.max_files and not self._has_tree():
                raise SnapshotUnavailable(
                    f"{self.work_tree} has more than {self.bounds.max_files:,} files to snapshot"
                )
            add, remove, written = self._sized(paths)
            if add:
                self._git("update-index", "--add", "--remove", "-z", "--stdin", stdin=_joined(add))
            if remove:
                self._git("update-index", "--force-remove", "-z", "--stdin", stdin=_joined(remove))
            tree = self._tree_of_index(changed=bool(add or remove))
            self._git("update-ref", f"{REFS}{time.time_ns() // 1_000_000}-{tree}", tree)
            self._prune(written)
            return tree

    def _tree_of_index(self, changed: bool) -> str:
        """The tree of the index (``git write-tree``), or the one this repository wrote last when
        nothing was added since and the index is the file it left (no other session wrote it: each
        write of git's makes a new file)."""
        if not changed and self._written is not None and self._written[1] == self._index_stamp():
            return self._written[0]
        tree = self._git("write-tree").decode().strip()
        self._written = (tree, self._index_stamp())
        return tree

    def _index_stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.git_dir / "index")
        except FileNotFoundError:
            return None
        return info.st_ino, info.st_size, info.st_mtime_ns

    def _has_tree(self) -> bool:
        return (self.git_dir / "index").exists()

    def _sized(self, paths: list[str]) -> tuple[list[str], list[str], int]:
        """``paths`` split into those to add (or drop from the index when gone) and those over the bound,
        and at most how many bytes of objects adding them writes (:func:`_written`)."""
        add, remove = [], []
        written = 0
        for path in paths:
            try:
                info = os.lstat(self.work_tree / path)
            except FileNotFoundError:
                add.append(path)  # deleted: --remove drops it
                written += _written(0)
                continue
            except OSError:
                remove.append(path)
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.bounds.max_file_bytes:
                remove.append(path)
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                add.append(path)
                written += _written(info.st_size)
            else:
                remove.append(path)  # a FIFO, socket or device (git would refuse it)
        return add, remove, written

    def _prune(self, written: int) -> None:
        """Drop the oldest snapshots while the objects are over the bound (the newest two stay).

        ``git count-objects`` stats every loose object, so they are counted only when what this
        repository's snapshots wrote since the last count could have taken them past the bound, or
        after :data:`COUNT_EVERY` snapshots (other sessions of the folder write to it too).
        """
        self._snapshots_uncounted += 1
        if self._store is not None:
            self._store += written
            if self._store <= self.bounds.max_store_bytes and self._snapshots_uncounted < COUNT_EVERY:
                return
        self._count()
        if self._fits():
            return
        refs = sorted(_lines(self._git("for-each-ref", "--format=%(refname)", REFS)), key=_ref_age)
        while len(refs) > 2 and not self._fits():
            dropped, refs = refs[: max(1, len(refs) // 4)], refs[max(1, len(refs) // 4) :]
            self._git("update-ref", "--stdin", stdin="".join(f"delete {ref}\n" for ref in dropped).encode())
            self._git("gc", "--quiet", "--prune=now")
            self._count()

    def _fits(self) -> bool:
        return self._store is not None and self._store <= self.bounds.max_store_bytes

    def _count(self) -> None:
        self._store, self._snapshots_uncounted = self._store_bytes(), 0

    def _store_bytes(self) -> int:
        sizes = dict(line.split(": ", 1) for line in _lines(self._git("count-objects", "-v")) if ": " in line)
        return (int(sizes.get("size", 0)) + int(sizes.get("size-pack", 0))) * 1024

    # --- reading back --------------------------------------------------------------------

    def diff(self, before: str, after: str) -> list[TreeChange]:
        """The paths whose content or mode differs between two trees."""
        if before == after:
            return []
        out = self._git("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", before, after)
        fields = out.split(b"\0")
        changes = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(b":"):
                continue
            old_mode, new_mode, old_blob, new_blob, _ = meta[1:].decode().split(" ")
            changes.append(
                TreeChange(
                    path.decode("utf-8", errors="surrogateescape"),
                    None if set(old_blob) == {"0"} else old_blob,
                    int(old_mode, 8) or None,
                    None if set(new_blob) == {"0"} else new_blob,
                    int(new_mode, 8) or None,
                )
            )
        return changes

    def read_blobs(self, ids: Iterable[str]) -> dict[str, bytes]:
        """The content of each blob there still is (a pruned one is left out)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        with self._locked():
            out = self._git("cat-file", "--batch", stdin="".join(f"{i}\n" for i in wanted).encode())
        found: dict[str, bytes] = {}
        at = 0
        for _ in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].decode().split(" ")
            at = end + 1
            if len(header) == 3:
                size = int(header[2])
                found[header[0]] = out[at : at + size]
                at += size + 1
        return found


def _paths(out: bytes) -> list[str]:
    return [item.decode("utf-8", errors="surrogateescape") for item in out.split(b"\0") if item]


def _joined(paths: list[str]) -> bytes:
    return b"".join(path.encode("utf-8", errors="surrogateescape") + b"\0" for path in paths)


def _lines(out: bytes) -> list[str]:
    return [line for line in out.decode("utf-8", errors="replace").splitlines() if line]


def _ref_age(ref: str) -> int:
    stamp = ref.removeprefix(REFS).split("-", 1)[0]
    return int(stamp) if stamp.isdigit() else 0
