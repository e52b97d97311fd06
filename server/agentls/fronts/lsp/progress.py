"""Tool executions mirrored as LSP work-done progress, for editors without agentls-specific code.

For every ``tool_execution_start`` the server creates a progress token
(``window/workDoneProgress/create``) and sends ``$/progress`` begin, a report per
``tool_execution_update`` (the latest line of partial output) and end. Only when the
client advertised ``window.workDoneProgress``. The operations of one token run in order
(begin only after the client accepted the token); a client that refuses the token gets
nothing more for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from agentls.tools.catalogue import progress_title

logger = logging.getLogger(__name__)


def _last_line(result: Any) -> str | None:
    content = result.get("content") if isinstance(result, dict) else None
    texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    lines = [line for line in "\n".join(texts).splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[-1]
    return line if len(line) <= 200 else line[:199] + "…"


class ToolProgress:
    """Turns ``agent/event`` tool events into ``$/progress`` for one server."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._chains: dict[str, asyncio.Task[bool]] = {}

    def enabled(self) -> bool:
        return bool(self.server.client_capabilities.work_done_progress)

    def on_event(self, params: dict[str, Any]) -> None:
        event = params.get("event") or {}
        kind = event.get("type")
        if kind not in ("tool_execution_start", "tool_execution_update", "tool_execution_end"):
            return
        token = f"agentls/{params.get('sessionId')}/{event.get('toolCallId')}"
        if kind == "tool_execution_start":
            title = progress_title(str(event.get("toolName")), event.get("args"))
            self._then(token, lambda: self._progress(token, {"kind": "begin", "title": title}), create=True)
        elif kind == "tool_execution_update":
            message = _last_line(event.get("partialResult"))
            if message is not None:
                self._then(token, lambda: self._progress(token, {"kind": "report", "message": message}))
        else:
            message = "failed" if event.get("isError") else "done"
            self._then(token, lambda: self._progress(token, {"kind": "end", "message": message}), last=True)

    def _progress(self, token: str, value: dict[str, Any]) -> None:
        self.server.connection.notify("$/progress", {"token": token, "value": value})

    def _then(
        self, token: str, send: Callable[[], None], *, create: bool = False, last: bool = False
    ) -> None:
        previous = self._chains.get(token)
        if previous is None and not create:
            return

        async def step() -> bool:
            if previous is not None and not await previous:
                return False
            if create:
                try:
                    seconds = self.server.options.apply_edit_timeout_ms / 1000
                    await self.server.connection.request_client(
                        "window/workDoneProgress/create", {"token": token}, seconds
                    )
                except Exception as error:  # refused or unanswered: no progress for this tool
                    logger.info("client refused progress token %s: %s", token, error)
                    return False
            send()
            return True

        task = asyncio.get_running_loop().create_task(step())
        if last:
            self._chains.pop(token, None)
        else:
            self._chains[token] = task
