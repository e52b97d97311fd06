"""The keys that write a newline in chat's input: Ctrl+J, and Shift+Enter where the terminal tells it apart.

A terminal sends the same ``\\r`` for Enter and Shift+Enter unless it reports modified keys:
xterm's ``modifyOtherKeys`` sends ``CSI 27;2;13~`` and the "CSI u" terminals (kitty, foot,
WezTerm, iTerm2 with the option, VS Code's terminal with a keybinding) send ``CSI 13;2u``.
prompt_toolkit reads the first as Enter and does not know the second; both become the
newline key here, Ctrl+J (``\\n``, a line feed), which every terminal sends apart from Enter.

Between two inputs (while the chat starts, or runs a command of its own) the terminal is in
the mode the chat found it in, where the line discipline turns an Enter typed ahead into a
line feed: it would reach the next input as Ctrl+J, a newline. :func:`typed_ahead_kept`
keeps such keys as they were typed, unechoed, for the next input to read.
"""

from __future__ import annotations

import contextlib
import sys
import termios
from collections.abc import Iterator

from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

SHIFT_ENTER = ("\x1b[27;2;13~", "\x1b[13;2u")
"""How the terminals that tell Shift+Enter apart from Enter send it."""


def newline_keys() -> KeyBindings:
    """Ctrl+J (and Shift+Enter, read as Ctrl+J) inserts a newline; Enter still sends."""
    for sequence in SHIFT_ENTER:
        ANSI_SEQUENCES[sequence] = Keys.ControlJ  # read before the first key is: the parser caches from it
    bindings = KeyBindings()

    @bindings.add("c-j")
    def _(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


@contextlib.contextmanager
def typed_ahead_kept() -> Iterator[None]:
    """While open: keys typed between two inputs wait, as typed (Enter stays Enter), for the next one."""
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    kept = [*saved]
    kept[0] &= ~termios.ICRNL  # iflag: Enter stays a carriage return
    kept[3] &= ~(termios.ICANON | termios.ECHO)  # lflag: no line editing, no echo under the transcript
    termios.tcsetattr(fd, termios.TCSANOW, kept)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
