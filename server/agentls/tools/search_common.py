"""What ``ls``, ``find`` and ``grep`` share: their arguments read, and their results cut and noted."""

from __future__ import annotations

from typing import Any

from agentls.agent.types import AgentToolResult
from agentls.ai import AbortSignal, TextContent
from agentls.ai.abort import AbortError
from agentls.tools.matching import Glob, PatternError, glob_matcher
from agentls.tools.walk import Budget
from agentls.tools.workspace import ToolInputError

MAX_OUTPUT_BYTES = 50 * 1024
"""The most text ``find`` and ``grep`` return (Pi's 50 KB); the rest is cut with a note."""


def check_aborted(signal: AbortSignal | None) -> None:
    """:class:`AbortError` if ``signal`` has aborted."""
    if signal is not None and signal.aborted:
        raise AbortError("Operation aborted")


# --- arguments -------------------------------------------------------------------------


def tool_args(args: Any, tool: str) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise ToolInputError(f"{tool} needs an object of arguments")
    return args


def str_arg(args: dict[str, Any], name: str, default: str | None = None) -> str:
    value = args.get(name)
    if value is None:
        if default is None:
            raise ToolInputError(f"'{name}' is required and must be a string")
        return default
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be a string, got {value!r}")
    return value


def int_arg(args: dict[str, Any], name: str, default: int, minimum: int = 1) -> int:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ToolInputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ToolInputError(f"{name} must be at least {minimum}, got {value!r}")
    return int(value)


def bool_arg(args: dict[str, Any], name: str) -> bool:
    value = args.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolInputError(f"{name} must be a boolean, got {value!r}")
    return value


def glob_arg(pattern: str) -> Glob:
    """The matcher of a glob argument; :class:`ToolInputError` for one that cannot be used."""
    try:
        return glob_matcher(pattern)
    except PatternError as error:
        raise ToolInputError(f"Invalid glob {pattern!r}: {error}. Fix the glob") from None


# --- results ---------------------------------------------------------------------------


def tool_result(text: str, details: dict[str, Any]) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details=details)


def capped(text: str, details: dict[str, Any], hint: str) -> str:
    """``text`` cut to :data:`MAX_OUTPUT_BYTES` at a line end, with a note (``details.outputTruncated``)."""
    data = text.encode("utf-8")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    kept = data[:MAX_OUTPUT_BYTES].decode("utf-8", errors="ignore")
    kept = kept[: kept.rfind("\n")] if "\n" in kept else kept
    details["outputTruncated"] = True
    return f"{kept}\n\n[Output truncated at {MAX_OUTPUT_BYTES // 1024} KB; {hint}]"


def noted(text: str, details: dict[str, Any], budget: Budget) -> str:
    """``text`` with a note for each bound the call hit, named in ``details.boundsHit``."""
    hit = budget.hit()
    if not hit:
        return text
    details["boundsHit"] = hit
    return "\n\n".join([text, *budget.notes()])
