"""Reading the files users write for the agent (``AGENTS.md``, skills, prompt templates), safely and cheaply.

These files come from the project and every folder above it, so a name may be a
folder, a FIFO that never delivers, a device, a huge file or bytes that are not text.
:func:`read_resource_text` reads only regular files of at most
:data:`MAX_RESOURCE_BYTES` of UTF-8 (through :func:`open_regular_file`, which never
blocks on a FIFO); anything else is skipped with a warning.

The session looks at these files before every turn, so :class:`ResourceReader` reads a
file again only when its revision (device, inode, size, modification and change
times, as Pi's ``getFileRevision``) changed: an unchanged project costs one ``stat``
per file. What it parsed is kept per revision, and so is a failure, so that a broken
file is reported once per version, not once per turn.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from agentls.ai.local_files import open_regular_file

logger = logging.getLogger(__name__)

MAX_RESOURCE_BYTES = 1024 * 1024
"""The largest context file, skill or prompt template read (1 MiB); larger ones are skipped."""

T = TypeVar("T")


class ResourceFileError(Exception):
    """A resource file could not be used; the message names the file and says why."""


@dataclass(frozen=True)
class Revision:
    """What identifies one version of a file without reading it."""

    device: int
    inode: int
    size: int
    modified_ns: int
    changed_ns: int

    @classmethod
    def of(cls, status: os.stat_result) -> Revision:
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


@functools.lru_cache(maxsize=256)
def up_from(folder: Path) -> tuple[Path, ...]:
    """``folder`` and the folders above it, nearest first: made once, as the paths of :func:`child`
    (the look before every turn made them again, ~40 joins of ``pathlib``: most of its time)."""
    return (folder, *folder.parents)


@functools.lru_cache(maxsize=4096)
def child(folder: Path, name: str | Path) -> Path:
    """``folder / name``, made once for the folders and names looked at before every turn."""
    return folder / name


def read_resource_text(path: Path) -> tuple[str, Revision]:
    """The UTF-8 text of a regular file (without a leading BOM) and the revision it was read at.

    Raises :class:`ResourceFileError` when the file is not a regular file, cannot be
    read, is larger than :data:`MAX_RESOURCE_BYTES` or is not UTF-8.
    """
    try:
        with open_regular_file(path) as file:
            revision = Revision.of(os.fstat(file.fileno()))
            data = file.read(MAX_RESOURCE_BYTES + 1)
    except OSError as error:
        raise ResourceFileError(f"{path} cannot be read ({error.strerror or error}); it is skipped") from None
    if len(data) > MAX_RESOURCE_BYTES:
        raise ResourceFileError(f"{path} is larger than {MAX_RESOURCE_BYTES} bytes; it is skipped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ResourceFileError(f"{path} is not UTF-8 text (byte {error.start}); it is skipped") from None
    return text.removeprefix("\ufeff"), revision


def current_revision(path: Path) -> Revision | None:
    """The revision of what ``path`` names now (following symlinks), ``None`` if nothing is there."""
    try:
        return Revision.of(os.stat(path))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None


@dataclass(frozen=True)
class _Entry(Generic[T]):
    revision: Revision
    value: T | None


class ResourceReader(Generic[T]):
    """Parsed resource files by path, each re-read and re-parsed only when its revision changed.

    ``parse(path, text)`` turns a file's text into a value, or ``None`` for a file that
    is not one (it may log why). A refresh reads what it needs with :meth:`read`, then
    calls :meth:`sweep`, which forgets the files it did not ask for this time.
    """

    def __init__(self, parse: Callable[[Path, str], T | None]) -> None:
        self._parse = parse
        self._kept: dict[Path, _Entry[T]] = {}
        self._seen: dict[Path, _Entry[T]] = {}

    def read(self, path: Path) -> T | None:
        """The parsed content of ``path``; ``None`` if it is missing, unusable or not a resource."""
        revision = current_revision(path)
        if revision is None:
            return None
        entry = self._seen.get(path) or self._kept.get(path)
        if entry is None or entry.revision != revision:
            entry = self._load(path, revision)
        self._seen[path] = entry
        return entry.value

    def _load(self, path: Path, revision: Revision) -> _Entry[T]:
        try:
            text, revision = read_resource_text(path)
        except ResourceFileError as error:
            logger.warning("%s", error)
            return _Entry(revision, None)
        try:
            return _Entry(revision, self._parse(path, text))
        except Exception as error:  # whatever a user's file holds, it must not fail the turn
            logger.warning("%s cannot be used (%s: %s); it is skipped", path, type(error).__name__, error)
            return _Entry(revision, None)

    def sweep(self) -> None:
        """Keep only the files read since the last sweep."""
        self._kept, self._seen = self._seen, {}
