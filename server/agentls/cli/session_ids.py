"""A stored session named as the user types it: its id or the start of it (`run --session`, `chat`)."""

from __future__ import annotations

from agentls.client import AgentClient, AgentClientError

SHOWN_MATCHES = 4
"""How many of the sessions an ambiguous prefix matches are named."""


async def stored_session(client: AgentClient, typed: str) -> str:
    """The id of the one stored session whose id starts with ``typed``.

    Raises :class:`AgentClientError` (``unknownSession``) when none does, or when several do
    (naming them, so the user sees how much more to type).
    """
    typed = typed.strip()
    matches = [info.session_id for info in await client.list_sessions() if info.session_id.startswith(typed)]
    if len(matches) == 1:
        return str(matches[0])
    if not matches:
        raise AgentClientError(
            f"no stored session {typed} (agentls sessions lists them)", kind="unknownSession"
        )
    shown = ", ".join(match[:12] for match in matches[:SHOWN_MATCHES])
    more = "…" if len(matches) > SHOWN_MATCHES else ""
    raise AgentClientError(
        f"{typed} is the start of {len(matches)} sessions ({shown}{more}): give more of the id",
        kind="unknownSession",
    )
