"""``agentls chat``: an interactive session on a terminal, through the server as an editor drives it.

The input line (prompt_toolkit) stays at the bottom while the transcript scrolls above it:

- Enter sends a prompt; while a run is going it steers (delivered after the current turn);
  Alt+Enter queues a follow-up (delivered when the agent would stop). Ctrl+J writes a newline
  (so does Shift+Enter in a terminal that tells it apart from Enter).
- Shift+Tab switches the session to its next permission preset (``agent/setPermissionPreset``),
  shown in the status line.
- Ctrl+C aborts the run (or the user's command), clears the line when idle, and quits when
  pressed twice; Ctrl+D on an empty line quits.
- ``!cmd`` runs the user's own command (``!!cmd`` keeps its output from the model).
- ``@path`` completes the workspace's files and attaches the file mentioned (:mod:`.mentions`).
- ``/compact``, ``/model``, ``/sessions``, ``/new``, ``/help``, ``/quit``; any other ``/name`` goes
  to the server, which expands the prompt templates and skills (Tab completes them). Without an
  argument ``/model``, ``/sessions``, ``/rewind`` and ``/fork`` open a picker (:mod:`.picker`);
  ``/sessions ID`` takes the start of an id too.
- ``/rewind N`` goes back to before the Nth (its prompt and
  what followed stay on a branch of their own), putting back the files the agent changed since
  (``keep-files``: leaves them; ``force``: reverts those nobody changed since, when some were;
  ``summarize``: a summary of the branch left behind joins the context). ``/fork N``: a new
  session with the history before the Nth message. Both put that message's text back in the
  input line.
- ``/changes`` prints the diff of the last run (``/changes all``: of the whole session), whatever
  made it (``write``, ``edit``, ``bash``, ...); ``/revert PATH`` takes back what the last run did to
  a file (``/revert all``: to every file; alone: a list to pick from; ``force``: reverts the others
  when some changed since). Tab completes the paths (:mod:`.changes`).
- Permission questions appear inline and are answered with one key: ``o`` once, ``a`` always,
  ``s`` always for every tool of the MCP server (when the tool is one), ``r`` (or ``n``, Escape)
  reject; a project's MCP servers are trusted with ``t``.
- A line for each MCP server that fails or waits for trust, and the MCP configuration's
  problems once (``--mcp-config FILE`` adds servers).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import time
from collections.abc import AsyncIterator, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app_or_none
from prompt_toolkit.completion import (
    CompleteEvent,
    Completer,
    Completion,
    ThreadedCompleter,
    merge_completers,
)
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, to_filter
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console
from rich.text import Text

from agentls.cli.changes import (
    REVERT_MESSAGE,
    RevertCompleter,
    RevertRequest,
    changes_text,
    conflict_lines,
    file_header,
    revert_report,
    revert_request,
)
from agentls.cli.in_process import in_process_client
from agentls.cli.input_keys import newline_keys, typed_ahead_kept
from agentls.cli.mcp_report import McpReport
from agentls.cli.mentions import MentionCompleter, attachments
from agentls.cli.options import check_options, client_options, server_data_dir
from agentls.cli.permissions import KEYS, Choice, outcome_of_key, permission_choices, question_lines
from agentls.cli.picker import pick
from agentls.cli.printer import Transcript, human_seconds
from agentls.cli.session_ids import live_session, stored_session
from agentls.cli.status_line import Part, cut, fitted
from agentls.client import AgentClient, AgentClientError, Notification, per_user_server_command
from agentls.protocol import ModelRef, StateResult
from agentls.terminal_text import visible, visible_text

BUILTINS = {
    "compact": "summarise the conversation so far (optional: what to focus on)",
    "model": "pick the model, or switch: /model PROVIDER/ID",
    "sessions": "pick a session of this folder, or resume one: /sessions ID (or its start)",
    "new": "start a new session",
    "rewind": "pick a message of yours to go back to before: /rewind [N] [keep-files] [force] [summarize]",
    "fork": "a new session with the history before one of your messages: /fork [N]",
    "changes": "the diff of the last run (/changes all: of the whole session)",
    "revert": "take back what the last run did to a file: /revert [PATH | all] [force]",
    "help": "the keys and commands",
    "quit": "leave (also Ctrl+D, or Ctrl+C twice)",
}

HELP = """Enter sends (while a run goes: steers) · Alt+Enter queues a follow-up
Ctrl+J (Shift+Enter where the terminal tells it apart): a newline · Ctrl+C aborts (twice: quits)
@path attaches a workspace file (Tab completes it, and /commands) · !cmd runs your command
  (!!cmd: its output is not sent to the model)
Shift+Tab: the next permission mode (ask, accept edits, read-only, bypass), in the status line
/compact [focus] · /model [PROVIDER/ID] · /sessions [ID or its start] · /new · /quit
/NAME: a prompt template or skill · /model, /sessions, /rewind, /fork alone: a list to pick from
  (↑↓ choose · Enter picks · Esc cancels)
/rewind N goes back to before your Nth message, reverting the agent's edits (keep-files: leaves
  the files; force: reverts the others if some changed since; summarize) · /fork N: a new session
/changes: the diff of the last run (all: of the session) · /revert PATH takes back what the last
  run did to it (all: to every file; alone: a list to pick from; force: the others if some changed)"""

PICK_MESSAGE = {
    "rewind": "rewind to before which message? (/rewind N [keep-files] [force] [summarize])",
    "fork": "fork: a new session with the history before which message?",
}
"""The title of the list ``/rewind`` and ``/fork`` without a number open."""

PICK_REVERT = "revert what the last run did to which file? (/revert PATH | all [force])"
"""The title of the list ``/revert`` alone opens."""

SESSIONS_SHOWN = 20
"""The folder's latest sessions that ``/sessions`` offers."""

REWIND_FLAGS = {"keep-files": "keep_files", "keep": "keep_files", "force": "force", "summarize": "summarize"}
"""The words ``/rewind N`` takes after the number."""


@dataclass(frozen=True)
class UserMessage:
    """One of the user's messages on the session's current branch."""

    number: int
    """1 for the first."""
    entry_id: str
    before: str | None
    """The entry to rewind or fork at to undo it (``None``: before the first message)."""
    text: str


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [block.get("text", "") for block in content or [] if isinstance(block, dict)]
    return "\n".join(part for part in parts if isinstance(part, str))


QUIT_WINDOW = 2.0
"""Seconds within which a second Ctrl+C quits."""

COMPLETION_WAIT = 5.0
"""Seconds the completion of ``/revert PATH`` waits for the last run's changes."""

SHORT_OUTPUT = 40
"""Cells of a running tool's last output line that the status line keeps when the whole line is too long."""


class SlashCompleter(Completer):
    """``/`` and the start of a command: the built-in commands, the templates and the skills."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat

    @staticmethod
    def wants(document: Document) -> bool:
        """Whether the text before the cursor is a command being typed."""
        text = document.text_before_cursor
        return text.startswith("/") and " " not in text

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        if not self.wants(document):
            return
        typed = document.text_before_cursor[1:]
        for name, meta in [*BUILTINS.items(), *self.chat.commands]:
            if name.startswith(typed):
                yield Completion(name, start_position=-len(typed), display_meta=meta)


class Chat:
    """One terminal's conversation with one session at a time."""

    def __init__(
        self,
        client: AgentClient,
        console: Console,
        *,
        cwd: str | None,
        model: Any,
        data_dir: Path | None = None,
    ) -> None:
        self.client = client
        self.console = console
        self.cwd = cwd
        self.model = model
        self.transcript = Transcript(console, live=False, show_user=True)
        self.session_id = ""
        self.commands: list[tuple[str, str]] = []
        self.state: StateResult | None = None
        """The session's state as last read (its permission preset and the presets to cycle)."""
        self.run_id: str | None = None
        self.settled_runs: set[str] = set()
        """Runs whose ``agent/settled`` came: the answer to a prompt can arrive after its run settled."""
        self.run_started = 0.0
        self.bash_running = False
        self.compacting = False
        self.queued = 0
        self.question: tuple[Any, asyncio.Future[str]] | None = None
        self.asking = asyncio.Lock()
        self.started = asyncio.Event()
        """Set once the banner is shown."""
        self.follow_up_next = False
        self.last_interrupt = 0.0
        self.quit = False
        self.prompt: PromptSession[str] | None = None
        self.folder = str(Path(cwd or ".").resolve())
        self.tasks: set[asyncio.Task[Any]] = set()
        self.next_text = ""
        """What the input line starts with next (a rewound or forked message's text)."""
        self.changed: list[str] | None = None
        """The files the last run changed, for completing ``/revert`` (``None``: ask the server)."""
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.mcp = McpReport(lambda line: self.note(line, "yellow"), data_dir, show_ready=self.note)
        """The MCP servers' trouble, one line each."""

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` beside the input line; a failure becomes a red line."""

        def done(task: asyncio.Task[Any]) -> None:
            self.tasks.discard(task)
            if not task.cancelled() and isinstance(task.exception(), AgentClientError):
                self.note(f"✗ {task.exception()}", "red")

        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(done)

    # --- state ---------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.run_id is not None or self.compacting

    def note(self, text: str, style: str = "dim") -> None:
        """A line of the chat's own; what it quotes (paths, titles, errors) shows its controls written out."""
        self.transcript.line(visible_text(text, style))

    def notes(self, lines: list[tuple[str, str]]) -> None:
        """Several lines as one section: ``(text, style)`` each."""
        text = Text()
        for index, (line, style) in enumerate(lines):
            text.append("\n" if index else "")
            text.append_text(visible_text(line, style))
        self.transcript.line(text)

    def invalidate(self) -> None:
        app = get_app_or_none()
        if app is not None:
            app.invalidate()

    async def open_session(self, typed: str | None = None) -> None:
        """A new session, or the stored one whose id is or starts with ``typed``."""
        if typed:
            session_id = await stored_session(self.client, typed)
            loaded = await self.client.load_session(session_id)
            self.session_id = session_id
        else:
            self.session_id = await self.client.new_session(cwd=self.cwd, model=self.model)
        await self.read_state()
        self.show_banner()
        if typed:
            self.replay((await self.client.get_messages(session_id)).messages)
            self.note(f"resumed session {session_id} · {loaded.message_count} messages")
        await self.mcp.session(self.client, self.session_id)

    async def join_session(self, typed: str) -> None:
        """Join a live session of the per-user server (``typed``: its id or start; ``""``: the
        folder's newest): its transcript so far, then its notifications from there on, a run going
        on included."""
        info = await live_session(self.client, typed, self.folder)
        self.session_id = info.session_id
        loaded = await self.client.get_messages(self.session_id)
        await self.read_state()
        self.show_banner()
        self.replay(loaded.messages)
        assert self.state is not None
        if self.state.is_running and self.state.run_id:
            self.run_id, self.run_started = self.state.run_id, time.monotonic()
        # what the transcript lacks (a run's tool calls, the answer being streamed) comes again: the
        # server keeps every notification after the seq that getMessages answers, so there is no gap
        await self.client.attach(self.session_id, since=loaded.seq)
        running = " · running" if self.run_id else ""
        clients = f" · {info.clients} other client{'s' if info.clients != 1 else ''}" if info.clients else ""
        count = len(loaded.messages)
        self.note(f"joined live session {self.session_id} · {count} messages{clients}{running}")
        await self.mcp.session(self.client, self.session_id)

    def show_banner(self) -> None:
        """The chat's first lines, once, above all the first session shows and asks (its folder's trust)."""
        if self.started.is_set():
            return
        model = visible(f" · {self.transcript.usage.model} · {self.folder}")
        self.console.print(
            Text.assemble(
                ("agentls chat", "bold"), (model, "dim"), ("\n/help for the keys and commands", "dim")
            )
        )
        self.started.set()

    async def read_state(self) -> None:
        """The current session's model, permission preset and commands."""
        self.state = state = await self.client.get_state(self.session_id)
        if state.model:
            self.model = (state.model.provider, state.model.id)
            self.transcript.usage.model = f"{state.model.provider}/{state.model.id}"
        commands = await self.client.list_commands(self.session_id)
        self.commands = [(c.name, c.description) for c in commands]

    def replay(self, messages: list[dict[str, Any]]) -> None:
        """A resumed session's transcript: the user's prompts and the answers."""
        for message in messages:
            if message.get("role") == "user":
                self.transcript({"type": "message_start", "message": message})
            elif message.get("role") == "assistant":
                for block in message.get("content") or []:
                    if block.get("type") == "text" and block.get("text"):
                        self.transcript.markdown(block["text"])

    # --- notifications -------------------------------------------------------------------

    async def follow(self, notes: Any) -> None:
        """Every notification (of ``client.subscribe()``): the session's, and the MCP servers' status."""
        async for note in notes:
            if note.method == "agent/mcpStatus":
                self.mcp(note.params)
            elif note.session_id == self.session_id:
                self.receive(note)
            self.invalidate()

    def receive(self, note: Notification) -> None:
        params = note.params
        if note.method == "agent/event":
            event = params["event"]
            if event.get("type") == "agent_start" and self.run_id is None:
                self.run_id, self.run_started = params.get("runId"), time.monotonic()
                self.transcript.usage = type(self.transcript.usage)(model=self.transcript.usage.model)
            message = event.get("message") or {}
            if event.get("type") == "message_end" and message.get("role") == "bashExecution":
                return  # shown as it ran (agent/bashOutput, agent/bashEnd)
            if message.get("customType") == REVERT_MESSAGE:
                return  # the revert's own report said it (only this chat's server's client reverts)
            self.transcript(event)
        elif note.method == "agent/compaction":
            self.transcript.compaction(params)
        elif note.method == "agent/queue":
            self.queued = len(params.get("steering") or []) + len(params.get("followUp") or [])
        elif note.method == "agent/bashOutput":
            self.transcript.bash_output(str(params.get("chunk", "")))
        elif note.method == "agent/bashEnd":
            self.bash_running = False
            self.changed = None
            self.transcript.bash_end(params.get("message") or {})
        elif note.method == "agent/settled":
            elapsed = time.monotonic() - self.run_started if self.run_started else None
            stop = params.get("stopReason")
            footer = self.transcript.usage.line(elapsed) + ("" if stop == "stop" else f" · {stop}")
            self.transcript.line(Text(footer, "dim"), kind="footer")
            self.settled_runs.add(str(params.get("runId")))
            self.changed = None
            self.run_id, self.run_started = None, 0.0

    # --- permission questions ------------------------------------------------------------

    async def ask(self, request: Any) -> str:
        await self.started.wait()  # a question as the first session opens comes below the banner
        async with self.asking:  # one question at a time (a trust question and a tool's)
            return await self._ask(request)

    async def _ask(self, request: Any) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.question = (request, future)
        self.transcript.line(Text("? ") + question_lines(request), kind="question", style="bold yellow")
        self.invalidate()
        try:
            answer = await future
        finally:
            self.question = None
            self.invalidate()
        said = next((c.said for c in self.choices(request) if c.outcome == answer), "rejected")
        self.note(f"  {said}", "yellow" if answer == "reject" else "green")
        return answer

    @staticmethod
    def choices(request: Any) -> list[Choice]:
        return permission_choices(request.tool_name, request.options)

    def offered(self, key: str) -> str | None:
        """The outcome the key ``key`` gives to the question asked now (``None``: none)."""
        return None if self.question is None else outcome_of_key(self.question[0], key)

    def answer(self, outcome: str) -> None:
        if self.question is not None and not self.question[1].done():
            self.question[1].set_result(outcome)

    # --- what the user types -------------------------------------------------------------

    async def submit(self, text: str, follow_up: bool) -> None:
        line = text.strip()
        if not line:
            return
        try:
            if line.startswith("!"):
                await self.user_command(line)
            elif line.startswith("/") and line[1:].split(" ", 1)[0] in BUILTINS:
                name, _, argument = line[1:].partition(" ")
                await self.builtin(name, argument)
            else:  # the server says whether the session is busy (a run may be ending as this is sent)
                context = attachments(self.folder, line) or None
                kind = "followUp" if follow_up else "steer"
                accepted = await self.client.prompt(self.session_id, line, when_busy=kind, context=context)
                if accepted.queued:
                    self.note(f"  queued ({'follow-up' if follow_up else 'steering'}): {line}")
                elif accepted.run_id and self.run_id is None and accepted.run_id not in self.settled_runs:
                    self.run_id, self.run_started = accepted.run_id, time.monotonic()
        except AgentClientError as error:
            self.note(f"✗ {error}", "red")

    async def user_command(self, line: str) -> None:
        exclude = line.startswith("!!")
        command = line[2:] if exclude else line[1:]
        if not command.strip():
            return
        self.transcript.line(Text(f"$ {command.strip()}", "bold magenta"), kind="bash")
        self.bash_running = True
        try:
            await self.client.bash(self.session_id, command, exclude_from_context=exclude)
        except AgentClientError:
            self.bash_running = False
            raise

    async def builtin(self, name: str, argument: str) -> None:
        argument = argument.strip()
        if name == "help":
            self.note(HELP)
        elif name == "quit":
            self.quit = True
            app = get_app_or_none()
            if app is not None and app.is_running:
                app.exit(result="")
        elif name == "new":
            if self.busy:
                await self.client.abort(self.session_id)
            await self.open_session()
            self.note(f"new session {self.session_id}")
        elif name == "model":
            await self.choose_model(argument)
        elif name == "sessions":
            await self.sessions(argument)
        elif name == "compact":
            self.compacting = True
            self.spawn(self.compact(argument or None))
        elif name == "rewind":
            await self.rewind(argument)
        elif name == "fork":
            await self.fork(argument)
        elif name == "changes":
            await self.changes(argument)
        elif name == "revert":
            await self.revert(argument)

    async def compact(self, instructions: str | None) -> None:
        try:
            await self.client.compact(self.session_id, instructions)
        except AgentClientError as error:
            if error.kind != "compactionFailed":  # one that failed said so in its agent/compaction line
                self.note(f"✗ {error}", "red")
        finally:
            self.compacting = False
            self.invalidate()

    async def choose_model(self, argument: str) -> None:
        if not argument:
            current = "/".join(self.model) if self.model else ""
            refs, lines = [], []
            for model in await self.client.list_models(self.session_id):
                refs.append(f"{model.get('provider')}/{model.get('id')}")
                lines.append(f"{'●' if refs[-1] == current else ' '} {refs[-1]}  {model.get('name') or ''}")
            picked = await pick("the model", lines, refs.index(current) if current in refs else 0)
            if picked is None or refs[picked] == current:
                return
            argument = refs[picked]
        try:
            chosen = ModelRef.parse(argument)
        except ValueError:
            self.note("✗ /model takes PROVIDER/ID, e.g. faux/faux-1", "red")
            return
        await self.client.set_model(self.session_id, chosen.provider, chosen.id)
        self.model = (chosen.provider, chosen.id)
        self.transcript.usage.model = argument
        self.note(f"model: {argument} (from the next model call)")

    async def sessions(self, argument: str) -> None:
        if self.busy:
            self.note("✗ a run is going: abort it (Ctrl+C) first", "red")
            return
        if argument:
            await self.open_session(argument)
            return
        sessions = (await self.client.list_sessions(self.folder))[:SESSIONS_SHOWN]
        if not sessions:
            self.note("no sessions in this folder")
            return
        lines = []
        for info in sessions:
            mark = "●" if info.session_id == self.session_id else " "
            ago = human_seconds(max(0.0, time.time() - info.updated_at / 1000))
            count = f"{info.message_count:>3} messages"
            lines.append(f"{mark} {info.session_id[:8]}  {count} · {ago} ago  {info.title or ''}")
        others = [index for index, info in enumerate(sessions) if info.session_id != self.session_id]
        picked = await pick("resume a session of this folder", lines, others[0] if others else 0)
        if picked is not None and sessions[picked].session_id != self.session_id:
            await self.sessions(sessions[picked].session_id)

    def preset_name(self) -> str:
        """The short name of the session's permission preset (``""`` before its state is read)."""
        if self.state is None:
            return ""
        return next(
            (p.name for p in self.state.permission_presets if p.id == self.state.permission_preset), ""
        )

    async def next_preset(self) -> None:
        """Shift+Tab: the session's next permission preset, in the server's order (wrapping)."""
        if self.state is None or not self.state.permission_presets:
            return
        presets = [preset.id for preset in self.state.permission_presets]
        current = (
            presets.index(self.state.permission_preset) if self.state.permission_preset in presets else -1
        )
        chosen = presets[(current + 1) % len(presets)]
        self.state = await self.client.set_permission_preset(self.session_id, chosen)
        described = next(p.description for p in self.state.permission_presets if p.id == chosen)
        self.note(f"permission mode: {self.preset_name()} · {described} (Shift+Tab: the next)")

    # --- the session tree ----------------------------------------------------------------

    async def user_messages(self) -> list[UserMessage]:
        """The user's messages on the current branch, with the entry before each (``agent/getTree``)."""
        result = await self.client.get_messages(self.session_id)
        tree = await self.client.get_tree(self.session_id)
        parents = {entry.id: entry.parent_id for entry in tree.entries}
        ids: list[str | None] = [*result.entry_ids]
        found: list[UserMessage] = []
        for index, message in enumerate(result.messages):
            entry_id = ids[index] if index < len(ids) else None
            if message.get("role") != "user" or entry_id is None:
                continue
            previous_id = ids[index - 1] if index > 0 else None
            before = parents.get(entry_id, previous_id)
            previous = result.messages[index - 1] if index > 0 else {}
            if (
                before is not None
                and before == previous_id
                and previous.get("role") == "custom"
                and previous.get("customType") == "editorContext"
            ):  # the editor context sent with the prompt goes with it
                before = parents[before] if before in parents else (ids[index - 2] if index > 1 else None)
            found.append(
                UserMessage(
                    number=len(found) + 1, entry_id=entry_id, before=before, text=message_text(message)
                )
            )
        return found

    async def chosen_message(self, command: str, number: str) -> UserMessage | None:
        """The Nth user message, or ``None`` after saying what is wrong (or listing them)."""
        messages = await self.user_messages()
        if not messages:
            self.note(f"nothing to {command}: no message of yours yet")
            return None
        if not number:
            from agentls.tools.catalogue import one_line  # the tools layer takes half a second to load

            title = PICK_MESSAGE[command]
            lines = [f"{message.number:>2}  {one_line(message.text)}" for message in messages]
            picked = await pick(title, lines, len(lines) - 1)
            return None if picked is None else messages[picked]
        if not number.isdigit() or not 1 <= int(number) <= len(messages):
            self.note(
                f"✗ /{command} takes a message number from 1 to {len(messages)} (/rewind alone lists them)",
                "red",
            )
            return None
        return messages[int(number) - 1]

    async def rewind(self, argument: str) -> None:
        words = argument.split()
        number = words[0] if words else ""
        flags = {REWIND_FLAGS.get(word, word) for word in words[1:]}
        unknown = flags - set(REWIND_FLAGS.values())
        if unknown:
            self.note(
                f"✗ /rewind N takes keep-files, force, summarize; not {', '.join(sorted(unknown))}", "red"
            )
            return
        if self.busy:
            self.note("✗ a run is going: abort it (Ctrl+C) first", "red")
            return
        message = await self.chosen_message("rewind", number)
        if message is None:
            return
        files = "keep_files" not in flags
        try:
            result = await self.client.rewind(
                self.session_id,
                message.before,
                files=files,
                summarize="summarize" in flags,
                force="force" in flags,
            )
        except AgentClientError as error:
            if error.kind != "fileConflict":
                raise
            data = error.data if isinstance(error.data, dict) else {}
            lines = [("✗ these files changed since the agent's edit; nothing was rewound:", "red")]
            lines += [
                (f"  {file.get('path')}: {file.get('reason')}", "yellow") for file in data.get("files") or []
            ]
            lines.append(
                (f"/rewind {message.number} force reverts the others and leaves these as they are", "yellow")
            )
            self.notes(lines)
            return
        from agentls.tools.catalogue import one_line  # the tools layer takes half a second to load

        report = [(f"↶ rewound to before message {message.number}: {one_line(message.text, 60)}", "bold")]
        reverted = [f"{file.action} {file.path}" for file in result.reverted]
        if reverted:
            report.append((f"  files: {', '.join(reverted)}", "dim"))
        elif files:
            report.append(("  no file to put back", "dim"))
        else:
            report.append(("  files left as they are", "dim"))
        for skipped in result.skipped:
            report.append((f"  skipped {skipped.path}: {skipped.reason}", "yellow"))
        if result.summary:
            report.append(("  the branch left behind is summarised for the model", "dim"))
        self.notes(report)
        self.next_text = message.text

    async def fork(self, argument: str) -> None:
        number = argument.strip()
        if self.busy:
            self.note("✗ a run is going: abort it (Ctrl+C) first", "red")
            return
        message = await self.chosen_message("fork", number)
        if message is None:
            return
        old = self.session_id
        if message.before is None:
            new = await self.client.new_session(cwd=self.cwd, model=self.model)
        else:
            new = await self.client.fork(old, message.before)
        self.session_id = new
        self.run_id, self.queued = None, 0
        await self.read_state()
        kept = len((await self.client.get_messages(new)).messages)
        self.note(
            f"⑂ forked session {old[:8]} into {new} before message {message.number} · {kept} messages", "bold"
        )
        self.next_text = message.text

    # --- the changes of a run -----------------------------------------------------------

    async def changes(self, argument: str) -> None:
        """``/changes``: the diff of the last run; ``/changes all``: of the whole session."""
        if argument not in ("", "all"):
            self.note("✗ /changes takes nothing (the last run) or all (the whole session)", "red")
            return
        if argument == "all":
            result = await self.client.get_changes(self.session_id, from_entry_id=None)
        else:
            result = await self.client.get_changes(self.session_id)
            self.changed = [file.path for file in result.files]
        self.transcript.line(changes_text(result, whole_session=argument == "all"))

    async def revert(self, argument: str) -> None:
        """``/revert PATH`` or ``all`` (``force``: the others when some changed since); alone, a list."""
        if self.busy:
            self.note("✗ a run is going: abort it (Ctrl+C) first", "red")
            return
        changes = await self.client.get_changes(self.session_id)
        if not changes.files:
            self.note("nothing to revert: no changes in the last run")
            return
        request = revert_request(argument, changes)
        if isinstance(request, str):
            self.note(request, "red")
            return
        if request.files == []:
            lines = [f"everything the last run changed ({len(changes.files)} files)"]
            lines += [file_header(file).plain for file in changes.files]
            picked = await pick(PICK_REVERT, lines)
            if picked is None:
                return
            if picked == 0:
                request = RevertRequest(None, request.force, "all")
            else:
                path = changes.files[picked - 1].path
                request = RevertRequest([path], request.force, path)
        try:
            result = await self.client.revert_changes(
                self.session_id, files=request.files, force=request.force
            )
        except AgentClientError as error:
            if error.kind != "fileConflict":
                raise
            self.notes(conflict_lines(error.data, request, changes))
            return
        finally:
            self.changed = None
        self.notes(revert_report(result))

    def changed_paths(self) -> list[str]:
        """The last run's changed files, asked of the server once per input (in the completer's thread)."""
        if self.changed is None and self.event_loop is not None and self.session_id:
            asked = asyncio.run_coroutine_threadsafe(
                self.client.get_changes(self.session_id), self.event_loop
            )
            try:
                self.changed = [file.path for file in asked.result(COMPLETION_WAIT).files]
            except (AgentClientError, TimeoutError):
                asked.cancel()
                return []
        return self.changed or []

    def interrupt(self, event: KeyPressEvent) -> None:
        """Ctrl+C: abort what runs, else clear the line, else quit when pressed twice."""
        now = time.monotonic()
        if self.question is not None:
            self.answer("reject")
        if self.busy or self.bash_running:
            if self.bash_running:
                self.spawn(self.client.abort_bash(self.session_id))
            if self.busy:
                self.spawn(self.client.abort(self.session_id))
            self.note("aborting… (Ctrl+C again to quit)", "yellow")
        elif event.current_buffer.text:
            event.current_buffer.reset()
            return
        elif now - self.last_interrupt < QUIT_WINDOW:
            self.quit = True
            event.app.exit(result="")
            return
        else:
            self.note("(Ctrl+C again to quit)")
        self.last_interrupt = now

    # --- the input line ------------------------------------------------------------------

    def message(self) -> FormattedText:
        if self.question is not None:
            request = self.question[0]
            words = " ".join(choice.words for choice in self.choices(request))
            verb = "trust?" if request.tool_name == "mcp" else "allow?"
            return FormattedText([("bold ansiyellow", visible(f"{verb} {words} › ", newlines=False))])
        return FormattedText([("bold ansicyan", "› ")])

    def toolbar(self) -> FormattedText:
        """The status line under the input: what runs (or is asked), the model and the session."""
        app = get_app_or_none()
        width = (app.output.get_size().columns if app is not None else 80) - 1
        return FormattedText([("", " " + fitted(self.status_parts(), width))])

    def status_parts(self) -> list[Part]:
        if self.question is not None:
            return [Part((visible(self.question[0].title, newlines=False),))]
        if self.busy or self.bash_running:
            spinner = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"[int(time.monotonic() * 10) % 10]
            seconds = f" {human_seconds(time.monotonic() - self.run_started)}" if self.run_started else ""
            doing = [f"{spinner} {form}{seconds}" for form in self.activity()]
            queued = f"{self.queued} queued" if self.queued else ""
            return [
                Part(tuple(doing), rank=1),
                Part((queued,), rank=2),
                Part((self.preset_name(),), rank=3),
                Part(("Enter steers · Alt+Enter follow-up · Ctrl+C aborts", "Alt+Enter: follow-up", "")),
            ]
        model = self.transcript.usage.model or ""
        return [
            Part((model, model.partition("/")[2] or model), rank=3),
            Part((self.session_id[:8], "")),
            Part((f"{preset} (Shift+Tab)", preset) if (preset := self.preset_name()) else ("",), rank=2),
            Part(("/help", ""), rank=1),
        ]

    def activity(self) -> list[str]:
        """What runs now, in the forms the status line may show it (longest first)."""
        if self.compacting:
            return ["compacting"]
        if self.transcript.calls:
            call = next(iter(self.transcript.calls.values()))
            name = visible(call.name, newlines=False)
            last = call.output.strip().splitlines()[-1:] if call.output.strip() else []
            if not last:
                return [name]
            line = visible(last[0], newlines=False)
            return [f"{name}: {line}", f"{name}: {cut(line, SHORT_OUTPUT)}", name]
        return ["running your command" if self.bash_running else "working"]

    def key_bindings(self) -> KeyBindings:
        bindings = KeyBindings()
        asking = Condition(lambda: self.question is not None)

        @bindings.add("c-c")
        def _(event: KeyPressEvent) -> None:
            self.interrupt(event)

        @bindings.add("c-d")
        def _(event: KeyPressEvent) -> None:
            if not event.current_buffer.text:
                self.quit = True
                event.app.exit(result="")

        @bindings.add("s-tab", filter=~asking)
        def _(event: KeyPressEvent) -> None:
            self.spawn(self.next_preset())

        @bindings.add("escape", "enter")
        def _(event: KeyPressEvent) -> None:
            self.follow_up_next = True
            event.current_buffer.validate_and_handle()

        for key in KEYS:

            @bindings.add(key, filter=Condition(lambda key=key: self.offered(key) is not None), eager=True)
            def _(event: KeyPressEvent, key: str = key) -> None:
                outcome = self.offered(key)
                if outcome is not None:
                    self.answer(outcome)

        @bindings.add("escape", filter=asking, eager=True)
        def _(event: KeyPressEvent) -> None:
            self.answer("reject")

        return bindings

    async def loop(self) -> None:
        commands, mentions = SlashCompleter(self), MentionCompleter(self.folder)
        reverts = RevertCompleter(self.changed_paths)
        self.event_loop = asyncio.get_running_loop()

        def completing() -> bool:
            """Rows for the menu are kept under the input only while something is being completed."""
            document = self.prompt.default_buffer.document if self.prompt is not None else Document()
            return commands.wants(document) or mentions.wants(document) or reverts.wants(document)

        self.prompt = PromptSession(
            message=self.message,
            prompt_continuation="  ",
            bottom_toolbar=self.toolbar,
            completer=merge_completers([commands, ThreadedCompleter(mentions), ThreadedCompleter(reverts)]),
            complete_while_typing=Condition(completing),
            key_bindings=merge_key_bindings([newline_keys(), self.key_bindings()]),
            refresh_interval=0.1,
            erase_when_done=True,
        )
        buffer = self.prompt.default_buffer
        for window in self.prompt.app.layout.find_all_windows():
            if isinstance(window.content, BufferControl) and window.content.buffer is buffer:
                # the input takes the rows its text needs: the status line stays right under it
                window.dont_extend_height = to_filter(True)
        while not self.quit:
            default, self.next_text = self.next_text, ""
            text = await self.prompt.prompt_async(default=default)
            mentions.forget()
            self.changed = None
            follow_up, self.follow_up_next = self.follow_up_next, False
            if not self.quit:
                await self.submit(text, follow_up)


async def chat(args: Any) -> int:
    """``agentls chat``: returns the exit code."""
    model, problem = check_options(args, "chat")
    if problem:
        print(problem, file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("agentls chat: needs a terminal; use agentls run for scripts and pipes", file=sys.stderr)
        return 2
    with typed_ahead_kept():  # from before the server starts: what the user types meanwhile waits
        return await chat_on_terminal(args, model)


@contextlib.asynccontextmanager
async def per_user_client(args: Any, ask: Any) -> AsyncIterator[AgentClient]:
    """A client of the per-user server, through the bridge (which starts the server when none runs):
    leaving it leaves the sessions live there."""
    command = per_user_server_command(args.socket)
    client = AgentClient(command, initialization_options=client_options(args), on_permission=ask)
    await client.start()
    try:
        yield client
    finally:
        await client.close()


async def chat_on_terminal(args: Any, model: Any) -> int:
    color_system = Console().color_system
    holder: dict[str, Chat] = {}

    async def ask(request: Any) -> str:
        return await holder["chat"].ask(request)

    attaching = args.attach is not None
    connected = (
        per_user_client(args, ask)
        if attaching
        else in_process_client(initialization_options=client_options(args), on_permission=ask, warm_up=True)
    )
    try:
        async with (
            connected as client,
            client.subscribe() as notes,  # from before the session starts: its MCP servers' first status
        ):
            with patch_stdout(raw=True):
                width = shutil.get_terminal_size().columns
                console = Console(
                    file=sys.stdout,
                    force_terminal=True,
                    color_system=color_system,
                    width=width,
                    highlight=False,
                )
                session = Chat(client, console, cwd=args.cwd, model=model, data_dir=server_data_dir(args))
                holder["chat"] = session
                if attaching:
                    await session.join_session(args.attach)
                else:
                    await session.open_session(args.session)
                follower = asyncio.ensure_future(session.follow(notes))
                try:
                    await session.loop()
                finally:
                    follower.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await follower
                    if session.busy and not attaching:  # a live session's run goes on without us
                        with contextlib.suppress(AgentClientError):
                            await client.abort(session.session_id)
            live = " (live in the per-user server)" if attaching else ""
            print(f"session {session.session_id}{live}", file=sys.stderr)
    except AgentClientError as error:
        print(visible(f"agentls chat: {error}"), file=sys.stderr)
        return 2
    except EOFError:
        return 0
    return 0
