"""The ``agentls`` command line: ``serve`` (the default), ``acp``, ``run``, ``chat``, ``models``, ``sessions``
and ``demo``.

:mod:`agentls.cli.main` parses the command line and starts a command; each command is a
module of its own (:mod:`~agentls.cli.run`, :mod:`~agentls.cli.chat`,
:mod:`~agentls.cli.listings`, :mod:`~agentls.cli.demo`), imported only when it runs, so
``agentls serve`` and ``agentls --help`` load none of them. What they share:
:mod:`~agentls.cli.options` (their options), :mod:`~agentls.cli.printer` (a run on the
terminal), :mod:`~agentls.cli.permissions` (permission questions on the terminal) and
:mod:`~agentls.cli.mcp_report` (the MCP servers' lines).
"""

from agentls.cli.main import console_main, main

__all__ = ["console_main", "main"]
