"""Render the README's screenshot of the Neovim plugin: a real Neovim screen, as a PNG.

Starts ``nvim --embed`` with ``screenshot_scenario.lua`` (which drives the plugin against
the real ``agentls serve`` on the faux provider), attaches as a UI over msgpack-rpc
(``ext_linegrid``), keeps the screen grid from the ``redraw`` events and, once the
scenario says the scene is set, draws the grid cell by cell with Pillow in DejaVu Sans
Mono. The colours are those of Neovim's default colour scheme.

Not part of the project's dependencies; run it from a throwaway environment:

    python3 -m venv /tmp/shot && /tmp/shot/bin/pip install msgpack pillow
    AGENTLS_CMD=$PWD/.venv/bin/agentls /tmp/shot/bin/python editor-clients/nvim/scripts/screenshot.py \\
        --nvim .venv/bin/nvim -o editor-clients/nvim/screenshot.png
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import msgpack
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent
FONTS = Path("/usr/share/fonts/truetype/dejavu")


class Screen:
    """The UI side of Neovim's linegrid protocol, for grid 1 only."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.cells = [[(" ", 0)] * cols for _ in range(rows)]
        self.attrs: dict[int, dict] = {0: {}}
        self.fg, self.bg, self.sp = 0xFFFFFF, 0x000000, 0xFF0000
        self.cursor = (0, 0)

    def apply(self, name: str, args: list) -> None:
        handler = getattr(self, f"on_{name}", None)
        if handler is not None:
            handler(*args)

    def on_default_colors_set(self, fg, bg, sp, *_):
        self.fg = fg if fg >= 0 else self.fg
        self.bg = bg if bg >= 0 else self.bg
        self.sp = sp if sp >= 0 else self.sp

    def on_hl_attr_define(self, hl_id, rgb_attr, *_):
        self.attrs[hl_id] = rgb_attr

    def on_grid_resize(self, grid, cols, rows):
        if grid == 1:
            self.cols, self.rows = cols, rows
            self.cells = [[(" ", 0)] * cols for _ in range(rows)]

    def on_grid_clear(self, grid):
        if grid == 1:
            self.cells = [[(" ", 0)] * self.cols for _ in range(self.rows)]

    def on_grid_cursor_goto(self, grid, row, col):
        if grid == 1:
            self.cursor = (row, col)

    def on_grid_line(self, grid, row, col, cells, *_):
        if grid != 1:
            return
        hl_id = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl_id = cell[1]
            repeat = cell[2] if len(cell) > 2 else 1
            for _ in range(repeat):
                if col < self.cols:
                    self.cells[row][col] = (text, hl_id)
                col += 1

    def on_grid_scroll(self, grid, top, bot, left, right, rows, _cols):
        if grid != 1:
            return
        lines = range(top, bot - rows) if rows > 0 else range(bot - 1, top - rows - 1, -1)
        for row in lines:
            self.cells[row][left:right] = self.cells[row + rows][left:right]


def rpc_screen(nvim: str, cols: int, rows: int, timeout: float) -> Screen:
    """Run the scenario under an attached UI; the screen once the scene is set."""
    scenario = HERE / "screenshot_scenario.lua"
    process = subprocess.Popen(
        [nvim, "--embed", "--clean", "-c", f"luafile {scenario}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(msgpack.packb([0, 1, "nvim_ui_attach", [cols, rows, {"ext_linegrid": True, "rgb": True}]]))
    process.stdin.flush()
    screen = Screen(cols, rows)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    deadline = time.monotonic() + timeout
    fd = process.stdout.fileno()
    try:
        while time.monotonic() < deadline:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise SystemExit("nvim exited before the scene was set")
            unpacker.feed(chunk)
            for message in unpacker:
                if message[0] == 1 and message[2] is not None:  # a response with an error
                    raise SystemExit(f"nvim: {message[2]}")
                if message[0] != 2:
                    continue
                method, params = message[1], message[2]
                if method == "agentls_screenshot_ready":  # sent right after a full redraw
                    if not params[0]:
                        print("warning: the scene is incomplete", file=sys.stderr)
                    return screen
                if method == "redraw":
                    for name, *batches in params:
                        for args in batches:
                            screen.apply(name, args)
        raise SystemExit("timed out waiting for the scene")
    finally:
        process.stdin.write(msgpack.packb([2, "nvim_command", ["qa!"]]))
        process.stdin.flush()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()


def rgb(value: int) -> tuple[int, int, int]:
    return (value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF


def draw(screen: Screen, path: Path, size: int) -> None:
    fonts = {
        (False, False): ImageFont.truetype(str(FONTS / "DejaVuSansMono.ttf"), size),
        (True, False): ImageFont.truetype(str(FONTS / "DejaVuSansMono-Bold.ttf"), size),
        (False, True): ImageFont.truetype(str(FONTS / "DejaVuSansMono-Oblique.ttf"), size),
        (True, True): ImageFont.truetype(str(FONTS / "DejaVuSansMono-BoldOblique.ttf"), size),
    }
    regular = fonts[(False, False)]
    width = round(regular.getlength("M"))
    ascent, descent = regular.getmetrics()
    height = ascent + descent + 2
    image = Image.new("RGB", (screen.cols * width, screen.rows * height), rgb(screen.bg))
    canvas = ImageDraw.Draw(image)
    for row, cells in enumerate(screen.cells):
        for col, (text, hl_id) in enumerate(cells):
            attr = screen.attrs.get(hl_id, {})
            fg, bg = attr.get("foreground", screen.fg), attr.get("background", screen.bg)
            if attr.get("reverse"):
                fg, bg = bg, fg
            if (row, col) == screen.cursor:
                fg, bg = bg, fg
            x, y = col * width, row * height
            if bg != screen.bg:
                canvas.rectangle([x, y, x + width - 1, y + height - 1], fill=rgb(bg))
            if text.strip():
                font = fonts[(bool(attr.get("bold")), bool(attr.get("italic")))]
                canvas.text((x, y + 1), text, font=font, fill=rgb(fg))
            if attr.get("underline") or attr.get("undercurl"):
                color = attr.get("special", fg)
                canvas.line([x, y + height - 2, x + width - 1, y + height - 2], fill=rgb(color))
    image = image.quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    image.save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvim", default="nvim", help="the nvim executable (0.10 or newer)")
    parser.add_argument("-o", "--output", type=Path, default=HERE.parent / "screenshot.png")
    parser.add_argument("--columns", type=int, default=132)
    parser.add_argument("--lines", type=int, default=30)
    parser.add_argument("--font-size", type=int, default=14)
    args = parser.parse_args()
    screen = rpc_screen(args.nvim, args.columns, args.lines, timeout=60)
    draw(screen, args.output, args.font_size)
    print(f"{args.output}: {args.output.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
