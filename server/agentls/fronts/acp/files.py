"""An ACP client's files: ``fs/read_text_file`` and ``fs/write_text_file`` when it offers them.

So ``read`` sees the editor's unsaved buffers and ``write``/``edit`` land in them, as
the LSP front does with text synchronisation and ``workspace/applyEdit``. What the
client does not offer (and every other file operation: listing, searching, deleting)
uses the disk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from agentls.ai import AbortSignal
from agentls.tools.workspace import DiskWorkspace, Document, consume_buffer

T = TypeVar("T")


class ClientFiles:
    """What the client can do with files, and how to ask it."""

    def __init__(self, connection: Any, session_id: str, read: bool, write: bool) -> None:
        self.connection = connection
        self.session_id = session_id
        self.read = read
        self.write = write


class AcpWorkspace(DiskWorkspace):
    """A session's files, read and written through the ACP client where it can."""

    def __init__(self, root: str | Path, files: ClientFiles, allow_outside: bool = False) -> None:
        super().__init__(root, allow_outside)
        self.files = files

    def __repr__(self) -> str:
        return f"AcpWorkspace({str(self.root)!r}, read={self.files.read}, write={self.files.write})"

    async def read_document(self, path: str | Path) -> Document:
        resolved = self.resolve(path)
        if not self.files.read or not await super().exists(resolved):
            return await super().read_document(resolved)  # a file only the disk can tell is missing
        try:
            answer = await self.files.connection.read_text_file(
                session_id=self.files.session_id, path=str(resolved)
            )
        except Exception as error:  # the client's error answer: the tool reports it
            raise OSError(f"the editor could not read it ({error})") from error
        return Document(answer.content.encode("utf-8", errors="surrogatepass"))

    async def read_content(self, path: str | Path, consume: Callable[[BinaryIO], T]) -> T:
        if not self.files.read or (await super().stat(path)).kind != "file":
            return await super().read_content(path, consume)  # the disk's error: a folder, a FIFO, a device
        return await consume_buffer((await self.read_document(path)).data, consume)  # sent whole anyway

    async def write_text(
        self, path: str | Path, text: str, base: Document | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        resolved = self.resolve(path)
        if not self.files.write:
            return await super().write_text(resolved, text, base, signal)
        try:
            await self.files.connection.write_text_file(
                session_id=self.files.session_id, path=str(resolved), content=text
            )
        except Exception as error:
            raise OSError(f"the editor could not write it ({error})") from error
        return None
