"""Push-based async event streams with a final result (pi-ai's ``EventStream``).

A producer ``push``es events and finally ``end``s the stream; any number of
consumers iterate with ``async for`` and/or ``await stream.result()``. The result
is fixed by the first completing event (``is_complete``) or by ``end(result)``.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

from agentls.ai.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from agentls.ai.types import AssistantMessage

E = TypeVar("E")
R = TypeVar("R")

_UNSET = object()


class EventStream(Generic[E, R]):
    def __init__(self, is_complete: Callable[[E], bool], extract_result: Callable[[E], R]) -> None:
        self._is_complete = is_complete
        self._extract_result = extract_result
        self._queue: deque[E] = deque()
        self._waiting: deque[asyncio.Future[tuple[bool, E | None]]] = deque()
        self._result_waiters: list[asyncio.Future[R]] = []
        self._result: object = _UNSET
        self.done = False

    def push(self, event: E) -> None:
        if self.done:
            return
        if self._is_complete(event):
            self.done = True
            self._resolve(self._extract_result(event))
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result((False, event))
                return
        self._queue.append(event)

    def end(self, result: R | None = None) -> None:
        self.done = True
        if result is not None:
            self._resolve(result)
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result((True, None))

    def _resolve(self, result: R) -> None:
        if self._result is not _UNSET:
            return
        self._result = result
        for waiter in self._result_waiters:
            if not waiter.done():
                waiter.set_result(result)
        self._result_waiters.clear()

    async def __aiter__(self) -> AsyncIterator[E]:
        while True:
            if self._queue:
                yield self._queue.popleft()
            elif self.done:
                return
            else:
                waiter: asyncio.Future[tuple[bool, E | None]] = asyncio.get_running_loop().create_future()
                self._waiting.append(waiter)
                finished, event = await waiter
                if finished:
                    return
                yield event  # type: ignore[misc]

    async def result(self) -> R:
        """The final result; waits until the stream has one."""
        if self._result is not _UNSET:
            return self._result  # type: ignore[return-value]
        waiter: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._result_waiters.append(waiter)
        return await waiter


def _assistant_result(event: AssistantMessageEvent) -> AssistantMessage:
    if isinstance(event, DoneEvent):
        return event.message
    if isinstance(event, ErrorEvent):
        return event.error
    raise ValueError("Unexpected event type for final result")


class AssistantMessageEventStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """The stream a provider returns: ends with ``done`` or ``error``, whose message is the result."""

    def __init__(self) -> None:
        super().__init__(lambda event: isinstance(event, DoneEvent | ErrorEvent), _assistant_result)
