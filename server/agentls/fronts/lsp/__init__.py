"""agentls.fronts.lsp: the JSON-RPC stdio server that maps ``agent/*`` requests onto sessions.

Its names are imported when first used, so that :mod:`agentls.fronts.lsp.boot` can answer
``initialize`` before the rest of the server is imported.
"""

from typing import Any

__all__ = ["AgentServer", "create_server", "serve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentls.fronts.lsp import app

        return getattr(app, name)
    raise AttributeError(f"module 'agentls.fronts.lsp' has no attribute {name!r}")
