"""Terminal rendering of agent events (in their wire shape).

:class:`Transcript` shows a run as terminal coding agents do (``agentls run``, ``agentls chat``):
the answer as markdown, thinking dimmed, one line per tool call, a footer with tokens and cost.
:class:`EventPrinter` shows the kernel's event stream itself (``agentls demo``): lifecycle events
as lines, the text streamed inline, tool calls with their arguments, progress and results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.spinner import Spinner
from rich.text import Text

from agentls.terminal_text import visible, visible_text


def _markdown(text: str) -> RenderableType:
    """``text`` as rich's ``Markdown``, imported when the first answer is drawn: markdown-it and
    pygments with it were a sixth of ``agentls chat``'s start (~33 ms) and drew nothing there."""
    from rich.markdown import Markdown

    return Markdown(text)


def _texts(content: Any, image: str = "[image]") -> str:
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") if b.get("type") == "text" else image for b in content or [])


def _lines(text: str) -> list[str]:
    """The lines of a tool's output to show: only ``\\n`` (or ``\\r\\n``) ends one, so a lone
    ``\\r`` stays in its line, to be written out, instead of hiding the text before it."""
    return text.replace("\r\n", "\n").removesuffix("\n").split("\n") if text else []


def _preview(text: str, max_lines: int = 6) -> str:
    """The start of a long tool result: a few lines, each shortened."""
    lines = _lines(text) or [""]
    shown = [line if len(line) <= 160 else line[:159] + "…" for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"… ({len(lines) - max_lines} more lines)")
    return "\n".join(shown)


def _bash_line(message: dict[str, Any]) -> str:
    """A command the user ran (``agent/bash``), as one line."""
    status = "cancelled" if message.get("cancelled") else f"exit {message.get('exitCode')}"
    excluded = ", not sent to the model" if message.get("excludeFromContext") else ""
    command = escape(visible(str(message.get("command")), newlines=False))
    return f"[magenta]bashExecution[/magenta] $ {command} [dim]({status}{excluded})[/dim]"


def compaction_line(note: dict[str, Any]) -> str:
    """The end of a compaction (an ``agent/compaction`` notification's params), as one line."""
    reason = escape(visible(str(note.get("reason"))))
    if note.get("errorMessage"):
        outcome = f"[red]{escape(visible(str(note['errorMessage'])))}[/red]"
    elif note.get("aborted"):
        outcome = "[yellow]aborted[/yellow]"
    else:
        before, after = note.get("tokensBefore"), note.get("tokensAfter")
        outcome = f"context {_tokens(before)} → {_tokens(after)}"
        if note.get("willRetry"):
            outcome += ", retrying"
    return f"[bold]compaction[/bold] [dim]({reason})[/dim] {outcome}"


def _tokens(count: Any) -> str:
    """A token count of the wire as the footer writes it (``84.3k``), ``?`` when there is none."""
    return human_count(count) if isinstance(count, int) else "?"


class EventPrinter:
    """Prints one agent event (a wire dict) at a time."""

    def __init__(self, console: Console, *, verbose: bool = True) -> None:
        self.console = console
        self.verbose = verbose
        self.streaming = False

    def _end_stream(self) -> None:
        if self.streaming:
            self.console.print()
            self.streaming = False

    def _update(self, update: dict[str, Any]) -> None:
        c = self.console
        kind = update.get("type")
        if kind in ("text_delta", "thinking_delta"):
            if not self.streaming:
                c.print("  [dim]│[/dim] ", end="")
                self.streaming = True
            style = "italic dim" if kind == "thinking_delta" else None
            c.print(visible(str(update.get("delta", ""))), end="", style=style, markup=False)
        elif kind in ("text_end", "thinking_end", "toolcall_end"):
            self._end_stream()
            if kind == "toolcall_end":
                call = update.get("toolCall", {})
                arguments = json.dumps(call.get("arguments"), ensure_ascii=False, separators=(",", ":"))
                name = escape(visible(str(call.get("name"))))
                c.print(f"  [dim]│[/dim] [cyan]tool call[/cyan] {name} {escape(visible(arguments))}")

    def compaction(self, note: dict[str, Any]) -> None:
        """An ``agent/compaction`` notification: one line when it ends."""
        if note.get("phase") == "end":
            self._end_stream()
            self.console.print(compaction_line(note))

    def __call__(self, event: dict[str, Any]) -> None:
        c = self.console
        kind = event.get("type")
        message = event.get("message") or {}
        if kind == "message_update":
            self._update(event.get("assistantMessageEvent") or {})
        elif kind == "message_start" and message.get("role") == "user":
            c.print(
                f"[bold]{kind}[/bold] [magenta]user[/magenta] {escape(repr(_texts(message.get('content'))))}"
            )
        elif kind == "message_end" and message.get("role") == "assistant":
            self._end_stream()
            error = message.get("errorMessage")
            suffix = f" [red]{escape(visible(str(error)))}[/red]" if error else ""
            stop = f"[dim]stopReason={message.get('stopReason')}[/dim]"
            c.print(f"[bold]{kind}[/bold] [magenta]assistant[/magenta] {stop}{suffix}")
        elif kind == "message_end" and message.get("role") == "bashExecution":
            c.print(f"[bold]{kind}[/bold] {_bash_line(message)}")
        elif kind == "tool_execution_start":
            arguments = json.dumps(event.get("args"), ensure_ascii=False, separators=(",", ":"))
            c.print(
                f"[bold]{kind}[/bold] [cyan]{escape(visible(str(event.get('toolName'))))}[/cyan] "
                f"{escape(visible(arguments))}"
            )
        elif kind == "tool_execution_update":
            progress = _texts((event.get("partialResult") or {}).get("content"))
            name = escape(visible(str(event.get("toolName"))))
            c.print(f"  [dim]… {name}: {escape(visible(progress))}[/dim]")
        elif kind == "tool_execution_end":
            status = "[red]error[/red]" if event.get("isError") else "[green]done[/green]"
            result = _preview(_texts((event.get("result") or {}).get("content")))
            name = escape(visible(str(event.get("toolName"))))
            c.print(f"[bold]{kind}[/bold] [cyan]{name}[/cyan] {status} {escape(visible(result))}")
        elif kind == "agent_end":
            c.print(f"[bold]{kind}[/bold] [dim]{len(event.get('messages') or [])} new messages[/dim]")
        elif self.verbose:
            role = message.get("role")
            c.print(f"[bold]{kind}[/bold]" + (f" [magenta]{role}[/magenta]" if role else ""))


# --- the transcript view (``agentls run``, ``agentls chat``) ---------------------------------


def whole_lines_off_a_terminal(console: Console) -> Console:
    """``console``, never wrapping or cutting a line at a width when it writes to no terminal: a
    pipe or a file gets the lines as they are."""
    console.soft_wrap = console.soft_wrap or not console.is_terminal
    return console


TOOL_PREVIEW_LINES = 5
"""Lines of a command's output (or of an edit's diff: twice as many) shown under its tool line."""


def split_blocks(text: str) -> tuple[list[str], str]:
    """Streamed markdown cut into finished blocks and the unfinished rest.

    A block ends at a blank line outside a code fence, so each can be rendered once, for good,
    while the rest is still arriving.
    """
    blocks: list[str] = []
    lines = text.split("\n")
    start = 0
    fence: str | None = None
    for index, line in enumerate(lines[:-1]):  # the last piece is an unfinished line
        stripped = line.strip()
        if fence is None and stripped[:3] in ("```", "~~~"):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None and not stripped:
            if "\n".join(lines[start:index]).strip():
                blocks.append("\n".join(lines[start:index]))
            start = index + 1
    return blocks, "\n".join(lines[start:])


def human_count(n: int) -> str:
    """``999``, ``1.2k``, ``3.4M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def human_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m {rest:02d}s"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _diff_counts(diff: str) -> tuple[int, int]:
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


def result_summary(name: str, args: Any, result: dict[str, Any]) -> str:
    """The short result of a tool call that succeeded: ``12 lines``, ``+1 −1``, ``3 matches``."""
    details = result.get("details") if isinstance(result.get("details"), dict) else {}
    text = _texts(result.get("content"))
    args = args if isinstance(args, dict) else {}
    if name == "read" and details.get("mimeType"):
        return "image"
    first, last = details.get("startLine"), details.get("endLine")
    if name == "read" and isinstance(first, int) and isinstance(last, int):
        return _plural(last - first + 1, "line")
    if name == "edit" and isinstance(details.get("diff"), str):
        added, removed = _diff_counts(details["diff"])
        return f"+{added} −{removed}"
    if name == "write":
        content = args.get("content")
        lines = len(content.splitlines()) if isinstance(content, str) else 0
        return ("created · " if details.get("created") else "") + _plural(lines, "line")
    if name == "ls" and isinstance(details.get("entries"), int):
        return _plural(details["entries"], "entry").replace("entrys", "entries")
    if name == "find" and isinstance(details.get("matches"), int):
        return _plural(details["matches"], "file")
    if name == "grep" and isinstance(details.get("matches"), int):
        files = details.get("files")
        count = files if isinstance(files, int) else len(files) if isinstance(files, list) else None
        return _plural(details["matches"], "match").replace("matchs", "matches") + (
            f" in {_plural(count, 'file')}" if count else ""
        )
    if name == "bash":
        output = text if text != "(no output)" else ""
        return _plural(len(output.splitlines()), "line") if output else "no output"
    return _plural(len(text.splitlines()), "line") if text else "done"


def _error_reason(text: str) -> str:
    """The line of a failed tool call's text that says why."""
    lines = [line.strip() for line in _lines(text.strip()) if line.strip()]
    if lines and lines[-1].startswith(("Exit code", "Command")):
        return lines[-1]
    return lines[0] if lines else ""


@dataclass
class Usage:
    """Tokens and cost of the responses seen so far (the assistant messages' ``usage``)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    model: str | None = None
    context: int | None = None
    """The context's size at the last response: its prompt and answer, as the server counts it for
    compaction (the usage's ``totalTokens``, else the sum of its parts)."""

    def add(self, message: dict[str, Any]) -> None:
        if message.get("provider") and message.get("model"):
            self.model = f"{message['provider']}/{message['model']}"
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return
        if message.get("stopReason") not in ("error", "aborted"):
            parts = sum(int(usage.get(part) or 0) for part in ("input", "output", "cacheRead", "cacheWrite"))
            self.context = int(usage.get("totalTokens") or 0) or parts or self.context
        self.input += int(usage.get("input") or 0)
        self.output += int(usage.get("output") or 0)
        self.cache_read += int(usage.get("cacheRead") or 0)
        self.cache_write += int(usage.get("cacheWrite") or 0)
        cost = usage.get("cost")
        if isinstance(cost, dict):
            self.cost += float(cost.get("total") or 0)

    def line(self, seconds: float | None = None) -> str:
        """``faux/faux-1 · ↑1.2k ↓340 · $0.0042 · 2.1s · context 1.5k``."""
        tokens = f"↑{human_count(self.input + self.cache_write)} ↓{human_count(self.output)}"
        if self.cache_read:
            tokens += f" ({human_count(self.cache_read)} cached)"
        parts = [self.model or "no model", tokens, f"${self.cost:.4f}" if self.cost else "$0"]
        if seconds is not None:
            parts.append(human_seconds(seconds))
        if self.context:
            parts.append(f"context {human_count(self.context)}")
        return " · ".join(parts)


def _tool_title(name: str, args: Any) -> Text:
    """``read README.md``: a tool call's name (bold) and what it is about."""
    # imported at the first tool line: the tools layer takes half a second that `run -p` never needs
    from agentls.tools.catalogue import call_summary

    return Text.assemble(visible_text(name, "bold"), " ", visible_text(call_summary(name, args)))


def _output_rows(lines: list[str]) -> list[Text]:
    """Lines of a command's output (or an MCP server's answer), indented under its tool line."""
    return [visible_text("  │ " + line, "dim") for line in lines]


@dataclass
class _Call:
    name: str
    args: Any
    output: str = ""


class Transcript:
    """A run as terminal coding agents show it, from its agent events (wire dicts).

    The answer as rendered markdown, thinking dimmed, each tool call one line with a short result
    (``✓ read README.md · 12 lines``) and errors in red. On a terminal with ``live`` (``agentls
    run``), what is still streaming (the paragraph being written, running tools with their
    output, a spinner) is redrawn in place below what is final; ``agentls chat`` sets ``live``
    off, as its input line owns the bottom of the screen, and sees paragraphs as they end. On
    anything but a terminal the output is plain: the text as it streams (its markdown as
    written), one line per tool call when it ends, no styles or cursor movement, no line wrapped.
    """

    def __init__(
        self, console: Console, *, live: bool = True, show_user: bool = False, show_errors: bool = True
    ) -> None:
        self.console = whole_lines_off_a_terminal(console)
        self.rich = console.is_terminal
        self.live = live and self.rich
        self.show_user = show_user
        self.show_errors = show_errors
        self.usage = Usage()
        self.running = False
        self.compacting = False
        self.calls: dict[str, _Call] = {}
        """The tool calls that have started and not ended, by id."""
        self._block: str | None = None
        """``text`` or ``thinking`` while such a block streams."""
        self._pending = ""
        """The streamed text of the block that is not printed yet (rich mode)."""
        self._first_chunk = True
        self._ends_with_newline = True
        self._last: str | None = None
        self._held: list[Text] = []
        """Lines of the application's own that came while plain output was in the middle of a
        streamed line: shown when that line ends, so that they never split it."""
        self._live: Live | None = None
        self._bash_line = ""

    # --- output helpers ----------------------------------------------------------------------

    def _gap(self, kind: str) -> None:
        """A blank line between sections; tool lines follow each other without one."""
        if self._last is not None and not (kind == self._last == "tool"):
            self.console.print()
        self._last = kind

    def _view(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self._block and self._pending.strip():
            if self._block == "text":
                parts.append(_markdown(visible(self._pending)))
            else:
                parts.append(visible_text(self._pending, "dim italic"))
        for call in list(self.calls.values()):
            title = _tool_title(call.name, call.args)
            parts.append(Spinner("dots", title, style="cyan"))
            for row in _output_rows(_lines(call.output)[-TOOL_PREVIEW_LINES:]):
                row.no_wrap, row.overflow = True, "ellipsis"
                parts.append(row)
        if not parts and (self.running or self.compacting):
            parts.append(Spinner("dots", Text("compacting…" if self.compacting else "working…", "dim")))
        return Group(*parts)

    def _refresh(self) -> None:
        if not self.live:
            return
        if self._live is None:
            if not (self.running or self.compacting or self.calls):
                return
            # Redrawn on events only, from this thread: rich's refresh thread raced the lines
            # printed above the live part and could erase one (a tool's line, under load).
            self._live = Live(
                console=self.console,
                get_renderable=self._view,
                transient=True,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        else:
            self._live.refresh()

    def pause(self) -> None:
        """Take the live part off the screen (before asking the user something, or at the end)."""
        if self._live is not None:
            self._live.stop()
            self._live = None

    close = pause

    # --- streamed blocks ---------------------------------------------------------------------

    def _start_block(self, kind: str) -> None:
        self._block, self._pending, self._first_chunk = kind, "", True
        if not self.rich:
            self._gap(kind)
            if kind == "thinking":
                self.console.print("✻ ", end="", soft_wrap=True)
            self._ends_with_newline = kind == "text"

    def _commit(self, chunk: str) -> None:
        """A finished paragraph (or code block, list...) of the streaming block, printed for good."""
        self._gap(self._block or "text")
        if self._block == "thinking":
            self.console.print(visible_text(("✻ " if self._first_chunk else "  ") + chunk, "dim italic"))
        else:
            self.console.print(_markdown(visible(chunk)))
        self._first_chunk = False

    def _delta(self, delta: str) -> None:
        if self._block is None:
            self._start_block("text")
        if not self.rich:
            if delta:
                self.console.print(visible(delta), end="", markup=False, highlight=False, soft_wrap=True)
                self._ends_with_newline = delta.endswith("\n")
                if self._ends_with_newline:
                    self._show_held()
            return
        blocks, self._pending = split_blocks(self._pending + delta)
        for block in blocks:
            self._commit(block)
        self._refresh()

    def _end_block(self) -> None:
        if self._block is None:
            return
        if not self.rich:
            if not self._ends_with_newline:
                self.console.print()
        elif self._pending.strip():
            self._commit(self._pending)
        self._block, self._pending = None, ""
        self._show_held()
        self._refresh()

    def markdown(self, text: str) -> None:
        """A whole text block at once (a resumed session's answers)."""
        self._end_block()
        self._start_block("text")
        self._delta(text)
        self._end_block()

    # --- lines -------------------------------------------------------------------------------

    def line(self, text: str | Text, kind: str = "note", style: str | None = None) -> None:
        """One line of the application's own (a note, a question, an error). A ``str`` is shown
        with its control characters written out; a :class:`Text` is shown as it is (build it with
        :func:`~agentls.terminal_text.visible_text` from untrusted text).

        It never goes into a paragraph that is streaming: on a terminal that paragraph is not
        printed yet (it follows, whole, below the line); in plain output the line waits for the
        streamed line to end."""
        shown = visible_text(text) if isinstance(text, str) else text
        if style is not None:
            shown = shown.copy()
            shown.stylize(style)
        if self._block is not None and not self.rich and not self._ends_with_newline:
            self._held.append(shown)
            return
        self._gap(kind)
        self.console.print(shown, markup=False, highlight=False)

    def _show_held(self) -> None:
        held, self._held = self._held, []
        for shown in held:
            self._gap("note")
            self.console.print(shown, markup=False, highlight=False)

    def _tool_end(self, event: dict[str, Any]) -> None:
        call = self.calls.pop(str(event.get("toolCallId")), None)
        name = str(event.get("toolName"))
        args = call.args if call else None
        result = event.get("result") if isinstance(event.get("result"), dict) else {}
        text = _texts(result.get("content"))
        failed = bool(event.get("isError"))
        line = Text.assemble(("✗ ", "red") if failed else ("✓ ", "green"), _tool_title(name, args))
        preview: list[Text] = []
        if failed:
            from agentls.tools.catalogue import first_line  # loaded by the line's title already

            line.append_text(visible_text(" · " + first_line(_error_reason(text), 100), "red"))
            if name == "bash":
                output = text.rsplit("\n\n", 1)[0] if "\n\n" in text else ""
                preview = _output_rows(_lines(output)[-TOOL_PREVIEW_LINES:])
        else:
            line.append(" · " + result_summary(name, args, result), "dim")
            if name == "bash" and text != "(no output)":
                preview = _output_rows(_lines(text)[-TOOL_PREVIEW_LINES:])
            elif name.startswith("mcp__"):  # an MCP server's answer: its first lines
                lines = _lines(text)
                preview = _output_rows(lines[:TOOL_PREVIEW_LINES])
                if len(lines) > TOOL_PREVIEW_LINES:
                    preview.append(Text(f"  … {len(lines) - TOOL_PREVIEW_LINES} more lines", "dim"))
            details = result.get("details") if isinstance(result.get("details"), dict) else {}
            if name == "edit" and isinstance(details.get("diff"), str):
                changed = [
                    s for s in _lines(details["diff"]) if s[:1] in "+-" and not s.startswith(("+++", "---"))
                ]
                preview = [visible_text("  " + s, "green" if s.startswith("+") else "red") for s in changed]
                if len(preview) > 2 * TOOL_PREVIEW_LINES:
                    more = len(preview) - 2 * TOOL_PREVIEW_LINES
                    preview = [*preview[: 2 * TOOL_PREVIEW_LINES], Text(f"  … {more} more", "dim")]
        self._end_block()
        self._gap("tool")
        for row in (line, *preview):
            row.no_wrap, row.overflow = True, "ellipsis"
            self.console.print(row, highlight=False)
        self._refresh()

    def compaction(self, note: dict[str, Any]) -> None:
        """An ``agent/compaction`` notification: a spinner while it runs (live), one line when it ends."""
        self.compacting = note.get("phase") == "start"
        if note.get("phase") == "end":
            self._end_block()
            self._gap("note")
            self.console.print(compaction_line(note), style="dim", highlight=False)
        self._refresh()

    def bash_output(self, chunk: str) -> None:
        """A piece of a user's command's output (``agent/bashOutput``): its whole lines, as they come."""
        lines = (self._bash_line + chunk).split("\n")
        self._bash_line = lines.pop()
        for row in _output_rows([line.removesuffix("\r") for line in lines]):
            self.console.print(row, highlight=False)

    def bash_end(self, message: dict[str, Any]) -> None:
        """The end of a user's command (``agent/bashEnd``'s ``bashExecution`` message)."""
        if self._bash_line:
            self.bash_output("\n")
        status = "cancelled" if message.get("cancelled") else f"exit {message.get('exitCode')}"
        failed = bool(message.get("cancelled")) or message.get("exitCode") != 0
        excluded = " · not sent to the model" if message.get("excludeFromContext") else ""
        self.console.print(Text(f"  {status}{excluded}", "red" if failed else "dim"), highlight=False)

    # --- events ------------------------------------------------------------------------------

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        message = event.get("message") or {}
        if kind == "message_update":
            update = event.get("assistantMessageEvent") or {}
            utype = update.get("type")
            if utype in ("text_start", "thinking_start"):
                self._end_block()
                self._start_block("text" if utype == "text_start" else "thinking")
            elif utype in ("text_delta", "thinking_delta"):
                self._delta(str(update.get("delta", "")))
            elif utype in ("text_end", "thinking_end"):
                self._end_block()
        elif kind == "agent_start":
            self.running = True
            self._refresh()
        elif kind == "message_start" and message.get("role") == "user" and self.show_user:
            self.line(visible_text("› " + _texts(message.get("content")), "bold"), kind="user")
        elif kind == "message_start" and message.get("customType") == "editorContext":
            self.line(visible_text(chips(message.get("details")), "magenta"))  # not the files' text
        elif kind == "message_start" and message.get("role") == "custom" and message.get("display"):
            self.line(visible_text(_texts(message.get("content")), "magenta"))
        elif kind == "message_end" and message.get("role") == "assistant":
            self._end_block()
            self.usage.add(message)
            stop = message.get("stopReason")
            if stop == "length":
                self.line(Text("the answer was cut at the model's output limit", "yellow"), kind="error")
            if self.show_errors and stop in ("error", "aborted"):
                text = message.get("errorMessage") or stop
                style = "yellow" if stop == "aborted" else "bold red"
                self.line(visible_text(f"✗ {text}", style), kind="error")
        elif kind == "tool_execution_start":
            self._end_block()
            self.calls[str(event.get("toolCallId"))] = _Call(str(event.get("toolName")), event.get("args"))
            self._refresh()
        elif kind == "tool_execution_update":
            call = self.calls.get(str(event.get("toolCallId")))
            if call is not None:
                call.output = _texts((event.get("partialResult") or {}).get("content"))
                self._refresh()
        elif kind == "tool_execution_end":
            self._tool_end(event)
        elif kind == "agent_end":
            self._end_block()
            self.running = False
            self.calls.clear()
            self.pause()


def chips(details: Any) -> str:
    """An ``editorContext`` message's attachments as chat shows them: ``README.md (3 lines)``, ..."""
    shown = []
    for info in (details or {}).get("attachments") or []:
        if info.get("type") == "diagnostics":
            count = info.get("count") or 0
            shown.append(f"{info.get('path') or 'the workspace'}: {count} problem{'s' * (count != 1)}")
            continue
        where = str(info.get("path") or info.get("uri") or "")
        if info.get("type") == "selection" and info.get("startLine"):
            where += f":{info['startLine']}-{info.get('endLine', info['startLine'])}"
        lines = info.get("lines")
        notes = [f"{lines} line{'s' * (lines != 1)}"] if isinstance(lines, int) else []
        notes += ["cut: the read tool has the rest"] if info.get("truncated") else []
        shown.append(where + (f" ({', '.join(notes)})" if notes else ""))
    return "attached: " + ", ".join(shown)
