"""The code that ``dataclasses`` and ``typing`` compile from text at every start, kept on disk.

Python 3.11's ``@dataclass`` writes the source of a class's ``__init__``, ``__repr__`` and
``__eq__`` (a frozen class's ``__setattr__``, ``__delattr__`` and ``__hash__`` too) and compiles
each with ``exec``: 0.3-0.8 ms a class, and ``agentls serve`` imports some 170 dataclasses,
its own and its libraries'. pydantic evaluates its models' string annotations through
``typing.ForwardRef``, which compiles each one (about 2,200 at a server's start). Together
that was a fifth of a server's imports. As Python keeps the compiled code of modules in
``.pyc`` files, these compiled texts are kept in a file next to agentls's own ``.pyc`` files
(the package's ``__pycache__``, one file for each Python version), so every user and every
``HOME`` of an installation share it; where that folder cannot be written, in the user's cache
folder. ``AGENTLS_COMPILE_CACHE`` names another file, or is ``off``.

:func:`install` is called by the command line only: it shadows the builtins ``exec`` and
``compile`` in those two modules with lookups in the cache. What is compiled, and how, does not
change: the same text, file name ``<string>``, mode and optimisation level, and no future
flags (neither module has any for its ``exec``/``compile`` to inherit). The cache is an
optimisation: a file that cannot be read is started afresh, one that cannot be written left alone.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import marshal
import os
import sys
from types import CodeType
from typing import Any

CACHE_ENV = "AGENTLS_COMPILE_CACHE"

MAX_ENTRIES = 16_384
"""Past this many texts the file is written with only those the process used (no endless growth)."""

_compile = builtins.compile
_exec = builtins.exec

Key = tuple[str, str]  # (mode, source text)


def _read(path: str) -> dict[Key, Any] | None:
    """The cache in ``path``; ``None`` when there is none, ``{}`` when it is damaged."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return None
    try:
        codes = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return {}
    return codes if isinstance(codes, dict) else {}


def _write(path: str, codes: dict[Key, Any]) -> bool:
    """Write ``codes`` to ``path`` atomically (other processes may read or write it at the same time)."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as file:
            file.write(marshal.dumps(codes))
        os.replace(temporary, path)
        return True
    except (OSError, ValueError):  # a read-only or full disk; ValueError: a code marshal refuses
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False


class CompiledTexts:
    """Compiled code by mode and text, read from the first of ``paths`` that has it;
    :meth:`save` writes it back, to the first of them that can be written, when it grew."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._codes: dict[Key, Any] = next((codes for codes in map(_read, paths) if codes is not None), {})
        self._used: set[Key] = set()
        self._added = 0

    def compile(
        self,
        source: Any,
        filename: str,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
    ) -> Any:
        """``compile``, from the cache for a text compiled as ``typing`` and ``dataclasses`` do."""
        if type(source) is not str or filename != "<string>" or flags or optimize != -1:
            return _compile(source, filename, mode, flags, dont_inherit, optimize)
        key = (mode, source)
        self._used.add(key)
        code = self._codes.get(key)
        if type(code) is not CodeType:
            code = self._codes[key] = _compile(source, filename, mode, 0, True)
            self._added += 1
        return code

    def exec(self, source: Any, globals: Any = None, locals: Any = None, /, **options: Any) -> None:
        """``exec``, a text's code from the cache."""
        if type(source) is str:
            source = self.compile(source, "<string>", "exec")
        _exec(source, globals, locals, **options)

    def save(self) -> None:
        """Write the cache if this process compiled texts it did not have."""
        if not self._added:
            return
        self._added = 0
        codes = self._codes
        if len(codes) > MAX_ENTRIES:  # (a list first: another thread may be compiling meanwhile)
            codes = {key: code for key, code in list(codes.items()) if key in self._used}
        any(_write(path, codes) for path in self.paths)


def cache_paths() -> list[str]:
    """Where the cache may be: ``$AGENTLS_COMPILE_CACHE``, or the package's ``__pycache__`` and then
    the user's cache folder (none when the variable is ``off``)."""
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen:
        return [] if chosen == "off" else [os.path.abspath(chosen)]
    import agentls

    optimized = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    name = f"compiled-texts.{sys.implementation.cache_tag}{optimized}.marshal"
    package = os.path.join(os.path.dirname(os.path.abspath(agentls.__file__)), "__pycache__", name)

    import platformdirs

    return [package, os.path.join(platformdirs.user_cache_dir("agentls", appauthor=False), name)]


_installed: CompiledTexts | None = None


def install() -> None:
    """Compile dataclasses' methods and typing's forward references through the cache on disk
    from now on; it is saved by :func:`save` and when the process exits."""
    global _installed
    if _installed is not None or not (paths := cache_paths()):
        return
    import dataclasses
    import typing

    _installed = CompiledTexts(paths)
    # a module's globals come before the builtins
    dataclasses.exec = _installed.exec  # type: ignore[attr-defined]
    typing.compile = _installed.compile  # type: ignore[attr-defined]
    atexit.register(_installed.save)


def save() -> None:
    """Write the installed cache now if it grew (after a command's imports: an exit without
    ``atexit``, or a crash, would otherwise lose it)."""
    if _installed is not None:
        _installed.save()
