"""``python -m agentls.acp``: the same as ``agentls acp``."""

import sys

from agentls.cli import main

sys.exit(main(["acp", *sys.argv[1:]]))
