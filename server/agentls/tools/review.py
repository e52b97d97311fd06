"""Review of an edit before it lands: the user sees the change in the editor and accepts or rejects it.

The permission mode ``review`` (for ``write`` and ``edit``) lets the call run but marks
it: before writing, the tool sends the old and the new text of the file to the client
(``agent/reviewEdit``, with the change's hunks), which shows a diff. Only an accepted change
is written: the whole of it, the hunks the user chose, or the text the user made of it; a
rejection is the tool's error result, with the user's reason. An abort ends the review
(the request is cancelled at the client) and the call with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.ai.abort import AbortError, AbortSignal, unless_aborted
from agentls.tools.hunks import Hunk, compose, diff_hunks, hunk_list
from agentls.tools.text_diff import unified_diff
from agentls.tools.workspace import ToolInputError

SendReview = Callable[[dict[str, Any]], Awaitable[Any]]
"""Sends ``agent/reviewEdit`` with these params; the client's answer (``None`` when it cancelled)."""


@dataclass(frozen=True)
class Accepted:
    """What the user let land: the text to write, and what to tell the model when it is not the proposal."""

    text: str
    report: str | None = None
    """``The user accepted hunks 1 and 3 …; this is what was written:`` and the diff of what landed."""


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
    ) -> Accepted:
        """What the user accepted; raises :class:`ToolInputError` when nothing (nothing written)."""
        self._wanted.discard(tool_call_id)
        hunks = await asyncio.to_thread(diff_hunks, old_text, new_text)
        params = {
            "sessionId": self.session_id,
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "uri": path.as_uri(),
            "path": name,
            "oldText": old_text,
            "newText": new_text,
            "hunks": [hunk.wire() for hunk in hunks],
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
            assert isinstance(answer, dict)
            return _accepted(answer, name, old_text, new_text, hunks)
        reason = answer.get("reason") if isinstance(answer, dict) else None
        because = f": {reason}" if isinstance(reason, str) and reason.strip() else ""
        raise ToolInputError(
            f"The user rejected the change to {name}{because}. Nothing was written; "
            "do not retry the same change without asking."
        )


def _accepted(answer: dict[str, Any], name: str, old: str, new: str, hunks: list[Hunk]) -> Accepted:
    """The change an ``accept`` answer lets land: all of it, its ``hunks``, or the user's ``text``."""
    chosen, text = answer.get("hunks"), answer.get("text")
    if chosen is not None and text is not None:
        raise _bad_answer(name, "it has both hunks and text")
    if isinstance(text, str):
        if text == new:
            return Accepted(new)
        report = f"The user edited the change to {name} before accepting it; this is what was written:"
        return Accepted(text, f"{report}\n\n{unified_diff(old, text, name)}")
    if text is not None:
        raise _bad_answer(name, "its text is not a string")
    if chosen is None:
        return Accepted(new)
    if not isinstance(chosen, list) or not all(type(i) is int for i in chosen):
        raise _bad_answer(name, "its hunks are not a list of hunk indexes")
    if any(not 0 <= i < len(hunks) for i in chosen) or len(set(chosen)) != len(chosen):
        raise _bad_answer(name, f"its hunks must be distinct indexes from 0 to {len(hunks) - 1}")
    taken = set(chosen)
    if len(taken) == len(hunks):
        return Accepted(new)
    if not taken:
        raise ToolInputError(
            f"The user rejected every hunk of the change to {name}. Nothing was written; "
            "do not retry the same change without asking."
        )
    left = [i for i in range(len(hunks)) if i not in taken]
    landed = compose(old, new, taken)
    rejected = ", ".join(hunks[i].header for i in left)
    report = (
        f"The user accepted {hunk_list(taken)} of {len(hunks)} of the change to {name} and rejected "
        f"{hunk_list(left)} ({rejected}); this is what was written:"
    )
    return Accepted(landed, f"{report}\n\n{unified_diff(old, landed, name)}")


def _bad_answer(name: str, why: str) -> ToolInputError:
    return ToolInputError(
        f"The review of the change to {name} had an answer agentls cannot use ({why}); nothing was written."
    )
