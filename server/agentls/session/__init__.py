"""agentls.session: product policy on top of the kernel (runs, queues, persistence, models)."""

from agentls.session.errors import SessionError
from agentls.session.manager import SessionFront, SessionManager
from agentls.session.session import AgentSession

__all__ = ["AgentSession", "SessionError", "SessionFront", "SessionManager"]
