"""Where the coding tools read and write files: the workspace.

Tools never touch the file system directly; they go through a :class:`Workspace`.
:class:`DiskWorkspace` reads and writes the disk. The editor-backed workspace
(:mod:`agentls.tools.editor`) answers from the editor's open buffers first (unsaved
changes included), writes through ``workspace/applyEdit``, and falls back to the
disk, so the interface is kept small and async.

Every path a model sends is resolved against the workspace root by
:meth:`Workspace.resolve`, which refuses paths that leave the root unless the
session allows it. The disk is then reached through :mod:`agentls.tools.files`,
which checks what it opens rather than the name, so a symlink swapped after the
check still cannot lead a read or a write out of the root.
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import stat as stat_module
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

from agentls.ai.abort import AbortSignal
from agentls.tools import files
from agentls.tools.files import FolderEntry, SymlinkEscape, is_within

FileKind: TypeAlias = Literal["file", "directory", "other"]
T = TypeVar("T")


class ToolInputError(ValueError):
    """The arguments of a tool call are unusable (a path outside the workspace, an offset past the end...).

    The message is written for the model: it says what is wrong and, where it can, what to do instead.
    """


@dataclass(frozen=True)
class FileStat:
    """What the tools need to know about a file, whoever serves it (disk or editor buffer)."""

    kind: FileKind
    size: int
    """Size in bytes (of the buffer's content for an editor-backed file)."""
    mtime: float
    """Modification time in seconds since the epoch."""
    special: str | None = None
    """What an ``"other"`` is, for messages: ``"FIFO (named pipe)"``, ``"character device"``..."""


@dataclass(frozen=True)
class Document:
    """A file's content as a tool read it, and where it came from.

    ``version`` is the editor's version of an open document (``None`` for a file read
    from disk). A write that passes this document as its ``base`` is applied only if
    the editor's buffer is still at that version, so a stale edit is rejected instead
    of overwriting newer typing.
    """

    data: bytes
    version: int | None = None


async def consume_buffer(data: bytes, consume: Callable[[BinaryIO], T]) -> T:
    """What ``consume`` makes of ``data`` as a binary stream, in a worker thread as a file's content
    would be (:meth:`Workspace.read_content` of a buffer held in memory)."""
    return await asyncio.to_thread(consume, io.BytesIO(data))


@runtime_checkable
class Workspace(Protocol):
    """The files the tools work on.

    Paths may be given as the model sent them (``str``, relative to :attr:`root`) or
    as a :class:`Path` that :meth:`resolve` returned; every method resolves its
    argument, so each one enforces the workspace boundary. Missing files raise
    :class:`FileNotFoundError`, directories read as files :class:`IsADirectoryError`,
    as the disk does.
    """

    @property
    def root(self) -> Path:
        """The absolute workspace root that relative paths are resolved against."""
        ...

    def resolve(self, path: str | Path) -> Path:
        """The absolute path for ``path``; raises :class:`ToolInputError` if it is not allowed."""
        ...

    async def read_bytes(self, path: str | Path) -> bytes: ...

    async def stat(self, path: str | Path) -> FileStat: ...

    async def exists(self, path: str | Path) -> bool: ...

    async def read_document(self, path: str | Path) -> Document:
        """The content of ``path`` with the editor's version when it is an open document."""
        ...

    async def read_content(self, path: str | Path, consume: Callable[[BinaryIO], T]) -> T:
        """What ``consume`` makes of the content of ``path`` as a binary stream, for a tool that
        needs only part of a large file.

        The stream is an open document's buffer where there is one, else the file, which
        must be a regular file (:class:`~agentls.tools.files.NotRegularFile` for a FIFO,
        device or socket). ``consume`` runs in a worker thread (reading blocks), where the
        file is also opened: one hand-over to a thread per read, not two; the stream is
        closed after it.
        """
        ...

    async def write_text(
        self, path: str | Path, text: str, base: Document | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        """Replace the content of ``path`` with ``text`` (UTF-8), creating it and its folders.

        ``base`` is the document the new text was computed from (``edit`` passes it,
        ``write`` does not). An abort ends a wait for the editor with :class:`AbortError`.
        Raises :class:`OSError` for disk failures and
        :class:`ToolInputError` when the editor refuses the change. Returns a note for
        the tool's result when the write went differently than asked (else ``None``).
        """
        ...

    async def write_bytes(self, path: str | Path, data: bytes, *, executable: bool = False) -> None:
        """Replace the content of ``path`` on disk with ``data`` (a rewind's binary or executable file)."""
        ...

    async def delete_file(self, path: str | Path) -> None:
        """Remove the file ``path`` (through the editor when it has it open and can)."""
        ...

    def protect(self, folder: str | Path) -> None:
        """Refuse every path in ``folder`` from now on, whether or not paths may leave the root."""
        ...

    @property
    def protected(self) -> tuple[Path, ...]:
        """The folders :meth:`resolve` refuses (agentls's data folder), for searches that walk the disk."""
        ...

    def buffers(self) -> dict[str, str]:
        """The text of every open editor document, by absolute path (empty for the disk).

        Only documents :meth:`resolve` accepts: none outside the workspace, or reached
        through a symlink pointing out, unless the session allows outside paths. A
        snapshot taken on the event loop, so that searches running in worker threads can
        use it.
        """
        ...


def _file_stat(result: os.stat_result) -> FileStat:
    kind: FileKind
    if stat_module.S_ISREG(result.st_mode):
        kind = "file"
    elif stat_module.S_ISDIR(result.st_mode):
        kind = "directory"
    else:
        kind = "other"
    special = files.special_kind(result.st_mode)
    return FileStat(kind=kind, size=result.st_size, mtime=result.st_mtime, special=special)


def _through_symlink(path: str, real: str, root: Path) -> ToolInputError:
    return ToolInputError(
        f"path {path} resolves through a symlink to {real}, which is outside the workspace "
        f"{root}; only files inside the workspace can be used"
    )


def _in_protected(path: str, real: str, protected: list[tuple[Path, str]]) -> Path | None:
    """The protected folder (as given) that ``path`` or its resolved form ``real`` is in, if any."""
    for given, resolved in protected:
        if is_within(path, str(given)) or is_within(path, resolved) or is_within(real, resolved):
            return given
    return None


class DiskWorkspace:
    """A :class:`Workspace` on the local disk; the blocking I/O runs in worker threads.

    ``allow_outside`` lets paths leave the root (absolute paths elsewhere, ``..``,
    ``~``, symlinks pointing out); relative paths are still resolved against the root.
    The folders given to :meth:`protect` are refused either way.
    """

    def __init__(self, root: str | Path, allow_outside: bool = False) -> None:
        # The root stays as given (made absolute), not symlink-resolved: editors name
        # documents by the path the user opened, and resolved paths must match those.
        self._root = Path(os.path.abspath(os.path.expanduser(root)))
        self._real_root = os.path.realpath(self._root)
        self.allow_outside = allow_outside
        self._protected: list[tuple[Path, str]] = []

    @property
    def root(self) -> Path:
        return self._root

    def __repr__(self) -> str:
        return f"DiskWorkspace({str(self._root)!r}, allow_outside={self.allow_outside})"

    def protect(self, folder: str | Path) -> None:
        """Refuse ``folder`` and everything in it, whatever ``allow_outside`` and the permission mode say.

        For agentls's data folder: it holds ``mcp.json`` (whose commands start in every
        later session, unasked), the global ``AGENTS.md``, ``permissions.json`` and the
        session files, so a tool that could write there could run code or widen its own
        permissions, and one that could read there could see other sessions.
        """
        given = Path(os.path.abspath(os.path.expanduser(folder)))
        self._protected.append((given, os.path.realpath(given)))

    @property
    def protected(self) -> tuple[Path, ...]:
        return tuple(given for given, _ in self._protected)

    def resolve(self, path: str | Path) -> Path:
        """Resolve ``path`` against the root, expanding ``~``.

        The result is normalised lexically (``a/../b`` -> ``b``) but keeps symlinks,
        so it names the file the way the user sees it. The boundary is checked on the
        fully resolved form of that same path, so a symlink whose target is outside
        the root is refused even though its own name is inside.
        """
        text = os.fspath(path)
        if not text.strip():
            raise ToolInputError("path must not be empty")
        if "\0" in text:
            raise ToolInputError(f"path {text!r} contains a NUL character")
        expanded = os.path.expanduser(text)
        resolved = Path(os.path.normpath(os.path.join(self._root, expanded)))
        real = os.path.realpath(resolved)
        folder = _in_protected(str(resolved), real, self._protected)
        if folder is not None:
            raise ToolInputError(
                f"path {text} is in agentls's data folder {folder} (its settings, permissions and "
                "sessions), which the tools may not read or change; use a path elsewhere, or ask the "
                "user to make the change"
            )
        if self.allow_outside:
            return resolved
        if not is_within(str(resolved), str(self._root)) and not is_within(str(resolved), self._real_root):
            raise ToolInputError(
                f"path {text} is outside the workspace {self._root}; "
                "only files inside the workspace can be used (use a path relative to the workspace root)"
            )
        if not is_within(real, self._real_root):
            raise _through_symlink(text, real, self._root)
        return resolved

    def _disk(self, operation: Callable[..., T], path: str | Path, *args: Any) -> T:
        """``operation(path, *args, root=...)`` of :mod:`agentls.tools.files` on ``path`` resolved.

        The path is spelled under the real root, where the walk of the disk starts, and a
        symlink out found on the way (one swapped in since :meth:`resolve`) is refused.
        """
        resolved = self.resolve(path)
        if self.allow_outside:
            return operation(resolved, *args, root=None)
        real = str(resolved)
        if not is_within(real, self._real_root):
            real = os.path.normpath(os.path.join(self._real_root, os.path.relpath(real, self._root)))
        try:
            return operation(real, *args, root=self._real_root)
        except SymlinkEscape as error:
            raise _through_symlink(str(path), error.target, self._root) from None

    def open_file(self, path: str | Path) -> BinaryIO:
        """``path`` opened for reading from the disk, checked on what was opened. Blocking."""
        return self._disk(files.open_file, path)

    def stat_file(self, path: str | Path) -> FileStat:
        """The disk's :class:`FileStat` of ``path`` (symlinks followed while inside). Blocking."""
        return _file_stat(self._disk(files.stat_file, path))

    def list_folder(self, path: str | Path) -> list[FolderEntry]:
        """The entries of the folder ``path`` on the disk. Blocking."""
        return self._disk(files.list_folder, path)

    def _exists(self, path: str | Path) -> bool:
        try:
            self.stat_file(path)
        except OSError:
            return False
        return True

    def _read(self, path: str | Path) -> bytes:
        with self.open_file(path) as file:
            return file.read()

    async def read_bytes(self, path: str | Path) -> bytes:
        return (await self.read_document(path)).data

    async def stat(self, path: str | Path) -> FileStat:
        return await asyncio.to_thread(self.stat_file, path)

    async def exists(self, path: str | Path) -> bool:
        return await asyncio.to_thread(self._exists, path)

    async def read_document(self, path: str | Path) -> Document:
        return Document(await asyncio.to_thread(self._read, path))

    async def read_content(self, path: str | Path, consume: Callable[[BinaryIO], T]) -> T:
        def opened_and_consumed() -> T:
            with self.open_file(path) as stream:
                return consume(stream)

        return await asyncio.to_thread(opened_and_consumed)

    async def write_text(
        self, path: str | Path, text: str, base: Document | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        await asyncio.to_thread(self._disk, files.write_text_atomic, path, text)
        return None

    async def write_bytes(self, path: str | Path, data: bytes, *, executable: bool = False) -> None:
        await asyncio.to_thread(
            self._disk, functools.partial(files.write_bytes_atomic, executable=executable), path, data
        )

    async def delete_file(self, path: str | Path) -> None:
        await asyncio.to_thread(self._disk, files.remove_file, path)

    def buffers(self) -> dict[str, str]:
        return {}
