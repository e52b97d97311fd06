"""What each trusted MCP server configuration looked like, so that a later question can say what changed.

``mcp-trusted.json`` in the data folder, beside the rules file (whose ``mcp:trust:NAME:HASH``
rules are the trust itself): for each folder and server name, the shown form
(:mod:`agentls.mcp.display`: masked, nothing secret) of the configuration trusted last.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from agentls.ai.local_files import read_json_file, write_json_file
from agentls.mcp.display import Shown

logger = logging.getLogger(__name__)

FILE = "mcp-trusted.json"


class TrustedForms:
    """The shown form of the last trusted configuration per folder and server name."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE
        self._forms: dict[tuple[str, str], tuple[Shown, ...]] | None = None
        self._lock = asyncio.Lock()

    async def get(self, folder: str, name: str) -> tuple[Shown, ...] | None:
        async with self._lock:
            forms = await self._loaded()
            return forms.get((folder, name))

    async def put(self, folder: str, name: str, shown: tuple[Shown, ...]) -> None:
        async with self._lock:
            forms = await self._loaded()
            forms[(folder, name)] = shown
            await asyncio.to_thread(self._save, dict(forms))

    async def _loaded(self) -> dict[tuple[str, str], tuple[Shown, ...]]:
        if self._forms is None:
            self._forms = await asyncio.to_thread(self._read)
        return self._forms

    def _read(self) -> dict[tuple[str, str], tuple[Shown, ...]]:
        try:
            data = read_json_file(self.path)
            return {
                (entry["workspace"], entry["name"]): tuple(Shown(k, v) for k, v in entry["shown"])
                for entry in data["servers"]
            }
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.warning(
                "ignoring unreadable %s (the next trust question cannot say what changed): %s",
                self.path,
                error,
            )
            return {}

    def _save(self, forms: dict[tuple[str, str], tuple[Shown, ...]]) -> None:
        """Write the whole file atomically (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        servers = [
            {"workspace": folder, "name": name, "shown": [[line.key, line.value] for line in shown]}
            for (folder, name), shown in sorted(forms.items())
        ]
        write_json_file(self.path, {"servers": servers})
