"""Review of an edit before it lands: the user sees the change in the editor and accepts or rejects it.

The permission mode ``review`` (for ``write`` and ``edit``) lets the call run but marks
it: before writing, the tool sends the old and the new text of the file to the client
(``agent/reviewEdit``), which shows a diff. Only an accepted change is written; a
rejection is the tool's error result, with the user's reason. An abort ends the review
(the request is cancelled at the client) and the call with it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentls.ai.abort import AbortError, AbortSignal, unless_aborted
from agentls.tools.workspace import ToolInputError

SendReview = Callable[[dict[str, Any]], Awaitable[Any]]
"""Sends ``agent/reviewEdit`` with these params; the client's answer (``None`` when it cancelled)."""


class EditReviews:
    """The reviews of one session: which calls need one, and asking for it."""

    def __init__(self, session_id: str, send: SendReview) -> None:
        self.session_id = session_id
        self._send = send
        self._wanted: set[str] = set()

    def require(self, tool_call_id: str) -> None:
        """The permission policy says this call's change must be reviewed before it is written."""
        self._wanted.add(tool_call_id)

    def wants(self, tool_call_id: str) -> bool:
        return tool_call_id in self._wanted

    async def review(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        path: Path,
        name: str,
        old_text: str,
        new_text: str,
        signal: AbortSignal | None,
    ) -> None:
        """Returns when the user accepted; raises :class:`ToolInputError` when not (nothing written)."""
        self._wanted.discard(tool_call_id)
        params = {
            "sessionId": self.session_id,
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "uri": path.as_uri(),
            "path": name,
            "oldText": old_text,
            "newText": new_text,
        }
        try:
            answer = await unless_aborted(self._send(params), signal)
        except AbortError:
            raise
        except Exception as error:  # the client failed to answer: never write on a failure
            raise ToolInputError(
                f"The review of the change to {name} failed ({error}); nothing was written."
            ) from None
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if outcome == "accept":
            return
        reason = answer.get("reason") if isinstance(answer, dict) else None
        because = f": {reason}" if isinstance(reason, str) and reason.strip() else ""
        raise ToolInputError(
            f"The user rejected the change to {name}{because}. Nothing was written; "
            "do not retry the same change without asking."
        )
