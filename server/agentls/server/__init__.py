"""agentls.server: the JSON-RPC stdio server (pygls) that maps ``agent/*`` requests onto sessions."""

from agentls.server.app import AgentServer, create_server, serve

__all__ = ["AgentServer", "create_server", "serve"]
