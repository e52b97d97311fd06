"""Whether the user trusts a folder's project files: Pi's project-trust step.

A project's own files (its ``AGENTS.md`` and those of the folders above it, its skills and
prompt templates, see :mod:`agentls.session.instructions.resources`) reach the model only once the
user trusts the folder. The question is the one that asks about the project's MCP servers
(:mod:`agentls.mcp.hub`): one answer for both. As in Pi:

- a trust is remembered (as the rule ``project:trust`` of the folder, in the rules file
  beside the "allow always" answers) and covers the folders below it;
- a folder in which a session finds nothing to trust when it opens is trusted by that
  session (what appears later is loaded), and is asked about by the next one;
- the ``projectTrust`` option is Pi's ``defaultProjectTrust``: ``ask`` (the default),
  ``always`` (every folder's files load unasked, as Pi's ``--approve``), ``never``;
- a "Reject" holds for the server's life (a new server asks again); a client that cannot
  answer gets no project files (Pi's print and RPC modes).

The MCP servers of a project are trusted apart, per configuration, whatever this says.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from agentls.session.policy.permissions import PermissionRules

PROJECT_RULE = "project:trust"
"""The rule that remembers a trusted folder."""

ProjectTrustMode = Literal["ask", "always", "never"]
TrustStatus = Literal["trusted", "untrusted", "asking"]


class FolderTrust:
    """The trust decisions of one server: remembered rules, this server's answers, open questions."""

    def __init__(self, rules: PermissionRules, mode: ProjectTrustMode = "ask") -> None:
        self.rules = rules
        self.mode: ProjectTrustMode = mode
        self._rejected: set[str] = set()
        self._asking: dict[str, asyncio.Future[bool]] = {}

    def decision(self, folder: str) -> bool | None:
        """``True`` trusted, ``False`` not, ``None`` not decided (the user has not been asked)."""
        if self.mode != "ask":
            return self.mode == "always"
        path = Path(folder)
        if any(self.rules.allows(str(above), PROJECT_RULE) for above in (path, *path.parents)):
            return True
        return False if folder in self._rejected else None

    def pending(self, folder: str) -> asyncio.Future[bool] | None:
        """The open question about ``folder``: its answer (``True``: trusted), if one is open."""
        return self._asking.get(folder)

    def asking(self, folder: str) -> asyncio.Future[bool]:
        """Note that a question about ``folder`` is open (until :meth:`answered`)."""
        future = self._asking.get(folder)
        if future is None:
            future = self._asking[folder] = asyncio.get_running_loop().create_future()
        return future

    async def answered(self, folder: str, trusted: bool | None) -> None:
        """The user's answer (``None``: none came): a trust is remembered, a rejection held."""
        try:
            if trusted:
                await self.rules.add(folder, PROJECT_RULE)
            elif trusted is False:
                self._rejected.add(folder)
        finally:  # whatever happens, a session waiting for the answer goes on
            future = self._asking.pop(folder, None)
            if future is not None and not future.done():
                future.set_result(bool(trusted))
