"""The ``agentls`` command line: ``serve`` (the default), ``run``, ``chat``, ``sessions`` and ``demo``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls import __version__

if TYPE_CHECKING:  # the renderer (rich, markdown) is imported by the commands that print, not by `serve`
    from agentls.printer import Transcript


def _write_json(data: Any) -> None:
    from agentls.terminal_text import json_line

    sys.stdout.write(json_line(json.dumps(data, ensure_ascii=False)) + "\n")
    sys.stdout.flush()


# --- demo ------------------------------------------------------------------------------------


async def _demo(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agentls.ai.providers.faux import FauxScript, FauxScriptError
    from agentls.demo import demo_agent
    from agentls.printer import EventPrinter
    from agentls.protocol import event_to_wire

    try:
        script = FauxScript.from_file(args.script) if args.script else None
    except FauxScriptError as error:
        print(f"agentls demo: {error}", file=sys.stderr)
        return 2
    agent = demo_agent(script, tokens_per_second=args.tokens_per_second)
    if args.json:
        from agentls.ai import to_wire

        agent.subscribe(lambda event, signal: _write_json(to_wire(event)))
    else:
        console = Console(highlight=False)
        console.rule(f"agentls {__version__} · offline demo of the agent loop (faux provider)")
        printer = EventPrinter(console)
        agent.subscribe(lambda event, signal: printer(event_to_wire(event)))
    await agent.prompt(args.prompt)
    if agent.state.error_message:
        print(f"agentls demo: the run ended with an error: {agent.state.error_message}", file=sys.stderr)
        return 1
    return 0


# --- run and sessions (through the server, as an editor would) -------------------------------


DEMO_SCRIPT = Path(__file__).parent / "data" / "demo-script.json"


def _client_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if getattr(args, "demo", False) and not args.faux_script:
        args.faux_script = str(DEMO_SCRIPT)
    if args.faux_script:
        options["fauxScript"] = str(Path(args.faux_script).resolve())
    if args.data_dir:
        options["dataDir"] = str(Path(args.data_dir).resolve())
    if getattr(args, "allow", None):
        options["permissions"] = {tool: "allow" for tool in args.allow}
    if getattr(args, "mcp_servers", None) is not None:
        options["mcpServers"] = args.mcp_servers
    if getattr(args, "approve", None) is not None:
        options["projectTrust"] = "always" if args.approve else "never"
    return options


def _load_mcp_config(path: str, command: str) -> dict[str, Any] | str:
    """``--mcp-config FILE``: its ``mcpServers`` (a relative ``cwd`` made absolute, from the file's
    folder, as for the configuration files), or an error message."""
    where = f"agentls {command}: --mcp-config {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return f"{where}: cannot read it ({error.strerror if isinstance(error, OSError) else error})"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return f"{where}: not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return f'{where}: expected {{"mcpServers": {{NAME: {{"command": ...}} or {{"url": ...}}}}}}'
    folder = Path(path).resolve().parent
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            return f"{where}: mcpServers.{name} must be an object, not {type(entry).__name__}"
        if isinstance(entry.get("cwd"), str) and not Path(entry["cwd"]).is_absolute():
            servers[name] = {**entry, "cwd": str(folder / entry["cwd"])}
    return servers


ANSWERS = {"once": "o", "always": "a", "y": "o", "yes": "o", "trust": "t", "server": "s"}
"""Words typed for the keys of :func:`agentls.printer.permission_choices`."""


def _chosen(request: Any, typed: str) -> str:
    """The outcome of what was typed at a question: one of its choices' keys (or word), else a rejection."""
    from agentls.printer import permission_choices

    typed = typed.strip().lower()
    key = ANSWERS.get(typed, typed[:1])
    choices = permission_choices(request.tool_name, request.options)
    if request.tool_name == "mcp" and key in ("a", "y", "o"):
        key = "t"
    return next((choice.outcome for choice in choices if choice.key == key), "reject")


def _asker(transcript: Transcript | None) -> Any:
    """A permission question on the terminal, one at a time: ``o``nce, ``a``lways, ``s`` every
    tool of an MCP server, ``t``rust (MCP servers); anything else rejects."""
    from rich.console import Console
    from rich.text import Text

    from agentls.printer import permission_choices
    from agentls.terminal_text import visible, visible_text

    turn = asyncio.Lock()
    console = Console(stderr=True, highlight=False)

    async def ask(request: Any) -> str:
        async with turn:
            if transcript is not None:
                transcript.pause()  # the live part of the screen would draw over the question
            choices = permission_choices(request.tool_name, request.options)
            words = [choice.words for choice in choices]
            if [choice.outcome for choice in choices] == ["allowOnce", "allowAlways", "reject"]:
                words[1] += " (in this folder)"
            elif request.tool_name == "mcp":
                words = [f"{words[0]} (in this folder)", *words[1:]]
            verb = "" if request.tool_name == "mcp" else "allow "
            question = (
                f"{verb}{', '.join(words[:-1])}, or {words[-1]}? " if len(words) > 1 else f"{words[0]}? "
            )
            # the whole title, newlines written out: no first line can stand for the command
            console.print(Text("\nagentls: ") + visible_text(request.title, newlines=False), soft_wrap=True)
            print(visible(question), end="", file=sys.stderr, flush=True)
            line = await asyncio.to_thread(sys.stdin.readline)
            return _chosen(request, line)

    return ask


def _refuser() -> Any:
    """Without a terminal nobody can answer: each tool that asks is rejected, and the user told how."""
    from agentls.terminal_text import visible

    told: set[str] = set()

    async def refuse(request: Any) -> str:
        if request.tool_name not in told:
            told.add(request.tool_name)
            print(visible(_refusal(request)), file=sys.stderr)
        return "reject"

    return refuse


def _refusal(request: Any) -> str:
    name = request.tool_name
    if name == "mcp":
        return _trust_refusal(request.args if isinstance(request.args, dict) else {})
    if name.startswith("mcp__") and name.count("__") >= 2:
        server = name.split("__", 2)[1]
        return (
            f"agentls: {name} needs permission and there is no terminal to ask on: rejected "
            f"(pass --allow {name} to run it, or --allow 'mcp__{server}__*' for every tool of {server})"
        )
    return (
        f"agentls: {name} needs permission and there is no terminal to ask on: "
        f"rejected (pass --allow {name} to run it)"
    )


def _trust_refusal(args: dict[str, Any]) -> str:
    """What a trust question that no terminal can answer left out: the project's files, its MCP servers."""
    parts = []
    if args.get("projectFiles"):
        parts.append(
            f"the project files of {args.get('folder') or 'the folder'} (AGENTS.md, skills, prompt "
            "templates) are left out (pass --approve to load them for this run)"
        )
    if args.get("servers") or not parts:
        files = ", ".join(args.get("files") or []) or "the project"
        parts.append(f"the MCP servers of {files} are not started (or pass your own with --mcp-config FILE)")
    return (
        "agentls: the folder needs your trust and there is no terminal to ask on: "
        + "; ".join(parts)
        + ". Trust it once with agentls run or chat on a terminal."
    )


TOOL_NAMES = ("read", "write", "edit", "ls", "find", "grep", "bash", "diagnostics")
"""What ``--allow`` takes, besides MCP tools (``mcp__SERVER__TOOL``, ``mcp__SERVER__*``)."""

MCP_ALLOW = re.compile(r"mcp__[A-Za-z0-9_-]+?__(\*|[A-Za-z0-9_-]+)")


def _check_allowed(args: argparse.Namespace, command: str) -> str | None:
    """An error message when ``--allow`` names a tool that does not exist."""
    unknown = [
        tool
        for tool in getattr(args, "allow", None) or []
        if tool not in TOOL_NAMES and not MCP_ALLOW.fullmatch(tool)
    ]
    if unknown:
        tools = ", ".join(TOOL_NAMES)
        return (
            f"agentls {command}: --allow {unknown[0]}: no such tool (the tools: {tools}; "
            "an MCP server's: mcp__SERVER__TOOL, or mcp__SERVER__* for all of them)"
        )
    return None


def _check_mcp_config(args: argparse.Namespace, command: str) -> str | None:
    """``--mcp-config``: loads it into ``args.mcp_servers``; an error message when it cannot."""
    args.mcp_servers = None
    if getattr(args, "mcp_config", None):
        loaded = _load_mcp_config(args.mcp_config, command)
        if isinstance(loaded, str):
            return loaded
        args.mcp_servers = loaded
    return None


def _check_options(args: argparse.Namespace, command: str) -> tuple[tuple[str, str] | None, str | None]:
    """``run``'s and ``chat``'s options: the model of ``--model``, and an error message for the first
    bad one of ``--model``, ``--allow`` and ``--mcp-config`` (which it loads into ``args.mcp_servers``)."""
    model = _parse_model(args.model, command)
    if isinstance(model, str):
        return None, model
    return model, _check_allowed(args, command) or _check_mcp_config(args, command)


def _data_dir(args: argparse.Namespace) -> Path | None:
    """The server's data folder: ``--data-dir``, else its default (``$AGENTLS_DATA_DIR``, ...)."""
    if args.data_dir:
        return Path(args.data_dir).resolve()
    from agentls.session.store import default_data_dir

    try:
        return default_data_dir()
    except Exception:  # the platform's folder cannot be told: no log path then
        return None


class McpReport:
    """The MCP servers of a run or chat: a line for each server that fails or waits for trust
    (``agent/mcpStatus``), the configuration's problems once, and the servers still starting."""

    def __init__(self, show: Any, data_dir: Path | None = None, *, show_ready: Any = None) -> None:
        self.show = show
        """``show(text)``: one line to the user."""
        self.show_ready = show_ready
        """``show_ready(text)``, if given: a line when a server becomes ready (``agentls chat``)."""
        self.data_dir = data_dir
        """The server's data folder, where a failed server's log is."""
        self.status: dict[tuple[str, str], str] = {}
        self._shown: dict[tuple[str, str], str] = {}
        self._changed = asyncio.Event()

    def __call__(self, server: dict[str, Any]) -> None:
        """One server's status (an ``agent/mcpStatus``, or an entry of ``agent/listMcpServers``)."""
        from agentls.printer import mcp_status_line

        key = (str(server.get("name")), str(server.get("cwd")))
        self.status[key] = str(server.get("status"))
        self._changed.set()
        line = mcp_status_line(server)
        if line is not None and server.get("status") == "failed" and self.data_dir is not None:
            line += f" · log: {self.data_dir / 'mcp-logs' / (str(server.get('name')) + '.log')}"
        if line is None and server.get("status") == "ready" and self.show_ready is not None:
            if self._shown.get(key) != "ready":
                self._shown[key] = "ready"
                tools = len(server.get("tools") or [])
                self.show_ready(
                    f"✓ MCP server {server.get('name')} is ready: {tools} tool{'s' * (tools != 1)}"
                )
        elif line is None:
            self._shown.pop(key, None)
        elif self._shown.get(key) != line:
            self._shown[key] = line
            self.show(line)

    async def follow(self, notes: Any) -> None:
        async for note in notes:
            if note.method == "agent/mcpStatus":
                self(note.params)

    async def session(self, client: Any, session_id: str) -> list[tuple[str, str]]:
        """A new session's servers and problems (shown); returns its servers' keys."""
        from agentls.printer import mcp_problem_line

        listing = await client.list_mcp_servers(session_id)
        for problem in listing.problems:
            self.show(mcp_problem_line(problem))
        keys = []
        for server in listing.servers:
            info = server.model_dump(mode="json", by_alias=True, exclude_none=True)
            key = (server.name, server.cwd)
            keys.append(key)
            if key not in self.status:  # a notification since may be newer
                self(info)
        return keys

    async def started(self, keys: list[tuple[str, str]], within: float) -> None:
        """Until none of the servers ``keys`` is starting (at most ``within`` seconds)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                while any(self.status.get(key) == "starting" for key in keys):
                    self._changed.clear()
                    await self._changed.wait()


def _interactive(args: argparse.Namespace) -> bool:
    """Whether ``run`` can ask its user: a terminal on stdin and stderr, and no JSON output."""
    return not args.json and sys.stdin.isatty() and sys.stderr.isatty()


def _piped_input() -> str:
    """What is piped or redirected into stdin (``git diff | agentls run -p "review this"``), else ``""``.

    Only a pipe or a file is read: a terminal or ``/dev/null`` has nothing to add.
    """
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return ""
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return ""
    return sys.stdin.read()


MCP_WARNING = re.compile(r"(agentls: )?(MCP server \S+ failed: |MCP configuration: )")
"""The server's warnings that :class:`McpReport`'s lines say already."""


class _VisibleFormatter(logging.Formatter):
    """A log line with its control characters written out: the server's warnings quote untrusted text."""

    def format(self, record: logging.LogRecord) -> str:
        from agentls.terminal_text import visible

        return visible(super().format(record))


def _show_server_warnings(log: logging.Logger) -> None:
    """The server's warnings (a provider retrying, a damaged session file) go to stderr as they come."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_VisibleFormatter("%(message)s"))
    handler.addFilter(lambda record: not MCP_WARNING.match(record.getMessage()))
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    log.propagate = False


def _parse_model(text: str | None, command: str) -> tuple[str, str] | str | None:
    """``(provider, id)``, ``None`` when not given, or an error message."""
    if not text:
        return None
    provider, _, model_id = text.partition("/")
    if not provider or not model_id:
        return f"agentls {command}: --model takes PROVIDER/ID, e.g. faux/faux-1"
    return (provider, model_id)


async def _run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from agentls.client import SERVER_LOG, AgentClient, AgentClientError
    from agentls.printer import Transcript, final_text
    from agentls.terminal_text import visible, visible_text

    _show_server_warnings(SERVER_LOG)
    model, problem = _check_options(args, "run")
    if problem:
        print(problem, file=sys.stderr)
        return 2
    prompt = " ".join(args.prompt or [])
    piped = _piped_input()
    if piped.strip():
        prompt = f"{prompt}\n\n{piped}" if prompt else piped
    if not prompt.strip():
        print("agentls run: give a prompt (or pipe text into it)", file=sys.stderr)
        return 2
    started = time.monotonic()
    errors = Console(stderr=True, highlight=False)
    transcript = None if args.json or args.print else Transcript(Console(highlight=False), show_errors=False)
    messages: list[dict[str, Any]] = []

    def show(line: str) -> None:  # an MCP server's trouble: in the transcript on a terminal, else on stderr
        if transcript is not None and transcript.rich:
            transcript.line(visible_text(line, "yellow"), kind="mcp")
        else:
            print(visible(line), file=sys.stderr, flush=True)

    mcp = McpReport(show, _data_dir(args))
    try:
        ask = _asker(transcript) if _interactive(args) and not piped else _refuser()
        async with (
            AgentClient(initialization_options=_client_options(args), on_permission=ask) as client,
            client.subscribe() as every_note,
            _following(mcp.follow(every_note)),
        ):
            session_id = await _chosen_session(client, args)
            if session_id is not None:
                await client.load_session(session_id)
                if model:
                    await client.set_model(session_id, *model)
            else:
                session_id = await client.new_session(
                    cwd=args.cwd, model=model, thinking_level=args.thinking, system_prompt=args.system_prompt
                )
            # one prompt, so the tools of servers still starting would never join: wait for them (a while)
            await mcp.started(await mcp.session(client, session_id), MCP_START_WAIT)
            async with client.subscribe(session_id) as notes:
                accepted = await client.prompt(session_id, prompt)
                run_id = getattr(accepted, "run_id", None)
                async for note in notes:
                    if args.json:
                        _write_json({"method": note.method, "params": note.params})
                    elif note.method == "agent/event":
                        event = note.params["event"]
                        if event.get("type") == "agent_end":
                            messages.extend(event.get("messages") or [])
                        if transcript is not None:
                            transcript(event)
                    elif note.method == "agent/compaction" and transcript is not None:
                        transcript.compaction(note.params)
                    if note.method == "agent/settled" and note.params.get("runId") == run_id:
                        break
            settled = await client.wait_settled(run_id) if run_id else None
    except AgentClientError as error:
        print(visible(f"agentls run: {error}{_cli_hint(error)}"), file=sys.stderr)
        return 2
    finally:
        if transcript is not None:
            transcript.close()
    if settled is None:
        return 1
    failed = settled.stop_reason in ("error", "aborted")
    if args.print and not failed:
        answer = final_text(messages)
        if sys.stdout.isatty():  # written out for the eyes; a pipe gets the answer as it is
            answer = visible(answer)
        sys.stdout.write(answer if answer.endswith("\n") else answer + "\n")
    elif transcript is not None:
        footer = transcript.usage.line(time.monotonic() - started)
        stop = "" if settled.stop_reason == "stop" else f" · [red]{settled.stop_reason}[/red]"
        errors.print(f"\n[dim]{footer}{stop} · session {session_id}[/dim]", soft_wrap=True)
        errors.print(f'[dim]go on with: agentls run --continue "..."  (or --session {session_id[:8]})[/dim]')
    if failed:
        if settled.error_message:
            errors.print(visible_text(f"agentls run: {settled.error_message}", "red"))
        return 1
    return 0


MCP_START_WAIT = 30.0
"""Seconds ``agentls run`` waits for its session's MCP servers to start before sending the prompt."""


@contextlib.asynccontextmanager
async def _following(work: Any) -> Any:
    """Run ``work`` (reading notifications) beside the body; cancelled at its end."""
    task = asyncio.ensure_future(work)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def _chosen_session(client: Any, args: argparse.Namespace) -> str | None:
    """The stored session ``--session`` (an id or a unique prefix) or ``--continue`` names, else ``None``."""
    from agentls.client import AgentClientError

    if not args.session and not args.continue_:
        return None
    cwd = args.folder or os.getcwd()
    if args.continue_:
        sessions = await client.list_sessions(cwd)
        if not sessions:
            raise AgentClientError(f"no stored session in {cwd} to continue", kind="unknownSession")
        return str(sessions[0].session_id)
    matches = [
        info.session_id for info in await client.list_sessions() if info.session_id.startswith(args.session)
    ]
    if len(matches) == 1:
        return str(matches[0])
    if not matches:
        raise AgentClientError(
            f"no stored session {args.session} (agentls sessions lists them)", kind="unknownSession"
        )
    shown = ", ".join(match[:12] for match in matches[:4])
    raise AgentClientError(
        f"{args.session} is the start of {len(matches)} sessions ({shown}…): give more of the id",
        kind="unknownSession",
    )


def _cli_hint(error: Any) -> str:
    """What the command line's own options can do about an error (its text names the server's)."""
    if getattr(error, "kind", None) == "noModel":
        return (
            "\nFrom the command line: --demo, --faux-script FILE, or --model PROVIDER/ID once a provider "
            "is set up."
        )
    return ""


async def _models(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from agentls.client import AgentClient, AgentClientError
    from agentls.terminal_text import visible, visible_text

    try:
        async with AgentClient(initialization_options=_client_options(args)) as client:
            models = await client.list_models()
    except AgentClientError as error:
        print(visible(f"agentls models: {error}{_cli_hint(error)}"), file=sys.stderr)
        return 2
    if args.json:
        for model in models:
            _write_json(model)
        return 0
    if not models:
        print(
            "No models: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or define providers in models.json (README)."
        )
        return 0
    table = Table("model", "name", "context", "max output", "input", box=None, pad_edge=False)
    for model in models:
        table.add_row(
            visible_text(f"{model['provider']}/{model['id']}", newlines=False),
            visible_text(str(model.get("name") or ""), newlines=False),
            f"{model.get('contextWindow', 0):,}",
            f"{model.get('maxTokens', 0):,}",
            ", ".join(model.get("input") or []),
        )
    Console().print(table)
    return 0


async def _sessions(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from agentls.client import AgentClient, AgentClientError
    from agentls.terminal_text import visible, visible_text

    try:
        async with AgentClient(initialization_options=_client_options(args)) as client:
            sessions = await client.list_sessions(args.cwd)
    except AgentClientError as error:
        print(visible(f"agentls sessions: {error}"), file=sys.stderr)
        return 2
    if args.json:
        for info in sessions:
            _write_json(info.model_dump(mode="json", by_alias=True, exclude_none=True))
        return 0
    if not sessions:
        where = f" in {args.folder}" if args.folder else ""
        print(f"No stored sessions{where}.")
        return 0
    table = Table("session", "updated", "msgs", "model", "cwd", "title", box=None, pad_edge=False)
    table.columns[0].no_wrap = True
    table.columns[1].no_wrap = True
    for info in sessions:
        model = f"{info.model.provider}/{info.model.id}" if info.model else ""
        updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated_at / 1000))
        shown = [visible_text(text, newlines=False) for text in (model, info.cwd, info.title or "")]
        table.add_row(info.session_id, updated, str(info.message_count), *shown)
    Console().print(table)
    return 0


# --- parser ----------------------------------------------------------------------------------

MAX_MESSAGE_BYTES_ENV = "AGENTLS_MAX_MESSAGE_BYTES"
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}")
    return int(text)


def _env_positive_int(parser: argparse.ArgumentParser, name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError as error:
        parser.error(f"${name}: {error}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentls", description="A coding agent for editors and scripts.")
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    stdio_help = "accepted for LSP launchers that add it (stdio is the only transport)"
    size_help = "refuse messages with a larger body (default: $AGENTLS_MAX_MESSAGE_BYTES, or 64 MiB)"
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the JSON-RPC server on stdio (the default command)")
    for command in (parser, serve):
        command.add_argument("--stdio", action="store_true", help=stdio_help)
        command.add_argument("--max-message-bytes", type=_positive_int, metavar="N", help=size_help)

    def server_options(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--faux-script", metavar="FILE", help="use the offline faux model with this script"
        )
        command.add_argument("--data-dir", metavar="DIR", help="where sessions are stored")
        command.add_argument("--json", action="store_true", help="print JSON lines instead of text")

    def mcp_option(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--mcp-config",
            metavar="FILE",
            help='MCP servers to use, a file like .mcp.json: {"mcpServers": {NAME: {"command": ...}}}',
        )

    def trust_options(command: argparse.ArgumentParser) -> None:
        """Pi's ``--approve`` / ``--no-approve``: the folder's project files trusted, or not, for this run."""
        trust = command.add_mutually_exclusive_group()
        trust.add_argument(
            "-a",
            "--approve",
            dest="approve",
            action="store_const",
            const=True,
            help="load the folder's AGENTS.md, skills and prompt templates without asking (this run only)",
        )
        trust.add_argument(
            "--no-approve",
            dest="approve",
            action="store_const",
            const=False,
            help="leave the folder's AGENTS.md, skills and prompt templates out, unasked (this run only)",
        )

    acp = commands.add_parser(
        "acp", help="run the agent for Agent Client Protocol clients (Zed, JetBrains, ...) on stdio"
    )
    acp.add_argument("--faux-script", metavar="FILE", help="use the offline faux model with this script")
    acp.add_argument("--data-dir", metavar="DIR", help="where sessions are stored")
    acp.add_argument("--model", metavar="PROVIDER/ID", help="the model of new sessions")
    mcp_option(acp)

    run = commands.add_parser("run", help="run one prompt through the server and show it as it streams")
    run.add_argument(
        "prompt", nargs="*", help="the prompt (quoted or as words); text piped into stdin is added to it"
    )
    run.add_argument(
        "-p", "--print", action="store_true", help="print only the final answer (for scripts and pipes)"
    )
    run.add_argument("--cwd", help="the workspace folder of a new session (default: the current folder)")
    run.add_argument("--model", metavar="PROVIDER/ID", help="the model, e.g. faux/faux-1")
    run.add_argument("--session", metavar="ID", help="continue a stored session (its id, or the start of it)")
    run.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="continue the folder's latest session"
    )
    run.add_argument("--thinking", choices=THINKING_LEVELS, help="the thinking level of a new session")
    run.add_argument("--system-prompt", metavar="TEXT", help="replace agentls's base system prompt")
    run.add_argument(
        "--demo",
        action="store_true",
        help="answer with the bundled faux script, which reads README.md of --cwd",
    )
    run.add_argument(
        "--allow",
        action="append",
        metavar="TOOL",
        help="run TOOL without asking (repeatable), e.g. --allow bash or --allow 'mcp__SERVER__*' "
        "(every tool of an MCP server); on a terminal the others ask",
    )
    mcp_option(run)
    trust_options(run)
    server_options(run)

    chat = commands.add_parser("chat", help="an interactive session on the terminal")
    chat.add_argument("--cwd", help="the workspace folder of a new session (default: the current folder)")
    chat.add_argument("--model", metavar="PROVIDER/ID", help="the model, e.g. faux/faux-1")
    chat.add_argument("--session", metavar="ID", help="continue a stored session")
    chat.add_argument(
        "--demo", action="store_true", help="answer with the bundled faux script, which reads README.md"
    )
    chat.add_argument(
        "--allow",
        action="append",
        metavar="TOOL",
        help="run TOOL without asking (repeatable; 'mcp__SERVER__*': every tool of an MCP server)",
    )
    mcp_option(chat)
    trust_options(chat)
    server_options(chat)

    models = commands.add_parser("models", help="list the models of the configured providers")
    server_options(models)

    sessions = commands.add_parser("sessions", help="list stored sessions")
    sessions.add_argument("--cwd", help="only the sessions of this folder")
    server_options(sessions)

    demo = commands.add_parser(
        "demo", help="run the agent loop in-process on the scripted faux model and show its event stream"
    )
    demo.add_argument("--prompt", default=None, help="the user prompt (the model's answers are scripted)")
    demo.add_argument(
        "--script", type=Path, help="a faux script (JSON, the conformance scenario 'model' format)"
    )
    demo.add_argument(
        "--json", action="store_true", help="print every event as one JSON line, in Pi's shapes"
    )
    demo.add_argument(
        "--tokens-per-second",
        type=float,
        default=None,
        metavar="N",
        help="streaming pace of the faux model (default: the script's, or 150; 0 for no delay)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # --cwd as the server stores folders (absolute, links resolved)
    args.folder = os.path.realpath(args.cwd) if getattr(args, "cwd", None) else None
    if args.command in (None, "serve"):
        from agentls.server.boot import boot
        from agentls.server.framing import DEFAULT_MAX_MESSAGE_BYTES

        limit = (
            args.max_message_bytes
            or _env_positive_int(parser, MAX_MESSAGE_BYTES_ENV)
            or DEFAULT_MAX_MESSAGE_BYTES
        )
        started = boot(sys.stdin.fileno(), limit)  # answers initialize before the server is imported
        from agentls.server import serve

        return serve(limit, started)
    if args.command == "acp":
        from agentls.acp.main import options_from, serve_acp

        try:
            options = options_from(args.data_dir, args.faux_script, args.model, args.mcp_config)
        except ValueError as error:
            parser.error(str(error))
        return serve_acp(options)
    if args.command == "demo":
        from agentls.demo import DEMO_PROMPT

        args.prompt = args.prompt or DEMO_PROMPT
        if args.tokens_per_second is None and not args.script:
            args.tokens_per_second = 150.0
        if args.tokens_per_second is not None and args.tokens_per_second < 0:
            parser.error("--tokens-per-second must be 0 or more")
        return asyncio.run(_demo(args))
    if args.command == "run":
        try:
            return asyncio.run(_run(args))
        except KeyboardInterrupt:
            print("agentls run: interrupted; the server aborted the run", file=sys.stderr)
            return 130
    if args.command == "chat":
        from agentls.chat import chat

        return asyncio.run(chat(args))
    if args.command == "models":
        return asyncio.run(_models(args))
    return asyncio.run(_sessions(args))


def console_main(argv: Any = None) -> None:
    try:
        code = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # `agentls run --json ... | head`: the reader left; so do we, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141
    sys.exit(code)


if __name__ == "__main__":
    console_main()
