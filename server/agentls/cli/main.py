"""``agentls``'s parser, and the start of the command it names.

Each command's module is imported when that command runs (:func:`main`): ``agentls serve``
answers ``initialize`` before the server is imported, and ``--help`` loads no command. ``run``,
``chat``, ``models`` and ``sessions`` run the server in their own process
(:mod:`agentls.cli.in_process`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from agentls import __version__
from agentls.cli import compile_cache
from agentls.thinking_levels import THINKING_LEVELS

MAX_MESSAGE_BYTES_ENV = "AGENTLS_MAX_MESSAGE_BYTES"


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}")
    return int(text)


def _number(text: str, *, zero: bool, what: str) -> float:
    """A finite number of the command line (``zero``: 0 allowed; negative never)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 if zero else value > 0) or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected {what}, not {text!r}")
    return value


def _seconds(text: str) -> float:
    return _number(text, zero=True, what="a number of seconds (0 or more)")


def _positive_float(text: str) -> float:
    return _number(text, zero=False, what="a positive number")


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
        command.add_argument(
            "--listen",
            metavar="unix:PATH",
            help="be the per-user server: serve every client on this Unix socket ('unix': the default path)",
        )
        command.add_argument(
            "--attach",
            action="store_true",
            help="be the stdio bridge to the per-user server (started when none answers)",
        )
        command.add_argument(
            "--idle-exit",
            type=_seconds,
            metavar="SECONDS",
            help="the per-user server stops after this long with no client and nothing running "
            "(default 600; 0: never)",
        )
        command.add_argument(
            "--question-timeout",
            type=_seconds,
            metavar="SECONDS",
            help="how long a question waits for a client when none is attached (default 300)",
        )
        command.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)

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

    def safety_options(command: argparse.ArgumentParser) -> None:
        """The sandbox of the agent's bash and the budget of each run (see protocol.md)."""
        command.add_argument(
            "--sandbox",
            choices=("off", "workspace-write", "read-only"),
            help="confine the agent's bash: workspace-write (writes only in the folder, its .git read-only), "
            "read-only, or off (the default)",
        )
        command.add_argument(
            "--sandbox-network", action="store_true", help="let sandboxed commands use the network (TCP)"
        )
        command.add_argument(
            "--max-cost", type=_positive_float, metavar="DOLLARS", help="stop a run before it spends more"
        )
        command.add_argument(
            "--max-turns", type=_positive_int, metavar="N", help="stop a run after N turns (responses)"
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
    run.add_argument("--session", metavar="ID", help="continue a stored session (its id or its start)")
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
    safety_options(run)
    server_options(run)

    chat = commands.add_parser("chat", help="an interactive session on the terminal")
    chat.add_argument("--cwd", help="the workspace folder of a new session (default: the current folder)")
    chat.add_argument("--model", metavar="PROVIDER/ID", help="the model, e.g. faux/faux-1")
    chat.add_argument("--session", metavar="ID", help="continue a stored session (its id or its start)")
    chat.add_argument(
        "--attach",
        nargs="?",
        const="",
        metavar="SESSION",
        help="join a live session of the per-user server, an editor's (its id or its start; "
        "alone: the folder's most recent live one)",
    )
    chat.add_argument(
        "--socket",
        metavar="PATH",
        help="the per-user server's socket for --attach (default: $AGENTLS_SOCKET, "
        "else $XDG_RUNTIME_DIR/agentls/serve.sock)",
    )
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
    safety_options(chat)
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


@contextlib.contextmanager
def _kept_for_good() -> Iterator[None]:
    """Imports of the server and the client with Python's cycle collector off, their objects then
    frozen (out of its reach): they live as long as the process, and collecting them again and
    again while they were made was a tenth of ``agentls run -p``'s CPU (and of ``agentls serve``'s
    start). What they compile from text comes from :mod:`~agentls.cli.compile_cache` (installed
    here: ``--help`` and the bridge of ``serve --attach`` import none of it)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        compile_cache.install()  # with the collector off: its code objects made 15-20 collections
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
        compile_cache.save()


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``agentls serve``: on stdio (the default), as the per-user server (``--listen``) or as the
    bridge to it (``--attach``)."""
    if args.attach:
        from agentls.bridge import attach

        passed = []  # what the server the bridge may start is told
        if args.idle_exit is not None:
            passed += ["--idle-exit", str(args.idle_exit)]
        if args.question_timeout is not None:
            passed += ["--question-timeout", str(args.question_timeout)]
        if args.max_message_bytes is not None:
            passed += ["--max-message-bytes", str(args.max_message_bytes)]
        return attach(args.listen, passed)
    if args.listen is not None:
        with _kept_for_good():
            limit = _message_limit(parser, args)
            from agentls.fronts.lsp.listen import DEFAULT_IDLE_EXIT, serve_listen
            from agentls.fronts.lsp.questions import DEFAULT_QUESTION_SECONDS

        return serve_listen(
            args.listen,
            idle_exit=DEFAULT_IDLE_EXIT if args.idle_exit is None else args.idle_exit,
            question_timeout=DEFAULT_QUESTION_SECONDS
            if args.question_timeout is None
            else args.question_timeout,
            limit=limit,
            ready_fd=args.ready_fd,
        )
    # boot's imports (the protocol's models, asyncio) with the collector off too: 50-70 collections
    # before the early initialize answer otherwise
    with _kept_for_good():
        limit = _message_limit(parser, args)
        from agentls.fronts.lsp.boot import boot

        started = boot(sys.stdin.fileno(), limit)  # answers initialize before the server is imported
        from agentls.fronts.lsp import serve
    return serve(limit, started)


def _message_limit(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The largest message body ``serve`` reads: ``--max-message-bytes``, the environment's, or 64 MiB."""
    from agentls.fronts.lsp.framing import DEFAULT_MAX_MESSAGE_BYTES

    given = args.max_message_bytes or _env_positive_int(parser, MAX_MESSAGE_BYTES_ENV)
    return given or DEFAULT_MAX_MESSAGE_BYTES


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # --cwd as the server stores folders (absolute, links resolved)
    args.folder = os.path.realpath(args.cwd) if getattr(args, "cwd", None) else None
    if args.command in (None, "serve"):
        return _serve(parser, args)
    if args.command == "acp":
        with _kept_for_good():
            from agentls.fronts.acp.main import options_from, serve_acp

        try:
            options = options_from(args.data_dir, args.faux_script, args.model, args.mcp_config)
        except ValueError as error:
            parser.error(str(error))
        return serve_acp(options)
    import asyncio  # not with this module: `serve` imports it with the collector off (_serve)

    if args.command == "demo":
        from agentls.cli.demo import DEMO_PROMPT, demo

        args.prompt = args.prompt or DEMO_PROMPT
        if args.tokens_per_second is None and not args.script:
            args.tokens_per_second = 150.0
        if args.tokens_per_second is not None and args.tokens_per_second < 0:
            parser.error("--tokens-per-second must be 0 or more")
        return asyncio.run(demo(args))
    if args.command == "run":
        with _kept_for_good():
            from agentls.cli.run import run

        try:
            return asyncio.run(run(args))
        except KeyboardInterrupt:
            print("agentls run: interrupted; the server aborted the run", file=sys.stderr)
            return 130
    if args.command == "chat":
        with _kept_for_good():
            from agentls.cli.chat import chat

        return asyncio.run(chat(args))
    with _kept_for_good():
        from agentls.cli.listings import show_models, show_sessions

    return asyncio.run(show_models(args) if args.command == "models" else show_sessions(args))


_PYDANTIC_PLUGIN_LOADER = "pydantic.plugin._loader"


def _without_pydantic_plugins() -> None:
    """Make this process's pydantic models without looking for pydantic plugins.

    pydantic looks for plugins (``pydantic`` entry points of every installed distribution) when
    it builds its first validator: ``importlib.metadata`` (with ``email``, ``zipfile``, ``csv``)
    and a scan of ``site-packages``, 25-45 ms of every start. agentls's models are its own
    messages; a plugin has nothing to observe in them. The loader module is stood in for by one
    whose ``get_plugins`` finds none (what ``PYDANTIC_DISABLE_PLUGINS`` gives, without putting
    that variable in the environment of every command the tools run); any other name pydantic
    asks of it loads the real module.
    """
    if _PYDANTIC_PLUGIN_LOADER in sys.modules:
        return
    loader = types.ModuleType(_PYDANTIC_PLUGIN_LOADER)

    def real(name: str) -> Any:
        if name.startswith("__"):  # the import system's questions (``__path__``): a plain module's answers
            raise AttributeError(name)
        del sys.modules[_PYDANTIC_PLUGIN_LOADER]
        return getattr(importlib.import_module(_PYDANTIC_PLUGIN_LOADER), name)

    loader.get_plugins = tuple  # type: ignore[attr-defined]
    loader.__getattr__ = real  # type: ignore[method-assign]
    sys.modules[_PYDANTIC_PLUGIN_LOADER] = loader


def console_main(argv: Any = None) -> None:
    # httpx's __init__ imports its own command-line client (httpx._main: click, pygments and
    # rich's console, 0.1-0.3 s) when those are installed; agentls never runs it. Without the
    # module httpx takes the fallback it has for a missing [cli] extra.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    _without_pydantic_plugins()
    try:
        code = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:  # `agentls run --json ... | head`: the reader left; so do we, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141
    if "agentls.cli.in_process" in sys.modules:
        # the server ran in this process (run, chat, models, sessions): end as `agentls serve` does,
        # without the interpreter's teardown of the server's modules (0.1-0.3 s)
        from agentls.fronts.lsp.app import end_process

        end_process(code)
    sys.exit(code)


if __name__ == "__main__":
    console_main()
