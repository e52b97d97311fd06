"""A real terminal for the command line: tmux, driven with send-keys and read with capture-pane.

Each test gets its own tmux server (``-L``, a socket of its own, no user configuration) with one
pane of a fixed size running one command; :meth:`Pane.wait_for` polls the screen until a text
appears, with a deadline. tmux must be installed (``apt-get install tmux``): the tests fail, with
that message, when it is not.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

WAIT = 15.0
"""Seconds a text may take to appear on the screen."""

WIDTH, HEIGHT = 100, 32


def tmux_binary() -> str:
    found = shutil.which("tmux")
    if found is None:
        pytest.fail("the terminal tests need tmux on PATH: install it (apt-get install tmux)")
    return found


class Pane:
    """One tmux pane running ``agentls ...``; after the command it shows ``[exited N]``."""

    def __init__(self, tmux: str, socket: str) -> None:
        self.tmux = tmux
        self.socket = socket

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            [self.tmux, "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
            env=environment(),
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def start(self, args: list[str], cwd: Path, *, width: int = WIDTH, height: int = HEIGHT) -> None:
        command = shlex.join([sys.executable, "-m", "agentls", *args])
        shell = f'{command}; echo "[exited $?]"; read line'
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-c", str(cwd), shell)

    def screen(self, *, colours: bool = False) -> str:
        """What the pane shows, scrollback included (``-e``: with its escape sequences)."""
        return self._tmux("capture-pane", "-p", "-S", "-200", *(["-e"] if colours else []))

    def rows(self) -> list[str]:
        """The rows the pane shows now (no scrollback), trailing blanks kept: one string per row."""
        return self._tmux("capture-pane", "-p").split("\n")[:-1]

    def keys(self, *keys: str, literal: bool = False) -> None:
        self._tmux("send-keys", *(["-l"] if literal else []), *keys)

    def type(self, text: str) -> None:
        self.keys(text, literal=True)
        self.keys("Enter")

    def wait_for(self, text: str, *, after: int = 0) -> str:
        """Poll the screen until ``text`` appears (past character ``after``); return the screen."""
        return self.wait_until(lambda screen: text in screen[after:], f"{text!r}")

    def wait_until(self, shown: Callable[[str], object], what: str) -> str:
        """Poll the screen until ``shown(screen)`` is true; return the screen."""
        deadline = time.monotonic() + WAIT
        while True:
            screen = self.screen()
            if shown(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not appear within {WAIT} s; the screen:\n{screen}")
            time.sleep(0.05)  # polling the screen: tmux has no event to await

    def input_line(self) -> str:
        """The prompt's input line (``agentls chat``): the last line that starts with ``›``."""
        lines = [line for line in self.screen().splitlines() if line.startswith("›")]
        return lines[-1].rstrip() if lines else ""

    def wait_for_input(self, text: str) -> None:
        """Poll until the input line holds ``text`` (after ``› ``)."""
        deadline = time.monotonic() + WAIT
        while self.input_line() != f"› {text}".rstrip():
            if time.monotonic() > deadline:
                pytest.fail(f"the input line is not {text!r} within {WAIT} s; the screen:\n{self.screen()}")
            time.sleep(0.05)  # polling the screen: tmux has no event to await

    def stop(self) -> None:
        subprocess.run(
            [self.tmux, "-L", self.socket, "kill-server"], capture_output=True, timeout=10, env=environment()
        )


def environment() -> dict[str, str]:
    # The pane's size is the terminal's: COLUMNS/LINES (pytest-xdist's workers set them to 80x24)
    # would override it for the command line.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTLS_", "TMUX")) and k not in ("COLUMNS", "LINES")
    }
    env["TERM"] = "xterm-256color"
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.environ.get("PYTHONPATH", ""), str(PROJECT_ROOT / "server")] if p
    )
    return env


@pytest.fixture
def pane() -> Iterator[Pane]:
    terminal = Pane(tmux_binary(), f"agentls-test-{uuid.uuid4().hex[:12]}")
    try:
        yield terminal
    finally:
        terminal.stop()
