"""A session named as the user types it, its id or its start (`run --session`, `chat`, `chat --attach`)."""

from __future__ import annotations

from agentls.client import AgentClient, AgentClientError
from agentls.protocol import SessionInfo

SHOWN_MATCHES = 4
"""How many of the sessions an ambiguous prefix matches are named."""


async def stored_session(client: AgentClient, typed: str) -> str:
    """The id of the one stored session whose id starts with ``typed``.

    Raises :class:`AgentClientError` (``unknownSession``) when none does, or when several do
    (naming them, so the user sees how much more to type).
    """
    typed = typed.strip()
    missing = f"no stored session {typed} (agentls sessions lists them)"
    return _one_starting_with(await client.list_sessions(), typed, missing, "sessions").session_id


async def live_session(client: AgentClient, typed: str, folder: str) -> SessionInfo:
    """The live session of the per-user server that ``typed`` starts (``""``: the newest of ``folder``).

    Raises :class:`AgentClientError` (``unknownSession``) when there is none, or when several match.
    """
    typed = typed.strip()
    live = [info for info in await client.list_sessions() if info.loaded]
    if not typed:
        here = [info for info in live if info.cwd == folder]
        if not here:
            raise AgentClientError(
                f"no live session in {folder} (a session lives in the per-user server while an editor "
                "or a run has it; agentls chat --session resumes a stored one)",
                kind="unknownSession",
            )
        return here[0]
    missing = f"no live session {typed} in the per-user server"
    return _one_starting_with(live, typed, missing, "live sessions")


def _one_starting_with(sessions: list[SessionInfo], typed: str, missing: str, what: str) -> SessionInfo:
    """The one of ``sessions`` whose id starts with ``typed``; ``missing`` when none does, the
    matches named when several do (``what``: how they are called)."""
    matches = [info for info in sessions if info.session_id.startswith(typed)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise AgentClientError(missing, kind="unknownSession")
    shown = ", ".join(match.session_id[:12] for match in matches[:SHOWN_MATCHES])
    more = "…" if len(matches) > SHOWN_MATCHES else ""
    raise AgentClientError(
        f"{typed} is the start of {len(matches)} {what} ({shown}{more}): give more of the id",
        kind="unknownSession",
    )
