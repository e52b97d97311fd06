"""``python -m agentls``: the command line."""

from agentls.cli import console_main

console_main()
