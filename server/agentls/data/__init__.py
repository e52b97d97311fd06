"""Files agentls ships: the demo's faux script."""

from pathlib import Path

DEMO_SCRIPT = Path(__file__).parent / "demo-script.json"
"""The faux script of ``--demo`` and of the ``demo`` option: it reads ``README.md``, then answers."""
