"""Abort signals, modelled on the DOM's ``AbortController`` that Pi passes around.

Cancellation in the kernel is explicit and cooperative: the same signal object is
handed to the stream function, the hooks and the tools, and each of them decides
how to stop. Listeners run synchronously inside :meth:`AbortController.abort`, so
code that registered one sees the abort before ``abort()`` returns, as in JavaScript.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class AbortError(Exception):
    """Raised by :meth:`AbortSignal.throw_if_aborted` and :meth:`AbortSignal.wait_or_raise`."""


class AbortSignal:
    """Read side of an :class:`AbortController`."""

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._listeners: list[Callable[[], None]] = []
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> object:
        return self._reason

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` once on abort (at once if already aborted); returns a remover."""
        if self._aborted:
            listener()
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> None:
        """Wait until the signal is aborted."""
        if self._aborted:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def throw_if_aborted(self, message: str = "Operation aborted") -> None:
        if self._aborted:
            raise AbortError(message)

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


class AbortController:
    """Owns an :class:`AbortSignal` and aborts it."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        self.signal._abort(reason if reason is not None else AbortError("This operation was aborted"))


async def sleep_or_abort(seconds: float, signal: AbortSignal | None) -> bool:
    """Sleep ``seconds``; return early with ``False`` if ``signal`` aborts first."""
    if signal is None:
        await asyncio.sleep(seconds)
        return True
    if signal.aborted:
        return False
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=seconds)
    finally:
        waiter.cancel()
    return not done


async def unless_aborted(awaitable: Awaitable[T], signal: AbortSignal | None) -> T:
    """The result of ``awaitable``, or :class:`AbortError` once ``signal`` aborts (it is cancelled then).

    For waits on something outside the process (a client's answer) that may never
    come: an abort must still end them.
    """
    task = asyncio.ensure_future(awaitable)
    if signal is None:
        return await task
    aborted = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
    if not task.done():
        task.cancel()
        raise AbortError("Operation aborted")
    return task.result()
