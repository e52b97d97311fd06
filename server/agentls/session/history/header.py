"""The first line of a session file, ``{"type":"session",...}``: what the session started with.

:class:`SessionHeader` is the header as the session uses it; :func:`header_to_wire` is its line
and :func:`read_header` reads that line's JSON back through :class:`HeaderLine`, a typed model
that says in one line what is wrong with a damaged header. A few fields are informational and
ignored when malformed (``forkedFrom``, ``mcpServers``, the two flags), as they always were.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Strict, ValidationError, field_validator
from pydantic.alias_generators import to_camel
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from agentls.protocol import BudgetSettings, SandboxSettings
from agentls.session.history.entries import Count, Text, Timestamp, damaged_fields, one_line
from agentls.session.history.session_lines import brief

__all__ = ["FORMAT_VERSION", "HeaderLine", "SessionHeader", "header_to_wire", "read_header"]

FORMAT_VERSION = 1
"""The ``version`` of the header this module writes and reads."""


@dataclass(frozen=True)
class SessionHeader:
    """The first line of a session file: what the session started with."""

    id: str
    cwd: str
    created_at: int
    system_prompt: str
    """The session's custom system prompt, replacing agentls's base one; ``""`` for none."""
    model: tuple[str, str] | None
    """``(provider, model id)``, or ``None`` when the session started without a model."""
    thinking_level: str
    permissions: dict[str, str] | None = None
    """The session's own tool policy (``{tool: allow|ask|deny}``) over the server's, if it set one."""
    allow_outside_workspace: bool = False
    """Whether the tools may use paths outside ``cwd``."""
    append_system_prompt: str | None = None
    """Text added to the system prompt."""
    context_files: bool = True
    """Whether the project instructions (``AGENTS.md``, ``CLAUDE.md``) are read into the system prompt."""
    compaction: dict[str, Any] | None = None
    """The session's own compaction settings (``enabled``, ``reserveTokens``, ``keepRecentTokens``; wire
    names) instead of the server's, if it set any."""
    forked_from: tuple[str, str] | None = None
    """``(session id, entry id)`` of the session and entry this one was forked from (``agent/fork``)."""
    mcp_servers: dict[str, Any] | list[Any] | None = None
    """The MCP servers ``agent/newSession`` gave the session, as given (checked when it starts)."""
    sandbox: dict[str, Any] | None = None
    """The sandbox ``agent/newSession`` gave the session (wire names), if it gave one."""
    budget: dict[str, Any] | None = None
    """The budget ``agent/newSession`` gave the session (wire names), if it gave one."""


def header_to_wire(header: SessionHeader) -> dict[str, Any]:
    """The header's line as JSON data (optional fields only when they differ from the default)."""
    return {
        "type": "session",
        "version": FORMAT_VERSION,
        "id": header.id,
        "cwd": header.cwd,
        "createdAt": header.created_at,
        "systemPrompt": header.system_prompt,
        "model": {"provider": header.model[0], "id": header.model[1]} if header.model else None,
        "thinkingLevel": header.thinking_level,
        **({"permissions": header.permissions} if header.permissions else {}),
        **({"allowOutsideWorkspace": True} if header.allow_outside_workspace else {}),
        **({"appendSystemPrompt": header.append_system_prompt} if header.append_system_prompt else {}),
        **({} if header.context_files else {"contextFiles": False}),
        **({"compaction": header.compaction} if header.compaction else {}),
        **(
            {"forkedFrom": {"sessionId": header.forked_from[0], "entryId": header.forked_from[1]}}
            if header.forked_from
            else {}
        ),
        **({"mcpServers": header.mcp_servers} if header.mcp_servers else {}),
        **({"sandbox": header.sandbox} if header.sandbox is not None else {}),
        **({"budget": header.budget} if header.budget is not None else {}),
    }


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, frozen=True)


def _absolute(path: str) -> str:
    # The tools work in cwd: a relative one would be the server's folder, a NUL no path at all.
    if "\0" in path or not os.path.isabs(path):
        raise ValueError("not an absolute path")
    return path


class ModelRef(_Wire):
    provider: Text
    id: Text


class CompactionSettings(_Wire):
    """Checks the header's ``compaction`` (kept as written: the session reads its wire names)."""

    model_config = ConfigDict(extra="forbid")

    enabled: Annotated[bool, Strict()] = True
    reserve_tokens: Count = 0
    keep_recent_tokens: Count = 0


def _compaction_settings(value: dict[str, Any]) -> dict[str, Any]:
    try:
        CompactionSettings.model_validate(value)
    except ValidationError:
        raise ValueError("not compaction settings") from None
    return value


def _sandbox_settings(value: dict[str, Any]) -> dict[str, Any]:
    return SandboxSettings.model_validate(value).wire()


def _budget_settings(value: dict[str, Any]) -> dict[str, Any]:
    return BudgetSettings.model_validate(value).wire()


class ForkedFrom(_Wire):
    session_id: Text
    entry_id: Text


McpServers: TypeAlias = dict[str, Any] | list[Any] | None


class HeaderLine(_Wire):
    """The header's JSON; its fields checked in the order a damaged one is reported."""

    id: Text
    cwd: Annotated[str, Strict(), AfterValidator(_absolute)]
    created_at: Timestamp
    system_prompt: Text | None = None
    thinking_level: Text = "off"
    model: ModelRef | None = None
    permissions: dict[str, Text] | None = None
    append_system_prompt: Text | None = None
    compaction: Annotated[dict[str, Any], AfterValidator(_compaction_settings)] | None = None
    allow_outside_workspace: Any = None
    context_files: Any = None
    forked_from: ForkedFrom | None = None
    mcp_servers: McpServers = None
    sandbox: Annotated[dict[str, Any], AfterValidator(_sandbox_settings)] | None = None
    budget: Annotated[dict[str, Any], AfterValidator(_budget_settings)] | None = None

    reasons: ClassVar[dict[str, str]] = {
        "id": "the header has no string id",
        "cwd": "the header's cwd is not an absolute path",
        "createdAt": "the header's createdAt {value} is not a time in milliseconds",
        "systemPrompt": "the header's systemPrompt is not a string",
        "thinkingLevel": "the header's thinkingLevel is not a string",
        "model": 'the header\'s model is not {{"provider": string, "id": string}} or null',
        "permissions": "the header's permissions is not an object of strings",
        "appendSystemPrompt": "the header's appendSystemPrompt is not a string",
        "compaction": (
            "the header's compaction is not "
            "{{enabled?: boolean, reserveTokens?: integer, keepRecentTokens?: integer}}"
        ),
    }

    @field_validator("forked_from", "mcp_servers", "sandbox", "budget", mode="wrap")
    @classmethod
    def _informational(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """A malformed informational field is no value rather than a damaged header (a sandbox or
        budget of the file only ever narrows the server's: without it, the server's applies)."""
        try:
            return handler(value)
        except ValidationError:
            return None

    def to_header(self) -> SessionHeader:
        model, forked = self.model, self.forked_from
        return SessionHeader(
            id=self.id,
            cwd=self.cwd,
            created_at=int(self.created_at),
            system_prompt=self.system_prompt or "",
            model=(model.provider, model.id) if model is not None else None,
            thinking_level=self.thinking_level,
            permissions=self.permissions or None,
            allow_outside_workspace=self.allow_outside_workspace is True,
            append_system_prompt=self.append_system_prompt or None,
            context_files=self.context_files is not False,
            compaction=self.compaction or None,
            forked_from=(forked.session_id, forked.entry_id) if forked is not None else None,
            mcp_servers=self.mcp_servers or None,
            sandbox=self.sandbox,
            budget=self.budget,
        )


def read_header(data: dict[str, Any]) -> SessionHeader:
    """The header a ``{"type":"session"}`` object of the current version holds; ``ValueError`` saying
    what is wrong with a damaged one."""
    try:
        return HeaderLine.model_validate(data).to_header()
    except ValidationError as error:
        name, errors = next(iter(damaged_fields(error.errors()).items()))
        reason = HeaderLine.reasons.get(name, f"the header's {name} {{error}}")
        raise ValueError(reason.format(error=one_line(errors), value=brief(data.get(name)))) from None
