"""Retries, backoff and timeouts shared by the HTTP providers.

A provider request is retried when it fails *before any content was streamed*
(a retry then cannot duplicate output): on HTTP 408, 409, 429 and 5xx (Anthropic's
529 "overloaded" included), on an error event that says the same mid-stream, on
connection errors and on a stall. The wait doubles from a base delay with up to 25 %
jitter (pi-ai's ``provider-retry.js``); a server's ``retry-after-ms`` / ``retry-after``
header is honoured instead, unless it asks for longer than the maximum delay, which
fails at once rather than leaving the user waiting. Each retry is logged at WARNING
level, which the server forwards to the client as ``window/logMessage``.

Timeouts: connecting has its own limit; after that, the stream may stay silent for
at most the idle timeout, both while waiting for the response headers
(:func:`idle_wait`) and between two chunks of the body (:func:`idle_limited`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from agentls.ai.abort import AbortError, AbortSignal, sleep_or_abort
from agentls.ai.types import StreamOptions

T = TypeVar("T")

DEFAULT_MAX_RETRIES = 3
DEFAULT_RETRY_BASE_DELAY_MS = 500
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
DEFAULT_CONNECT_TIMEOUT_MS = 10_000
DEFAULT_IDLE_TIMEOUT_MS = 300_000
"""Five minutes: a local server may think that long over a big prompt before its first token."""


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    max_retries: int = DEFAULT_MAX_RETRIES
    base_delay_ms: int = DEFAULT_RETRY_BASE_DELAY_MS
    max_delay_ms: int = DEFAULT_MAX_RETRY_DELAY_MS
    """The longest wait: caps the backoff; a longer ``retry-after`` fails at once (0: no cap)."""

    def delay_seconds(self, retry_index: int, requested_ms: float | None) -> float:
        """The wait before retry number ``retry_index`` (0-based); raises :class:`RetryDelayTooLong`."""
        if requested_ms is not None:
            if 0 < self.max_delay_ms < requested_ms:
                raise RetryDelayTooLong(requested_ms, self.max_delay_ms)
            return max(0.0, requested_ms) / 1000
        backoff = self.base_delay_ms * 2**retry_index
        if self.max_delay_ms > 0:
            backoff = min(backoff, self.max_delay_ms)
        return backoff * (1 - random.random() * 0.25) / 1000


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    connect_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    idle_ms: int = DEFAULT_IDLE_TIMEOUT_MS

    @property
    def connect(self) -> float:
        return self.connect_ms / 1000

    @property
    def idle(self) -> float:
        return self.idle_ms / 1000


def request_settings(
    policy: RetryPolicy, timeouts: Timeouts, options: StreamOptions | None
) -> tuple[RetryPolicy, Timeouts]:
    """A provider's retry policy and timeouts, with what one request's options override.

    ``timeout_ms`` of the options is the idle timeout: the connect timeout is the provider's.
    """
    if options is None:
        return policy, timeouts
    if options.max_retries is not None:
        policy = dataclasses.replace(policy, max_retries=options.max_retries)
    if options.max_retry_delay_ms is not None:
        policy = dataclasses.replace(policy, max_delay_ms=options.max_retry_delay_ms)
    if options.timeout_ms is not None:
        timeouts = dataclasses.replace(timeouts, idle_ms=options.timeout_ms)
    return policy, timeouts


class RetryDelayTooLong(Exception):
    def __init__(self, requested_ms: float, max_ms: int) -> None:
        super().__init__(
            f"the server asked to retry in {requested_ms / 1000:.0f} s, more than the maximum retry delay "
            f"of {max_ms / 1000:.0f} s"
        )


class StreamStalled(Exception):
    """Nothing arrived from the server within the idle timeout."""

    def __init__(self, seconds: float, waiting_for: str) -> None:
        super().__init__(f"the server sent no {waiting_for} for {seconds:g} s (idle timeout)")


# --- what a failure means -------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """A failed attempt as the retry loop sees it.

    ``summary`` is short, for the retry log line ("429 rate limited"); ``message`` is
    what the assistant message's ``errorMessage`` says if the failure is final.
    """

    message: str
    summary: str
    retryable: bool = False
    retry_after_ms: float | None = None


_STATUS_SUMMARIES = {408: "request timeout", 409: "conflict", 429: "rate limited", 529: "overloaded"}


def status_failure(status: int, headers: Mapping[str, str], message: str) -> Failure:
    """An HTTP error status: retryable as the provider SDKs decide (``x-should-retry`` first)."""
    should_retry = (headers.get("x-should-retry") or "").lower()
    if should_retry in ("true", "false"):
        retryable = should_retry == "true"
    else:
        retryable = status in (408, 409, 429) or status >= 500
    summary = f"{status} {_STATUS_SUMMARIES.get(status, 'server error' if status >= 500 else 'error')}"
    return Failure(message, summary, retryable, retry_after_ms(headers))


def transport_failure(error: BaseException) -> Failure | None:
    """A stall, a refused or lost connection: retryable (the loop retries only before any content)."""
    if isinstance(error, StreamStalled):
        return Failure(f"Stream stalled: {error}", "stream stalled", retryable=True)
    if isinstance(error, OSError) or _is_transport_error(error):
        detail = str(error) or type(error).__name__
        return Failure(f"Connection error: {detail}", "connection error", retryable=True)
    return None


def _is_transport_error(error: BaseException) -> bool:
    """httpx's ``TransportError``, without importing httpx (providers without HTTP do not need it)."""
    return any(
        cls.__name__ == "TransportError" and cls.__module__.startswith("httpx") for cls in type(error).__mro__
    )


def retry_after_ms(headers: Mapping[str, str]) -> float | None:
    """The delay a server asks for: ``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value) * 1000
    except ValueError:
        pass
    import email.utils  # a date in Retry-After is rare; the module is not needed at start

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return (when.timestamp() - time.time()) * 1000


# --- the loop -------------------------------------------------------------------------------


class Aborted(Exception):
    """The request's abort signal fired."""


async def abortable(awaitable: Awaitable[T], signal: AbortSignal | None) -> T:
    """Await ``awaitable`` in a task that the signal cancels; raises :class:`Aborted` then.

    Cancelling the task is what cancels the HTTP request: the client's context
    managers close the connection on the way out.
    """
    if signal is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)

    def cancel() -> None:
        task.cancel()

    remove = signal.add_listener(cancel)
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if signal.aborted and task.cancelled() and not (current is not None and current.cancelling()):
            raise Aborted() from None
        raise
    finally:
        remove()


async def with_retries(
    attempt: Callable[[], Awaitable[None]],
    *,
    classify: Callable[[BaseException], Failure],
    may_retry: Callable[[], bool],
    policy: RetryPolicy,
    signal: AbortSignal | None,
    logger: logging.Logger,
    label: str,
) -> Failure | None:
    """Run ``attempt`` until it succeeds (``None``) or fails for good (the :class:`Failure`).

    ``may_retry`` says whether a failed attempt can still be retried (no content
    streamed yet). Raises :class:`Aborted` when the signal fires, also during a wait.
    """
    retry_index = 0
    while True:
        try:
            await abortable(attempt(), signal)
            return None
        except (Aborted, AbortError):
            raise Aborted() from None
        except Exception as error:
            if signal is not None and signal.aborted:
                raise Aborted() from None
            failure = classify(error)
        if not failure.retryable or retry_index >= policy.max_retries or not may_retry():
            return failure
        try:
            delay = policy.delay_seconds(retry_index, failure.retry_after_ms)
        except RetryDelayTooLong as too_long:
            return Failure(f"{failure.message} ({too_long})", failure.summary)
        logger.warning(
            "%s: %s, retrying in %g s (attempt %d of %d)",
            label,
            failure.summary,
            round(delay, 2),
            retry_index + 2,
            policy.max_retries + 1,
        )
        if not await sleep_or_abort(delay, signal):
            raise Aborted()
        retry_index += 1


async def idle_wait(awaitable: Awaitable[T], seconds: float, waiting_for: str) -> T:
    """``awaitable``'s result; raises :class:`StreamStalled` when it takes longer than ``seconds``."""
    try:
        async with asyncio.timeout(seconds) as deadline:
            return await awaitable
    except TimeoutError:
        if deadline.expired():
            raise StreamStalled(seconds, waiting_for) from None
        raise


async def idle_limited(source: AsyncIterable[T], seconds: float, waiting_for: str) -> AsyncIterator[T]:
    """The items of ``source``; raises :class:`StreamStalled` if one takes longer than ``seconds``.

    One timer for the whole stream, not one per item: each item only notes the time it
    came, and the timer, when it fires, looks at how long the current wait has lasted and
    either ends it (cancelling this task while it waits for ``source``, never while the
    consumer works on an item) or is set again for the rest of the time.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    iterator = aiter(source)
    waiting_since: float | None = None
    stalled = False

    def check() -> None:
        nonlocal timer, stalled
        now = loop.time()
        if waiting_since is not None and now - waiting_since >= seconds and task is not None:
            stalled = True
            task.cancel()
        else:
            timer = loop.call_at((waiting_since if waiting_since is not None else now) + seconds, check)

    timer = loop.call_at(loop.time() + seconds, check)
    try:
        while True:
            waiting_since = loop.time()
            try:
                item = await anext(iterator)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if stalled and task is not None and task.uncancel() == 0:
                    raise StreamStalled(seconds, waiting_for) from None
                raise
            finally:
                waiting_since = None
            yield item
    finally:
        timer.cancel()
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
