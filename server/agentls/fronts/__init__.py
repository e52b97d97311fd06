"""The fronts: each translates the session's typed events and operations to one wire.

``lsp``: the JSON-RPC stdio server (``agentls serve``) that editors and scripts drive; ``acp``: the
Agent Client Protocol agent (``agentls acp``). The command line (:mod:`agentls.cli`) is a client of
the LSP front.
"""
