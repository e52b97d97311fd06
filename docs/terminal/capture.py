"""Capture `agentls run --demo` and `agentls chat --demo` in tmux: docs/terminal/{run,chat}.{txt,svg}.

Run from the project root: .venv/bin/python docs/terminal/capture.py
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

sys.path.insert(0, str(Path.cwd()))
from tests.terminal.conftest import Pane

OUT = Path("docs/terminal")


def save(name: str, pane: Pane, title: str) -> None:
    ansi = pane.screen(colours=True).rstrip("\n")
    lines = [line for line in ansi.splitlines() if not Text.from_ansi(line).plain.startswith("[exited")]
    while lines and not Text.from_ansi(lines[-1]).plain.strip():
        lines.pop()
    text = Text.from_ansi("\n".join(lines))
    (OUT / f"{name}.txt").write_text(text.plain.rstrip() + "\n", encoding="utf-8")
    with open(os.devnull, "w") as sink:
        console = Console(record=True, width=100, file=sink, force_terminal=True)
        console.print(text)
    (OUT / f"{name}.svg").write_text(console.export_svg(title=title), encoding="utf-8")


def main() -> None:
    tmux = shutil.which("tmux")
    assert tmux, "tmux is needed"
    root = Path(tempfile.mkdtemp())
    project = root / "agentls"
    project.mkdir()
    shutil.copy("README.md", project / "README.md")
    data = str(root / "data")
    pane = Pane(tmux, "agentls-capture")
    try:
        pane.start(["run", "--demo", "--data-dir", data, "What is this project?"], project)
        pane.wait_for("[exited 0]")
        save("run", pane, 'agentls run --demo "What is this project?"')
    finally:
        pane.stop()
    pane = Pane(tmux, "agentls-capture2")
    try:
        pane.start(["chat", "--demo", "--data-dir", data], project)
        pane.wait_for("/help for the keys")
        pane.type("What is this project?")
        pane.wait_for("faux/faux-1 · ↑")
        pane.type("!git --version; ls")
        pane.wait_for("  exit 0")
        pane.keys("/")
        pane.wait_for("summarise the conversation")
        save("chat", pane, "agentls chat --demo")
    finally:
        pane.stop()


if __name__ == "__main__":
    main()
