"""What a tool call is about, for whoever watches it: its ACP kind, its title and a one-line summary.

One table of the built-in tools (:data:`TOOLS`: each one's kind, the verb of its title and the
argument that says what a call is about) and the renderings the fronts show. A rendering
differs from another where the fronts' outputs differed before they shared this module, and
keeps to it, as clients and tests read them:

- :func:`tool_title`, ACP's ``tool_call`` title: ``Read src/main.ts``, ``Run npm test``,
  ``Search TODO``, ``quirky · echo`` (an MCP server's tool), else the tool's name;
- :func:`call_summary`, the terminal's tool line after the name: the path, the command's first
  line, ``'TODO' src`` (grep), else the arguments as JSON;
- :func:`progress_title`, the ``$/progress`` title: ``bash: npm test``, any tool's first
  ``command``, ``path`` or ``pattern`` (so a ``grep`` with a ``path`` shows the path);
- :func:`call_argument`, inside ``agent/getTree``'s ``→ read(src/main.ts)``: any tool's first
  ``path``, ``command``, ``pattern`` or ``query``, else its first text argument.

A model may send any JSON as a call's arguments: each rendering takes what is not an object as
``{}`` and says something for any value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from agentls.tools.mcp_names import server_of

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""ACP's kinds of tool call (``ToolKind``): how a client may show one."""


@dataclass(frozen=True)
class ToolEntry:
    """A built-in tool as the fronts describe its calls."""

    kind: ToolKind
    verb: str | None = None
    """The first word of its title: ``Read`` of ``Read src/main.ts`` (``None``: its name is its title)."""
    subject: str | None = None
    """The argument that says what a call is about (``path``, ``command``, ``pattern``)."""


TOOLS: dict[str, ToolEntry] = {
    "read": ToolEntry("read", "Read", "path"),
    "write": ToolEntry("edit", "Write", "path"),
    "edit": ToolEntry("edit", "Edit", "path"),
    "ls": ToolEntry("search", "List", "path"),
    "find": ToolEntry("search", "Find", "pattern"),
    "grep": ToolEntry("search", "Search", "pattern"),
    "bash": ToolEntry("execute", "Run", "command"),
    "diagnostics": ToolEntry("read"),
}


def one_line(text: str, width: int = 80, *, rstrip: bool = False) -> str:
    """``text`` with its runs of whitespace (newlines too) as one space, cut to ``width`` with ``…``.

    ``rstrip`` drops the space a cut may leave before the ``…``.
    """
    line = " ".join(text.split())
    if len(line) <= width:
        return line
    cut = line[: width - 1]
    return (cut.rstrip() if rstrip else cut) + "…"


def first_line(text: str, width: int = 60) -> str:
    """The first line of ``text`` (stripped), cut at ``width``, with ``…`` when anything is left out.

    Only ``\\n`` ends a line: a ``\\r`` stays in it, for the terminal to write out.
    """
    line = text.strip().split("\n")[0]
    more = "…" if len(line) > width or "\n" in text.strip() else ""
    return line[:width] + more


def _object(args: Any) -> dict[str, Any]:
    return args if isinstance(args, dict) else {}


def tool_kind(name: str) -> ToolKind:
    """``read``, ``edit``, ``search``, ``execute``; ``other`` for any other tool (an MCP server's)."""
    tool = TOOLS.get(name)
    return tool.kind if tool is not None else "other"


def tool_title(name: str, args: Any) -> str:
    """``Read src/main.ts``, ``Run npm test``, ``List .``, ``quirky · echo``, else the tool's name.

    A path is shown as it is (its spaces are part of the name) and only when it is a non-empty
    string, except ``ls``'s, which defaults to ``.``; a command or pattern is put on one line.
    """
    tool = TOOLS.get(name)
    value = _object(args).get(tool.subject) if tool is not None and tool.subject is not None else None
    if tool is not None and tool.subject == "path":
        path = value if isinstance(value, str) else ""
        if path or name == "ls":
            return f"{tool.verb} {path or '.'}"
    elif tool is not None and isinstance(value, str):
        return f"{tool.verb} {one_line(value)}"
    if (server := server_of(name)) is not None:
        return f"{server} · {name.split('__', 2)[2]}"
    return name


def call_summary(name: str, args: Any) -> str:
    """What a tool call is about, in a few words after its name: its path, command or pattern.

    ``README.md``, ``pytest -q``, ``'TODO' src`` (grep's pattern quoted, then its path); another
    tool's arguments as JSON, cut at 60 characters.
    """
    args = _object(args)
    tool = TOOLS.get(name)
    subject = tool.subject if tool is not None else None
    if subject == "path":
        return str(args.get("path") or ".")
    if name == "grep":
        where = f" {args['path']}" if args.get("path") else ""
        return f"{first_line(str(args.get('pattern', '')), 40)!r}{where}"
    if subject is not None:
        return first_line(str(args.get(subject, "")))
    text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 60 else text[:59] + "…"


_PROGRESS_ARGUMENTS = ("command", "path", "pattern")
_TREE_ARGUMENTS = ("path", "command", "pattern", "query")


def _first_text(args: Any, keys: tuple[str, ...]) -> str | None:
    args = _object(args)
    return next((args[key] for key in keys if isinstance(args.get(key), str)), None)


def progress_title(name: str, args: Any) -> str:
    """``bash: npm test``: the tool's name and the first line of its first ``command``, ``path`` or
    ``pattern`` (cut at 80 characters); the name alone when it has none."""
    text = _first_text(args, _PROGRESS_ARGUMENTS) or ""
    summary = text.splitlines()[0] if text else ""
    if len(summary) > 80:
        summary = summary[:79] + "…"
    return f"{name}: {summary}" if summary else name


def call_argument(args: Any) -> str:
    """The argument that tells a call from another in a list: its first ``path``, ``command``,
    ``pattern`` or ``query``, else its first text argument, else ``""``."""
    found = _first_text(args, _TREE_ARGUMENTS)
    if found is not None:
        return found
    return next((value for value in _object(args).values() if isinstance(value, str)), "")
