"""Questions to the user (permissions, reviews) when several clients, or none, may be attached.

A question goes to every attached client that can answer it; the first answer wins and the
others' requests are cancelled (``$/cancelRequest``: an editor closes the question). A client
that attaches while it is open is asked too. A client that detaches or goes away was not asked
(a detached client's question is cancelled). While no
client is asked, the question waits for one at most ``timeout`` seconds, and is then answered
by ``unanswered(reason)``: the model is told nobody was there (``protocol.md``, Live sessions).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agentls.fronts.lsp.attachments import Attachments
from agentls.fronts.lsp.peer import Peer
from agentls.fronts.lsp.rpc import ClientGone

T = TypeVar("T")

DEFAULT_QUESTION_SECONDS = 300.0
"""How long a question waits for a client when none is attached (``--question-timeout``)."""


class Questions:
    """The open questions of a host's sessions (``attachments``: the clients of a session, by its id)."""

    def __init__(
        self, attachments: Callable[[str], Attachments[Peer]], timeout: float = DEFAULT_QUESTION_SECONDS
    ) -> None:
        self._attachments = attachments
        self.timeout = timeout

    async def ask(
        self,
        session_id: str,
        can_answer: Callable[[Peer], bool],
        ask_one: Callable[[Peer], Awaitable[T]],
        unanswered: Callable[[str], T],
    ) -> T:
        """The first answer of a client asked with ``ask_one`` (module doc)."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[T] = loop.create_future()
        asked: dict[Peer, asyncio.Task[T]] = {}
        waiting: asyncio.TimerHandle | None = None

        def wait_for_a_client() -> None:
            nonlocal waiting
            if waiting is None and not answer.done():
                waiting = loop.call_later(self.timeout, give_up)

        def give_up() -> None:
            if not answer.done():
                seconds = f"{self.timeout:g}"
                answer.set_result(unanswered(f"no client was attached to answer within {seconds} s"))

        def answered(client: Peer, task: asyncio.Task[T]) -> None:
            if asked.get(client) is task:
                del asked[client]
            if answer.done():
                return
            if task.cancelled() or isinstance(task.exception(), ClientGone):  # withdrawn, or gone
                if not asked:
                    wait_for_a_client()
                return
            error = task.exception()
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(task.result())

        def ask_client(client: Peer) -> None:
            nonlocal waiting
            if answer.done() or client in asked or not can_answer(client):
                return
            if waiting is not None:
                waiting.cancel()
                waiting = None
            task = loop.create_task(ask_one(client))
            asked[client] = task
            task.add_done_callback(lambda done: answered(client, done))

        def withdraw(client: Peer) -> None:
            task = asked.get(client)
            if task is not None:
                task.cancel()  # its request is cancelled at the client ($/cancelRequest)

        attachments = self._attachments(session_id)
        attachments.attached.append(ask_client)
        attachments.detached.append(withdraw)
        try:
            for client in attachments.preferred():
                ask_client(client)
            if not asked:
                wait_for_a_client()
            return await answer
        finally:
            attachments.attached.remove(ask_client)
            attachments.detached.remove(withdraw)
            if waiting is not None:
                waiting.cancel()
            for task in asked.values():  # the others' requests are cancelled at their clients
                task.cancel()
            for task in list(asked.values()):
                with contextlib.suppress(BaseException):
                    await task
