"""Tools from Model Context Protocol servers (see protocol.md, "MCP servers").

The SDK costs half a second to import, so only the modules that run servers import it,
and the hub loads them (in a thread) when a session first has a server to run.
"""
