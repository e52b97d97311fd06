"""Helpers for the MCP tests: how to start each test server, and server-everything over HTTP.

Servers (see tests/mcp/test_servers_smoke.py for what each one does):
- quirky (tests/mcp/servers/quirky.py, this repository's): `quirky_command(*args)`;
- mcp-server-time and mcp-server-git (PyPI, the dev extra): `time_command()`, `git_command(repo)`;
- @modelcontextprotocol/server-everything (npm, installed by scripts/test-servers.sh outside the
  repository): `everything_stdio_command()` and `everything_http()` (streamable HTTP or SSE).

A missing server-everything install fails the test (never skips) and says to run the script.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

QUIRKY = Path(__file__).resolve().parent / "servers" / "quirky.py"
EVERYTHING_VERSION = "2026.8.31"  # keep in step with scripts/test-servers.sh
INSTALL_HINT = "run `bash scripts/test-servers.sh` (scripts/system-packages.sh runs it too)"


def tools_dir() -> Path:
    """Where scripts/test-servers.sh installs: $AGENTLS_TOOLS, else $AGENTLS_TOOL_CACHE (the VS Code
    extension's), else ~/.cache/agentls-tools."""
    chosen = os.environ.get("AGENTLS_TOOLS") or os.environ.get("AGENTLS_TOOL_CACHE")
    return Path(chosen) if chosen else Path.home() / ".cache" / "agentls-tools"


def everything_entry() -> Path:
    """server-everything's `dist/index.js`; fails the test when it is not installed."""
    entry = (
        tools_dir()
        / f"mcp-everything-{EVERYTHING_VERSION}"
        / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    )
    if not entry.is_file():
        pytest.fail(f"@modelcontextprotocol/server-everything is not installed at {entry}: {INSTALL_HINT}")
    return entry


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail(f"node is not on PATH (server-everything needs it): {INSTALL_HINT}")
    return found


def quirky_command(*args: str) -> list[str]:
    """The quirky server over stdio: this interpreter and the script, then `args`
    (`--slow-start SECONDS`, `--stderr-noise`, `--fail-start`)."""
    return [sys.executable, str(QUIRKY), *args]


def time_command(*args: str) -> list[str]:
    """mcp-server-time over stdio (`--local-timezone ZONE` may follow)."""
    return [sys.executable, "-m", "mcp_server_time", *args]


def git_command(repository: str | os.PathLike[str]) -> list[str]:
    """mcp-server-git over stdio, serving `repository` (its tools take `repo_path` too)."""
    return [sys.executable, "-m", "mcp_server_git", "--repository", os.fspath(repository)]


def everything_stdio_command() -> list[str]:
    """server-everything over stdio (`node .../dist/index.js stdio`); it logs a line to stderr at start."""
    return [node(), str(everything_entry()), "stdio"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@asynccontextmanager
async def everything_http(
    port: int = 0, *, transport: str = "streamableHttp", startup_timeout: float = 20.0
) -> AsyncIterator[str]:
    """server-everything over HTTP: yields its MCP URL, `http://127.0.0.1:PORT/mcp`
    (streamable HTTP) or `http://127.0.0.1:PORT/sse` (`transport="sse"`, the older transport).

    `node .../dist/index.js TRANSPORT` with `PORT` in its environment (it listens on every
    interface; 0 picks a free port here). Yields once the port accepts connections; the server
    is killed on exit. Its stdout and stderr go to a temporary file, quoted when it fails to start.
    """
    endpoints = {"streamableHttp": "/mcp", "sse": "/sse"}
    command = [node(), str(everything_entry()), transport]
    port = port or free_port()
    env = {**os.environ, "PORT": str(port)}
    with tempfile.TemporaryFile(mode="w+", prefix="mcp-everything-http.") as log:
        process = await anyio.open_process(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + startup_timeout
            while not await anyio.to_thread.run_sync(_accepts, port):
                if process.returncode is not None or time.monotonic() > deadline:
                    log.seek(0)
                    state = "timed out" if process.returncode is None else f"exited with {process.returncode}"
                    output = log.read()[-2000:]
                    pytest.fail(f"server-everything ({transport}, port {port}) {state}:\n{output}")
                await anyio.sleep(0.05)
            yield f"http://127.0.0.1:{port}{endpoints[transport]}"
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()


async def wait_for_text(path: str | os.PathLike[str], text: str, within: float = 10.0) -> str:
    """Wait until the file at `path` contains `text` (e.g. a server's stderr log); returns its content."""
    with anyio.fail_after(within):
        while True:
            try:
                content = await anyio.Path(path).read_text(errors="replace")
            except FileNotFoundError:
                content = ""
            if text in content:
                return content
            await anyio.sleep(0.02)
