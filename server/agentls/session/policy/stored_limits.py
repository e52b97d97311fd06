"""A stored session's own sandbox and budget, as far as they may apply when it is loaded.

As with its permissions (:func:`agentls.session.policy.permissions.loaded_policy`), anyone who can
write a session file writes its header: the file's sandbox and budget apply only where they hold
the session back at least as much as the server's own settings; otherwise the server's apply and
the load says so.
"""

from __future__ import annotations

import os
from typing import Any

from agentls.protocol import BudgetLimits, BudgetSettings, SandboxSettings

_STRICTNESS = {"off": 0, "workspace-write": 1, "read-only": 2}


def _roots(settings: SandboxSettings, cwd: str) -> set[str]:
    if settings.mode != "workspace-write":
        return set()
    return {os.path.realpath(os.path.join(cwd, path)) for path in settings.writable_roots}


def sandbox_narrows(stored: SandboxSettings, server: SandboxSettings, cwd: str) -> bool:
    """Whether ``stored`` confines ``bash`` at least as much as ``server`` does."""
    if server.mode == "off":
        return stored.mode != "off" or stored == server
    return (
        _STRICTNESS[stored.mode] >= _STRICTNESS[server.mode]
        and (server.network or not stored.network)
        and (server.fallback == "unconfined" or stored.fallback == "refuse")
        and _roots(stored, cwd) <= _roots(server, cwd)
    )


def _limits_narrow(stored: BudgetLimits | None, server: BudgetLimits | None) -> bool:
    if server is None:
        return True
    for name in ("max_cost_usd", "max_tokens", "max_turns"):
        limit = getattr(server, name)
        mine = getattr(stored, name) if stored is not None else None
        if limit is not None and (mine is None or mine > limit):
            return False
    return True


def budget_narrows(stored: BudgetSettings, server: BudgetSettings) -> bool:
    """Whether ``stored`` limits every run and the session at least as much as ``server``."""
    return _limits_narrow(stored, server) and _limits_narrow(stored.session, server.session)


def stored_limits(
    sandbox: dict[str, Any] | None,
    budget: dict[str, Any] | None,
    *,
    server_sandbox: SandboxSettings,
    server_budget: BudgetSettings,
    cwd: str,
) -> tuple[SandboxSettings, BudgetSettings, list[str]]:
    """The sandbox and budget a loaded session gets, and what of the file's was not applied."""
    warnings = []
    chosen_sandbox, chosen_budget = server_sandbox, server_budget
    if sandbox is not None:
        own = SandboxSettings.model_validate(sandbox)
        if sandbox_narrows(own, server_sandbox, cwd):
            chosen_sandbox = own
        else:
            warnings.append(
                "The session file's sandbox was not applied (it would let bash do more than this "
                "server's); the server's applies."
            )
    if budget is not None:
        limits = BudgetSettings.model_validate(budget)
        if budget_narrows(limits, server_budget):
            chosen_budget = limits
        else:
            warnings.append(
                "The session file's budget was not applied (it would let runs spend more than this "
                "server's); the server's applies."
            )
    return chosen_sandbox, chosen_budget, warnings
