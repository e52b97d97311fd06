"""File access that cannot be led out of a root folder, and atomic writes.

Checking a path (resolving its symlinks) and then opening it by name leaves a gap: a
process in the workspace can swap a symlink in between, so the open reaches a file the
check never saw. Here the check is made on what is opened: a path is walked from a
descriptor of the root, one component at a time, each opened with ``O_NOFOLLOW``
relative to the descriptor of its folder. A symlink met on the way is followed only by
resolving its target and walking that again from the root, and only if it stays under
the root; otherwise :class:`SymlinkEscape` is raised. Writes create their temporary file
in the folder so reached and rename it there, through the folder's descriptor.

Where the platform lacks ``O_NOFOLLOW`` or ``dir_fd`` (Windows), the path is resolved,
checked and used by name, without that guarantee. Every function here blocks: run them
in a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as stat_module
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NoReturn, TypeVar

from agentls.tools import atomic_temp

T = TypeVar("T")

_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | _DIRECTORY
"""How the folders on the way are opened: ``O_PATH`` (Linux) needs no read permission, as a lookup by name."""
_DIR_FD = (
    bool(_NOFOLLOW and _DIRECTORY)
    and {os.open, os.stat, os.mkdir, os.rename, os.readlink, os.unlink} <= os.supports_dir_fd
    and os.scandir in os.supports_fd
)
"""Whether paths can be walked through descriptors; if not, they are checked and then used by name.

``os.replace``, which does the rename, takes ``dir_fd`` wherever ``os.rename`` does.
"""
MAX_LINKS = 40
"""Symlinks followed in one walk before giving up with ``ELOOP`` (Linux's own limit)."""


def is_within(path: str, root: str) -> bool:
    """Whether the absolute ``path`` is ``root`` or under it, compared lexically."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives on Windows
        return False


class SymlinkEscape(PermissionError):
    """A symlink on the way (perhaps swapped in while a tool ran) leads out of the root, to ``target``."""

    def __init__(self, target: str) -> None:
        super().__init__(errno.EACCES, f"a symlink leads out of the workspace to {target}")
        self.target = target


_SPECIAL_KINDS = (
    (stat_module.S_ISFIFO, "FIFO (named pipe)"),
    (stat_module.S_ISCHR, "character device"),
    (stat_module.S_ISBLK, "block device"),
    (stat_module.S_ISSOCK, "socket"),
)


class NotRegularFile(OSError):
    """The path names a FIFO, a device or a socket, which the tools do not open.

    Opening a FIFO waits for a writer, forever if none comes, in a worker thread no abort
    can free; reading a device may never end or have effects. ``kind`` says which it is.
    """

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", path)
        self.kind = kind


def special_kind(mode: int) -> str | None:
    """What a file of ``mode`` is when it is neither a regular file nor a folder ("FIFO (named pipe)"...)."""
    if stat_module.S_ISREG(mode) or stat_module.S_ISDIR(mode):
        return None
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), "special file")


def require_regular(result: os.stat_result, path: str) -> None:
    """Raise :class:`IsADirectoryError` or :class:`NotRegularFile` unless ``result`` is a regular file's."""
    if stat_module.S_ISDIR(result.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    kind = special_kind(result.st_mode)
    if kind is not None:
        raise NotRegularFile(path, kind)


class _IsLink(Exception):
    """The component being opened is a symlink to ``target``: the walk follows it."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target


def _link_or_raise(folder: int | None, name: str, error: OSError) -> NoReturn:
    """Raise :class:`_IsLink` if ``name`` is a symlink (why opening it failed), else ``error``."""
    try:
        target = os.readlink(name, dir_fd=folder)
    except OSError:
        raise error from None
    raise _IsLink(target)


def _enter(folder: int, name: str, make_parents: bool) -> int:
    """Open the subfolder ``name`` of ``folder`` (never through a symlink) and close ``folder``."""
    try:
        child = os.open(name, _WALK_FLAGS | _NOFOLLOW, dir_fd=folder)
    except OSError as error:
        if not (make_parents and isinstance(error, FileNotFoundError)):
            _link_or_raise(folder, name, error)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, dir_fd=folder)
        return _enter(folder, name, False)
    os.close(folder)
    return child


def _walk(
    root: str | None, path: str, final: Callable[[int | None, str], T], make_parents: bool = False
) -> tuple[int | None, str, T]:
    """Reach the last component of ``path`` (absolute, under ``root``) and apply ``final`` to it.

    ``final(folder, name)`` gets the descriptor of the folder reached and the name in it
    (``None`` and the full path without descriptors), and raises :class:`_IsLink` when
    that name is a symlink, which is then followed. Returns the folder's descriptor
    (the caller closes it), the name and ``final``'s result. ``root=None`` allows any
    path. ``make_parents`` creates the missing folders on the way.
    """
    if root is None or not _DIR_FD:
        real = os.path.realpath(path)
        if root is not None and not is_within(real, root):
            raise SymlinkEscape(real)
        if make_parents:
            os.makedirs(os.path.dirname(real), exist_ok=True)
        try:
            return None, real, final(None, real)
        except _IsLink:  # replaced by a symlink since it was resolved: refuse rather than follow it
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path) from None
    if not is_within(path, root):
        raise SymlinkEscape(path)
    parts = os.path.relpath(path, root).split(os.sep)
    for _ in range(MAX_LINKS):
        folder = os.open(root, _WALK_FLAGS)
        done = 0
        try:
            while done < len(parts) - 1:
                folder = _enter(folder, parts[done], make_parents)
                done += 1
            return folder, parts[-1], final(folder, parts[-1])
        except _IsLink as link:
            os.close(folder)
            target = os.path.realpath(os.path.join(root, *parts[:done], link.target, *parts[done + 1 :]))
            if not is_within(target, root):
                raise SymlinkEscape(target) from None
            parts = os.path.relpath(target, root).split(os.sep)
        except BaseException:
            os.close(folder)
            raise
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


def _close(folder: int | None) -> None:
    if folder is not None:
        os.close(folder)


def _open_last(folder: int | None, name: str, flags: int) -> int:
    try:
        return os.open(name, flags | _NOFOLLOW, dir_fd=folder)
    except OSError as error:
        _link_or_raise(folder, name, error)


def _lstat_last(folder: int | None, name: str) -> os.stat_result | None:
    """The ``lstat`` of ``name`` in ``folder``, ``None`` if it does not exist."""
    try:
        result = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat_module.S_ISLNK(result.st_mode):
        raise _IsLink(os.readlink(name, dir_fd=folder))
    return result


def _open_regular(folder: int | None, name: str, path: str) -> int:
    """Open ``name`` for reading if it is a regular file, without ever waiting (for a FIFO's writer).

    The type is checked before the open, so no device is opened at all, and again on the
    descriptor, in case a FIFO was swapped in between: ``O_NONBLOCK`` lets that open return.
    """
    found = _lstat_last(folder, name)
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    require_regular(found, path)
    fd = _open_last(folder, name, os.O_RDONLY | _NONBLOCK)
    try:
        require_regular(os.fstat(fd), path)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | Path, *, root: str | None = None) -> BinaryIO:
    """The regular file ``path`` opened for reading (binary), not reached through a symlink out of ``root``.

    Raises :class:`SymlinkEscape` for such a link, :class:`IsADirectoryError` for a folder,
    :class:`NotRegularFile` for a FIFO, device or socket (never opened, so never waited on).
    """
    text = os.fspath(path)
    folder, _, fd = _walk(root, text, lambda folder, name: _open_regular(folder, name, text))
    _close(folder)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def stat_file(path: str | Path, *, root: str | None = None) -> os.stat_result:
    """The ``stat`` of ``path`` (symlinks followed while they stay under ``root``)."""
    folder, _, result = _walk(root, os.fspath(path), _lstat_last)
    _close(folder)
    if result is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
    return result


@dataclass(frozen=True)
class FolderEntry:
    """One entry of a folder; ``is_dir`` and ``is_file`` follow symlinks, as :class:`os.DirEntry`'s do."""

    name: str
    is_dir: bool
    is_file: bool
    is_link: bool


def _scan(folder: int | None, name: str) -> list[FolderEntry]:
    def entries(source: int | str) -> list[FolderEntry]:
        found: list[FolderEntry] = []
        with os.scandir(source) as iterator:  # the entries' kinds are read while the scan is open
            for entry in iterator:
                try:
                    found.append(FolderEntry(entry.name, entry.is_dir(), entry.is_file(), entry.is_symlink()))
                except OSError:
                    found.append(FolderEntry(entry.name, False, False, False))
        return found

    if folder is None:
        return entries(name)
    fd = _open_last(folder, name, os.O_RDONLY | _DIRECTORY)
    try:
        return entries(fd)
    finally:
        os.close(fd)


def list_folder(path: str | Path, *, root: str | None = None) -> list[FolderEntry]:
    """The entries of the folder ``path``, not reached through a symlink out of ``root``."""
    folder, _, found = _walk(root, os.fspath(path), _scan)
    _close(folder)
    return found


def _new_file_mode() -> int:
    """``0o666`` less the process umask: the mode ``open()`` gives a new file.

    Read once at import: ``os.umask`` can only be read by setting it, which is not
    safe to do from the worker threads the writes run in.
    """
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


_NEW_FILE_MODE = _new_file_mode()


def remove_file(path: str | Path, *, root: str | None = None) -> None:
    """Delete the file ``path`` (not a folder), not reached through a symlink out of ``root``."""

    def unlink(folder: int | None, name: str) -> None:
        if _lstat_last(folder, name) is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
        os.unlink(name, dir_fd=folder)

    folder, _, _ = _walk(root, os.fspath(path), unlink)
    _close(folder)


def write_text_atomic(path: str | Path, text: str, *, root: str | None = None) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically, creating parent folders.

    The bytes go to a new temporary file in the file's folder, are flushed to disk, and
    the temporary file then replaces the file by a rename in that folder: readers see
    the old content or the new, never a partial file. Both happen through the folder's
    descriptor, so no symlink swapped in meanwhile can move the write out of ``root``
    (a link swapped in at the file's own name is replaced, not followed). An existing
    file keeps its permission bits; a symlink that stays under ``root`` is followed, so
    its target is replaced and the link stays. A FIFO, device or socket at ``path`` is
    left alone (:class:`NotRegularFile`). The text is written as is (no newline
    translation).
    """
    write_bytes_atomic(path, text.encode("utf-8"), root=root)


def write_bytes_atomic(
    path: str | Path, data: bytes, *, root: str | None = None, executable: bool = False
) -> None:
    """:func:`write_text_atomic` of bytes; ``executable`` adds the execute bits where reading is allowed."""
    folder, name, existing = _walk(root, os.fspath(path), _lstat_last, make_parents=True)
    try:
        mode = _NEW_FILE_MODE
        if existing is not None:
            require_regular(existing, os.fspath(path))
            mode = stat_module.S_IMODE(existing.st_mode)
        if executable:
            mode |= (mode & 0o444) >> 2
        temp_name = atomic_temp.temp_name(os.path.basename(name))
        if folder is None:
            temp_name = os.path.join(os.path.dirname(name), temp_name)
        fd = os.open(temp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                os.chmod(handle.fileno() if os.chmod in os.supports_fd else temp_name, mode)
            os.replace(temp_name, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name, dir_fd=folder)
            raise
    finally:
        _close(folder)
