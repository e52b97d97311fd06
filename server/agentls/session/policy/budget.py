"""A session's spending limits (``budget``): what its runs and the session as a whole may spend.

The usage counted is what the providers reported on each response (``usage.cost.total``,
``usage.totalTokens``) and each response is a turn. The session checks the limits between
turns, in the kernel's ``should_stop_after_turn`` hook (see :meth:`AgentSession._budget_stop`):
when one is reached and the run would start another turn, the user is asked whether to go on
with the limit raised (:data:`RAISE_FACTOR` times), and without a yes the run ends there, its
``agent/settled`` naming the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentls.ai import AssistantMessage
from agentls.protocol import BudgetLimits, BudgetSettings, BudgetSpent, BudgetState, BudgetUsage

RAISE_FACTOR = 2
"""A limit the user lets a run go past is raised to this many times itself."""

_KINDS = ("max_cost_usd", "max_tokens", "max_turns")
_WIRE = {"max_cost_usd": "maxCostUsd", "max_tokens": "maxTokens", "max_turns": "maxTurns"}


@dataclass
class Spent:
    """What a run or a session used so far."""

    cost_usd: float = 0.0
    tokens: int = 0
    turns: int = 0

    def add(self, message: AssistantMessage) -> None:
        self.cost_usd += message.usage.cost.total
        self.tokens += message.usage.total_tokens
        self.turns += 1

    def of(self, kind: str) -> float:
        return {"max_cost_usd": self.cost_usd, "max_tokens": self.tokens, "max_turns": self.turns}[kind]

    def wire(self) -> BudgetSpent:
        return BudgetSpent(cost_usd=round(self.cost_usd, 6), tokens=self.tokens, turns=self.turns)


class SessionBudget:
    """The limits of a session (its runs' and its own), and what the current run and the session spent."""

    def __init__(self, settings: BudgetSettings | None, session_spent: Spent | None = None) -> None:
        self.settings = settings or BudgetSettings()
        self._run_limits = BudgetLimits()
        self.run = Spent()
        self.session = session_spent or Spent()
        self.start_run()

    def set_limits(self, settings: BudgetSettings) -> None:
        """New limits (``agent/setBudget``): from now on, the running run's included."""
        self.settings = settings
        self._run_limits = BudgetLimits.model_validate(settings.model_dump(exclude={"session"}))

    def start_run(self) -> None:
        self.run = Spent()
        self._run_limits = BudgetLimits.model_validate(self.settings.model_dump(exclude={"session"}))

    def add(self, message: AssistantMessage) -> None:
        """A response of the run came in."""
        self.run.add(message)
        self.session.add(message)

    def reached(self) -> BudgetUsage | None:
        """The first limit reached (the run's before the session's), if any."""
        scopes = (("run", self._run_limits, self.run), ("session", self.settings.session, self.session))
        for scope, limits, spent in scopes:
            if limits is None:
                continue
            for kind in _KINDS:
                limit = getattr(limits, kind)
                if limit is not None and spent.of(kind) >= limit:
                    return BudgetUsage(kind=_WIRE[kind], scope=scope, limit=limit, used=spent.of(kind))  # type: ignore[arg-type]
        return None

    def raised(self, reached: BudgetUsage) -> float:
        """The limit ``reached`` would be raised to."""
        raised = reached.limit * RAISE_FACTOR
        while raised <= reached.used:
            raised *= RAISE_FACTOR
        return int(raised) if reached.kind != "maxCostUsd" else raised

    def raise_limit(self, reached: BudgetUsage) -> None:
        """Let the run go on: the limit reached is raised (a session's for good, a run's for this run)."""
        kind = next(k for k, wire in _WIRE.items() if wire == reached.kind)
        if reached.scope == "run":
            self._run_limits = self._run_limits.model_copy(update={kind: self.raised(reached)})
        else:
            assert self.settings.session is not None
            session = self.settings.session.model_copy(update={kind: self.raised(reached)})
            self.settings = self.settings.model_copy(update={"session": session})

    def state(self) -> BudgetState:
        return BudgetState(limits=self.settings, run=self.run.wire(), session=self.session.wire())
