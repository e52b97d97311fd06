"""The event loop of the servers (``agentls serve``, ``serve --listen``, ``agentls acp``): uvloop's
where it is installed, else asyncio's own.

uvloop's loop (libuv, in C) schedules callbacks, timers and socket reads for less than asyncio's
pure-Python one. In alternated pairs on the bench's workloads (both APIs; docs/benchmarks.md,
thirteenth round) a run took 0.87-1.02x of the CPU it takes on asyncio's loop, 0.95x in the
median of eleven comparisons, and on big-context the loop's own share of the samples fell from
17 % to 9 %; importing it adds 3-4 ms to a start. It is a dependency on Linux and macOS;
elsewhere (Windows) asyncio's loop runs. ``AGENTLS_EVENT_LOOP=asyncio`` chooses asyncio's loop
where uvloop is installed (to tell a uvloop problem from ours); ``AGENTLS_EVENT_LOOP=uvloop``
requires uvloop.

The command line's own commands (``run``, ``chat``, ``models``, ``sessions``) keep asyncio's
loop: uvloop leaves a file descriptor it watched non-blocking, and a terminal left so after
``chat`` makes the shell's next read fail (and the shell exit).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOP_ENV", "check_choice", "loop_factory", "run"]

EVENT_LOOP_ENV = "AGENTLS_EVENT_LOOP"

_T = TypeVar("_T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """What makes the loop :data:`EVENT_LOOP_ENV` asks for (unset or empty: uvloop's if it can be
    imported, else asyncio's); ``ValueError`` as :func:`check_choice` says."""
    chosen = _chosen()
    if chosen == "asyncio":
        return asyncio.new_event_loop
    try:
        import uvloop
    except ImportError:
        if chosen:
            raise ValueError(_NOT_INSTALLED) from None
        return asyncio.new_event_loop
    return uvloop.new_event_loop


def check_choice() -> None:
    """``ValueError`` now if :data:`EVENT_LOOP_ENV` holds another value than ``uvloop`` or
    ``asyncio``, or asks for uvloop where it cannot be imported."""
    if _chosen() == "uvloop":
        loop_factory()


_NOT_INSTALLED = f"{EVENT_LOOP_ENV}=uvloop, but uvloop is not installed"


def _chosen() -> str:
    chosen = os.environ.get(EVENT_LOOP_ENV, "").strip()
    if chosen not in ("", "uvloop", "asyncio"):
        raise ValueError(f"{EVENT_LOOP_ENV} must be 'uvloop' or 'asyncio', not {chosen!r}")
    return chosen


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` makes."""
    try:
        factory = loop_factory()
    except ValueError:
        main.close()  # never awaited: no "coroutine was never awaited" warning besides the error
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
