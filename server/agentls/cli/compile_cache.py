"""The code that ``dataclasses`` and ``typing`` compile from text at every start, kept on disk.

Python 3.11's ``@dataclass`` writes the source of a class's ``__init__``, ``__repr__`` and
``__eq__`` (a frozen class's ``__setattr__``, ``__delattr__`` and ``__hash__`` too) and compiles
each with ``exec``: 0.3-0.8 ms a class, and ``agentls serve`` imports some 170 dataclasses,
its own and its libraries'. pydantic evaluates its models' string annotations through
``typing.ForwardRef``, which compiles each one (about 2,200 at a server's start). Together
that was a fifth of a server's imports. As Python keeps the compiled code of modules in
``.pyc`` files, these compiled texts are kept in the user's cache folder (one file for each
Python and agentls version) and read back at the next start.

:func:`install` is called by the command line only: it shadows the builtins ``exec`` and
``compile`` in those two modules with lookups in the cache. What is compiled, and how, does not
change: the same text, file name ``<string>``, mode and optimisation level, and no future
flags (neither module has any for its ``exec``/``compile`` to inherit). The cache is an
optimisation: a file that cannot be read or written is started afresh or left alone.
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

MAX_ENTRIES = 16_384
"""Past this many texts the file is written with only those the process used (no endless growth)."""

_compile = builtins.compile
_exec = builtins.exec

Key = tuple[str, str]  # (mode, source text)


def _read(path: str) -> dict[Key, Any]:
    try:
        with open(path, "rb") as file:
            codes = marshal.loads(file.read())
    except (OSError, ValueError, EOFError, TypeError):  # none yet, or damaged: start afresh
        return {}
    return codes if isinstance(codes, dict) else {}


class CompiledTexts:
    """Compiled code by mode and text, read from ``path``; :meth:`save` writes it back when it grew."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._codes = _read(path)
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
        """Write the cache if this process compiled texts it did not have (atomically: other
        processes may read or write it at the same time)."""
        if not self._added:
            return
        self._added = 0
        codes = self._codes
        if len(codes) > MAX_ENTRIES:  # (a list first: another thread may be compiling meanwhile)
            codes = {key: code for key, code in list(codes.items()) if key in self._used}
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(marshal.dumps(codes))
            os.replace(temporary, self.path)
        except (OSError, ValueError):  # a read-only or full disk; ValueError: a code marshal refuses
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def cache_path() -> str:
    import platformdirs

    from agentls import __version__

    optimized = f"-O{sys.flags.optimize}" if sys.flags.optimize else ""
    name = f"compiled-{sys.implementation.cache_tag}{optimized}-agentls-{__version__}.marshal"
    return os.path.join(platformdirs.user_cache_dir("agentls", appauthor=False), name)


_installed: CompiledTexts | None = None


def install() -> None:
    """Compile dataclasses' methods and typing's forward references through the cache on disk
    from now on; it is saved by :func:`save` and when the process exits."""
    global _installed
    if _installed is not None:
        return
    import dataclasses
    import typing

    _installed = CompiledTexts(cache_path())
    # a module's globals come before the builtins
    dataclasses.exec = _installed.exec  # type: ignore[attr-defined]
    typing.compile = _installed.compile  # type: ignore[attr-defined]
    atexit.register(_installed.save)


def save() -> None:
    """Write the installed cache now if it grew (after a command's imports: an exit without
    ``atexit``, or a crash, would otherwise lose it)."""
    if _installed is not None:
        _installed.save()
