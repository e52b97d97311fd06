"""agentls.session: product policy on top of the kernel (runs, queues, persistence, models)."""

from agentls.session.errors import SessionError
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession, event_to_wire

__all__ = ["AgentSession", "SessionError", "SessionManager", "event_to_wire"]
