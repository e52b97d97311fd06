"""An agentls command that reports, at its exit, whether it imported the HTTP stack; and a port that
tells when something connects to it (the probe connects once the background warm-up has started)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path


def import_probe(report: Path, *args: str, warm_up_port: int | None = None) -> list[str]:
    """``agentls ARGS`` that writes to ``report``, at exit, whether ``httpx`` was imported (once the
    background warm-up, if one was started, has ended); and connects to ``warm_up_port`` when that
    warm-up's thread runs."""
    code = (
        "import atexit, socket, sys, threading, time\n"
        "def warm_ups():\n"
        "    return [t for t in threading.enumerate() if t.name == 'agentls-warm-up']\n"
        "def report():\n"
        "    for thread in warm_ups():\n"
        "        thread.join(30)\n"
        f"    open({str(report)!r}, 'w').write(str('httpx' in sys.modules))\n"
        "atexit.register(report)\n"
        "def watch(port):\n"
        "    while not warm_ups():\n"
        "        time.sleep(0.005)\n"
        "    socket.create_connection(('127.0.0.1', port)).close()\n"
        f"port = {warm_up_port!r}\n"
        "if port:\n"
        "    threading.Thread(target=watch, args=(port,), daemon=True).start()\n"
        "from agentls.cli import console_main\n"
        "console_main()\n"
    )
    return [sys.executable, "-c", code, *args]


@contextlib.asynccontextmanager
async def connected_to() -> AsyncIterator[tuple[int, asyncio.Event]]:
    """A port on 127.0.0.1, and an event set when something connects to it."""
    connected = asyncio.Event()

    def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        writer.close()

    listener = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        yield listener.sockets[0].getsockname()[1], connected
    finally:
        listener.close()
