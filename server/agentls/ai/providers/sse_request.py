"""One streamed ``POST`` of an HTTP provider, read as server-sent events.

The skeleton that the Anthropic and chat-completions providers share; what differs
between their APIs comes in a :class:`SsePost`: the URL and headers, how an error
status reads (:class:`StatusError`), and an :class:`EventReader` that turns the
events of one response into the assistant message.

:func:`stream_sse` builds the request once (a request that cannot be built, such as
content JSON cannot encode or an option of the wrong type, ends the stream with
"Cannot build the request: ..." and sends nothing), then runs it under
:func:`~agentls.ai.providers.streaming.stream_response`'s retry loop and abort signal.
Each attempt runs the payload hook (the first time only), posts the body, waits for
the headers and for each chunk at most the idle timeout, and raises on an error
status; :func:`classify` says what a failed attempt means.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from agentls.ai.event_stream import AssistantMessageEventStream
from agentls.ai.json_codec import json_bytes
from agentls.ai.models import error_stream
from agentls.ai.providers.catalog import ProviderSpec
from agentls.ai.providers.clients import http_client
from agentls.ai.providers.retry import (
    Failure,
    Timeouts,
    idle_limited,
    idle_wait,
    request_settings,
    status_failure,
    transport_failure,
)
from agentls.ai.providers.sse import ServerSentEvent, iter_sse
from agentls.ai.providers.streaming import ResponseBuilder, payload_hook, response_hook, stream_response
from agentls.ai.types import Model, StreamOptions

if TYPE_CHECKING:
    import httpx  # the stack is imported with the first request (clients.http_client)

# --- what a failed attempt raises -------------------------------------------------------------


class StatusError(Exception):
    """An error status; ``str()`` is what the provider made of the body."""

    def __init__(self, status: int, headers: Mapping[str, str], message: str) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class StreamError(Exception):
    """An error sent inside the stream; ``summary`` names it in the retry log line."""

    def __init__(self, message: str, summary: str, retryable: bool) -> None:
        super().__init__(message)
        self.summary = summary
        self.retryable = retryable


class StreamEnded(Exception):
    """The stream ended before the response was complete; if nothing was streamed yet, a retry may work."""


def classify(error: BaseException) -> Failure:
    """What a failed attempt means: retryable before any content, and the message to show."""
    if isinstance(error, StatusError):
        return status_failure(error.status, error.headers, str(error))
    if isinstance(error, StreamError):
        return Failure(str(error), error.summary, retryable=error.retryable)
    if isinstance(error, StreamEnded):
        return Failure(str(error), "stream ended early", retryable=True)
    transport = transport_failure(error)
    if transport is not None:
        return transport
    return Failure(str(error) or type(error).__name__, type(error).__name__)


# --- what differs between APIs ----------------------------------------------------------------


class EventReader(Protocol):
    """Reads the events of one response into a :class:`ResponseBuilder`."""

    def feed(self, event: ServerSentEvent) -> bool:
        """Apply one event; true when the stream says it is complete (nothing more is read)."""
        ...

    def end(self) -> None:
        """The body ended (the connection is closed): settle the message, or raise :class:`StreamEnded`."""
        ...


@dataclass(frozen=True, kw_only=True)
class SsePost:
    """One API's request: its body, where it goes, and how its response reads."""

    url: str
    body: dict[str, Any]
    headers: dict[str, str]
    status_error: Callable[[int, httpx.Headers, str], StatusError]
    """The error of a status of 400 or more, from the status, the headers and the body's text."""
    reader: Callable[[ResponseBuilder], EventReader]
    """A reader for one attempt's response."""
    stream_after_hook: bool = False
    """Set ``"stream": true`` again on a body the payload hook replaced (pi-ai's Anthropic provider does)."""
    encode: Callable[[dict[str, Any]], bytes] = json_bytes
    """The body's JSON (a provider's :class:`~agentls.ai.providers.body_bytes.BodyEncoder` keeps its
    messages' bytes between requests); a body a payload hook saw is encoded afresh."""


# --- the request ------------------------------------------------------------------------------


def stream_sse(
    spec: ProviderSpec,
    model: Model,
    options: StreamOptions | None,
    prepare: Callable[[], SsePost],
    logger: logging.Logger,
) -> AssistantMessageEventStream:
    """Stream one response of the request ``prepare`` builds (a ``StreamFn``'s body): it never raises."""
    try:
        post = prepare()
    except Exception as error:  # content the API cannot take: an error message, not an exception
        return error_stream(model, f"Cannot build the request: {error}")
    policy, timeouts = request_settings(spec.retry, spec.timeouts, options)
    attempt = _Attempts(model, options, post, timeouts)

    def classify_attempt(error: BaseException) -> Failure:
        """:func:`classify`; a refused key's failure (401) says where the key came from."""
        failure = classify(error)
        if isinstance(error, StatusError) and error.status == 401:
            return replace(failure, message=f"{failure.message.rstrip('.')}. {spec.refused_key(options)}")
        return failure

    return stream_response(model, options, attempt, classify=classify_attempt, policy=policy, logger=logger)


class _Attempts:
    """One request, as many times as it is attempted (the payload hook runs once)."""

    def __init__(
        self, model: Model, options: StreamOptions | None, post: SsePost, timeouts: Timeouts
    ) -> None:
        self.model = model
        self.options = options
        self.post = post
        self.body = post.body
        self.timeouts = timeouts
        self._payload_ready = False
        hooked = options is not None and options.on_payload is not None
        self._encode = json_bytes if hooked else post.encode
        """A hook may have changed the messages in place: their kept bytes are not theirs then."""

    async def _payload(self) -> dict[str, Any]:
        if not self._payload_ready:
            replaced = await payload_hook(self.options, self.body, self.model)
            if replaced is not self.body and self.post.stream_after_hook:
                replaced = {**replaced, "stream": True}
            self.body = replaced
            self._payload_ready = True
        return self.body

    async def __call__(self, builder: ResponseBuilder) -> None:
        payload = await self._payload()
        post = self.post
        idle = self.timeouts.idle
        client = http_client(post.url, self.timeouts.connect)
        async with contextlib.AsyncExitStack() as stack:
            request = client.stream("POST", post.url, content=self._encode(payload), headers=post.headers)
            response = await idle_wait(stack.enter_async_context(request), idle, "response")
            if response.status_code >= 400:
                body = await idle_wait(response.aread(), idle, "response")
                raise post.status_error(
                    response.status_code, response.headers, body.decode("utf-8", "replace")
                )
            await response_hook(self.options, response.status_code, response.headers, self.model)
            reader = post.reader(builder)
            feed = reader.feed
            events = idle_limited(iter_sse(response.aiter_bytes()), idle, "data")
            async for event in events:
                if feed(event):
                    await _rest_of_body(events)
                    break
        reader.end()


BODY_END_SECONDS = 1.0
"""How long the rest of a body may take to come once its stream said it is complete."""


async def _rest_of_body(events: AsyncIterator[ServerSentEvent]) -> None:
    """Read, and ignore, what follows the stream's end (chat completions' ``[DONE]``), as pi-ai's
    OpenAI client does: a response read to its end leaves its connection to the next request
    (one left unread was closed, and every turn paid a new connection). A server that holds the
    body open is left after :data:`BODY_END_SECONDS`; whatever fails then fails after a complete
    response, which stands."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(BODY_END_SECONDS):
            async for _ in events:
                pass
