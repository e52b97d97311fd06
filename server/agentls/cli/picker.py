"""A list to pick one line of, under the transcript: arrow keys move, Enter picks, Esc cancels.

``/sessions``, ``/model`` and ``/rewind`` (and ``/fork``) without an argument open one. It runs
as an application of its own between two inputs (the chat's input line is not running then)
and is erased when done, so the transcript keeps only what the pick led to.
"""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension

from agentls.terminal_text import visible

ROWS = 10
"""Lines of the list shown at once; it scrolls to keep the chosen one in sight."""

HINT = "↑↓ choose · Enter picks · Esc cancels"


async def pick(title: str, lines: Sequence[str], chosen: int = 0) -> int | None:
    """The index of the line the user picks (``chosen`` first), ``None`` when cancelled."""
    state = {"chosen": max(0, min(chosen, len(lines) - 1))}

    def listing() -> StyleAndTextTuples:
        fragments: StyleAndTextTuples = []
        for index, line in enumerate(lines):
            text = visible(line, newlines=False)
            if index == state["chosen"]:
                fragments += [("[SetCursorPosition]", ""), ("bold ansicyan", f"› {text}")]
            else:
                fragments.append(("", f"  {text}"))
            fragments.append(("", "\n"))
        return fragments[:-1]

    bindings = KeyBindings()

    def move(step: int) -> None:
        state["chosen"] = max(0, min(len(lines) - 1, state["chosen"] + step))

    for keys, step in ((("up",), -1), (("c-p",), -1), (("down",), 1), (("c-n",), 1)):
        bindings.add(*keys)(lambda event, step=step: move(step))
    bindings.add("pageup")(lambda event: move(-ROWS))
    bindings.add("pagedown")(lambda event: move(ROWS))
    bindings.add("home")(lambda event: move(-len(lines)))
    bindings.add("end")(lambda event: move(len(lines)))

    @bindings.add("enter")
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result=state["chosen"])

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    layout = HSplit(
        [
            Window(FormattedTextControl([("bold", visible(title, newlines=False))]), height=1),
            Window(
                FormattedTextControl(listing, focusable=True, show_cursor=False),
                height=Dimension(min=1, max=ROWS),
                dont_extend_height=True,
            ),
            Window(FormattedTextControl([("ansibrightblack", HINT)]), height=1),
        ]
    )
    application: Application[int | None] = Application(
        layout=Layout(layout), key_bindings=bindings, erase_when_done=True
    )
    return await application.run_async()
