"""Which clients a session's notifications go to, and the notifications kept for a client that comes back.

A client is attached to the sessions it created, loaded or attached to (``agent/attach``). Each
notification of a session is encoded once, written to every attached client and kept in the
session's :class:`Replay`, so that ``agent/attach {since}`` can send a client what it missed
(``protocol.md``, Live sessions).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

REPLAY_COUNT = 4096
"""Notifications a session of the per-user server keeps for ``agent/attach`` (beyond those
:meth:`Replay.keep` must keep)."""

REPLAY_BYTES = 4 * 1024 * 1024
"""The most their frames may take (beyond those :meth:`Replay.keep` must keep)."""

Client = TypeVar("Client")


@dataclass(frozen=True, slots=True)
class Replayed:
    """What :meth:`Replay.since` found: the frames to send again, or a gap."""

    frames: list[bytes]
    gap: bool


class Replay:
    """A session's last notifications, as the frames that were sent, numbered by their ``seq``: at
    most ``count`` of them and ``size`` bytes, beyond those :meth:`keep` must keep."""

    def __init__(self, count: int, size: int) -> None:
        self._count = count
        self._size = size
        self._frames: deque[tuple[int, bytes]] = deque()
        self._bytes = 0

    def keep(self, seq: int, frame: bytes, keep_after: int) -> None:
        """Keep ``frame``; drop the oldest past the bounds, but none after ``keep_after`` (the point that
        ``agent/getMessages`` reflects: a client that reloads must find everything after it)."""
        self._frames.append((seq, frame))
        self._bytes += len(frame)
        while (len(self._frames) > self._count or self._bytes > self._size) and self._frames[0][
            0
        ] <= keep_after:
            _, dropped = self._frames.popleft()
            self._bytes -= len(dropped)

    def since(self, since: int, last: int) -> Replayed:
        """The frames after ``since``; a gap when some of them are gone, or when ``since`` is past
        ``last`` (the session's last ``seq``: the client numbers from another server's life)."""
        if since > last:
            return Replayed([], gap=True)
        if since == last:
            return Replayed([], gap=False)
        if not self._frames or self._frames[0][0] > since + 1:
            return Replayed([], gap=True)
        return Replayed([frame for seq, frame in self._frames if seq > since], gap=False)


class Attachments(Generic[Client]):
    """The clients attached to one session, in the order they attached, and its :class:`Replay`
    (``count`` and ``size``: its bounds)."""

    def __init__(self, count: int, size: int) -> None:
        self.clients: list[Client] = []
        self.replay = Replay(count, size)
        self.starter: Client | None = None
        """The client that started the session's last run (it gets the run's edits first)."""
        self.attached: list[Callable[[Client], None]] = []
        """Called with each client that attaches (an open question is asked to it too)."""
        self.detached: list[Callable[[Client], None]] = []
        """Called with each client that detaches or goes away (its open questions are withdrawn)."""

    def attach(self, client: Client) -> None:
        if client not in self.clients:
            self.clients.append(client)
            for callback in list(self.attached):
                callback(client)

    def detach(self, client: Client) -> bool:
        if client not in self.clients:
            return False
        self.clients.remove(client)
        if self.starter is client:
            self.starter = None
        for callback in list(self.detached):
            callback(client)
        return True

    def preferred(self) -> list[Client]:
        """The attached clients, the run's starter first, then in the order they attached."""
        starter = self.starter
        if starter is None or starter not in self.clients:
            return list(self.clients)
        return [starter, *(client for client in self.clients if client is not starter)]
