"""The wire models of the agentls JSON-RPC protocol (see ``protocol.md``) that the session core uses.

The initialization options, the session, state, queue, change and permission shapes the session
core takes and gives, and the error kinds: both fronts build on them. Fields are snake_case in
Python and camelCase on the wire; every model accepts either. The envelopes of the LSP front's
methods (each ``agent/*`` request's params and result, each notification) and the schema made
from them are in :mod:`agentls.protocol_methods`, which ``agentls acp`` never imports.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentls.thinking_levels import ModelThinkingLevel

PROTOCOL_VERSION = 1

QueueModeName = Literal["all", "one-at-a-time"]
ThinkingLevelName = ModelThinkingLevel
WhenBusy = Literal["steer", "followUp", "reject"]
PermissionMode = Literal["allow", "ask", "deny", "review"]
PermissionOutcome = Literal[
    "allowOnce", "allowAlways", "allowAlwaysServer", "runUnsandboxed", "raiseBudget", "reject"
]
PermissionPresetName = Literal["ask", "acceptEdits", "plan", "bypass"]
"""A session's permission preset (the "modes" of Claude Code and ACP), in the order a switch cycles."""
"""``allowAlwaysServer``: every tool of the MCP server the tool belongs to (``mcp__SERVER__*``);
``runUnsandboxed``: run this ``bash`` call once outside the sandbox; ``raiseBudget``: go on with
the limit raised."""


class ProtocolModel(BaseModel):
    # Each model's validator is built when first used (``defer_build``), not at import: the
    # server's boot validates only the ``initialize`` options, and a session uses a few dozen.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ResultModel(ProtocolModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


# --- errors ------------------------------------------------------------------------------

INVALID_PARAMS = -32602
AGENT_ERROR = -32000
"""Every agent error uses this code; ``data.kind`` says which one it is."""

ErrorKind = Literal[
    "busy",
    "unknownSession",
    "cannotContinue",
    "noModel",
    "unknownModel",
    "unknownQueueItem",
    "storage",
    "invalidParams",
    "compactionFailed",
    "summaryFailed",
    "fileConflict",
]


# --- initialization ----------------------------------------------------------------------


class ModelRef(ProtocolModel):
    provider: str
    id: str

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """``PROVIDER/ID`` as a reference (the id may hold ``/``); ``ValueError`` when a part is missing."""
        provider, _, model_id = text.partition("/")
        if not provider or not model_id:
            raise ValueError(f"{text!r} is not PROVIDER/ID")
        return cls(provider=provider, id=model_id)


class CompactionSettings(ProtocolModel):
    """Pi's compaction settings; a client may send any of them (the rest keep their defaults)."""

    enabled: bool = True
    """Compact automatically when the context nears the model's window (``agent/compact`` works anyway)."""
    reserve_tokens: int = Field(16384, ge=0)
    """Compact when fewer tokens than this are left free in the window (room for the answer)."""
    keep_recent_tokens: int = Field(20000, ge=0)
    """About how many tokens of the newest messages a compaction keeps as they are."""


class CheckpointSettings(ProtocolModel):
    """Snapshots of a session's folder in agentls's shadow git repository (see protocol.md: Checkpoints)."""

    enabled: bool = True
    exclude: list[str] = Field(default_factory=list)
    """gitignore patterns (relative to the folder) left out of every snapshot, over its .gitignore files."""
    max_file_bytes: int = Field(10 * 1024 * 1024, ge=0)
    """Larger files are left out of snapshots (their changes are not captured)."""
    max_files: int = Field(100_000, ge=1)
    """A folder with more files to snapshot than this is not snapshot at all."""
    max_store_bytes: int = Field(1024 * 1024 * 1024, ge=0)
    """The shadow repository's objects past this: the oldest snapshots are pruned."""


SandboxMode = Literal["off", "workspace-write", "read-only"]


class SandboxSettings(ProtocolModel):
    """Where the agent's ``bash`` commands may write and connect (see protocol.md: Sandbox)."""

    mode: SandboxMode = "off"
    """``workspace-write`` (recommended for unattended runs): writes only in the session's folder
    (its ``.git`` read-only), the command's temporary folder and ``writableRoots``; ``read-only``:
    only in the temporary folder; ``off``: unconfined."""
    network: bool = False
    """Whether confined commands may open TCP connections and listen (loopback included)."""
    writable_roots: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """More folders a ``workspace-write`` command may write in (relative: to the session's folder)."""
    fallback: Literal["refuse", "unconfined"] = "refuse"
    """What a kernel that cannot enforce the mode does: refuse to run the command, or run it unconfined."""


class BudgetLimits(ProtocolModel):
    """Limits on what a run (or a whole session) spends, checked between turns."""

    max_cost_usd: float | None = Field(None, gt=0)
    max_tokens: int | None = Field(None, gt=0)
    max_turns: int | None = Field(None, gt=0)


class BudgetSettings(BudgetLimits):
    """``budget``: the limits of each run, and of the session as a whole under ``session``."""

    session: BudgetLimits | None = None


class BudgetUsage(ResultModel):
    """A limit that was reached: which (``maxTurns``, of a ``run`` or the ``session``), and what was used."""

    kind: Literal["maxCostUsd", "maxTokens", "maxTurns"]
    scope: Literal["run", "session"]
    limit: float
    used: float


class SandboxState(ResultModel):
    """The sandbox in force for a session's ``bash`` (``agent/getState``)."""

    mode: SandboxMode
    network: bool
    writable_roots: list[str]
    """Every folder a confined command may write in (the session's folder, its temporary one, the others)."""
    read_only: list[str]
    """Folders kept read-only inside a writable one (the session's ``.git``)."""
    fallback: Literal["refuse", "unconfined"]
    status: Literal["off", "enforced", "refused", "unconfined"]
    """``enforced``: commands run confined; ``refused``: the kernel cannot, commands do not run;
    ``unconfined``: the kernel cannot and ``fallback`` lets them run unconfined."""
    reason: str | None = None
    """Why the kernel cannot enforce it."""


FAUX_SCRIPT_ENV = "AGENTLS_FAUX_SCRIPT"
"""The environment variable naming a faux script when ``fauxScript`` does not."""


class InitializationOptions(ProtocolModel):
    """``initializationOptions`` of ``initialize``; every field is optional."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    model: ModelRef | None = None
    """Default model of new sessions."""
    thinking_level: ThinkingLevelName | None = None
    data_dir: str | None = None
    """Where sessions are stored (default: the platform's user data folder; env ``AGENTLS_DATA_DIR``)."""
    faux_script: str | None = None
    """A faux script (JSON) for the offline ``faux`` provider (env ``AGENTLS_FAUX_SCRIPT``)."""
    system_prompt: str | None = None
    """Replaces agentls's base system prompt in new sessions (project instructions, skills follow)."""
    append_system_prompt: str | None = None
    """Text added to the system prompt of new sessions."""
    permissions: dict[str, PermissionMode] | None = None
    """Permission mode per tool name, over the defaults (read-only tools allow, ``bash`` ask)."""
    allow_outside_workspace: bool | None = None
    """Let the tools use paths outside a session's folder (default: refused)."""
    pass_keys: list[str] | None = None
    """Environment variables holding API keys that ``bash`` and ``agent/bash`` commands still get
    (by default every provider's key variable is left out of their environment)."""
    apply_edit_timeout_ms: int = Field(60_000, gt=0)
    """How long a tool waits for the answer to ``workspace/applyEdit`` or ``agent/saveDocuments``."""
    compaction: CompactionSettings | None = None
    """Compaction settings of sessions that set none of their own."""
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    """Snapshots of the sessions' folders, so that rewinds put back what bash and MCP tools changed."""
    coalesce_deltas: bool = True
    """Deltas of one content block that arrive together travel as one ``message_update`` (false: one
    event per delta the provider streamed)."""
    mcp_servers: dict[str, Any] | list[Any] | None = None
    """MCP servers of every session: ``{NAME: server}`` or ACP's list form (checked when a session
    starts: a mistake is reported for that server only)."""
    demo: bool = False
    """Answer with the bundled demo faux script (it reads ``README.md``, then answers) when no
    ``fauxScript`` is given: ``agentls chat --demo`` for editors."""
    sandbox: SandboxSettings | None = None
    """The sandbox of the agent's ``bash`` in new sessions (default: ``off``)."""
    sandbox_mcp_servers: bool = False
    """Run the stdio MCP servers in ``sandbox`` too (each with its folder as the session's folder)."""
    budget: BudgetSettings | None = None
    """The spending limits of new sessions' runs and sessions (default: none)."""
    project_trust: Literal["ask", "always", "never"] = "ask"
    """Whether a folder's project files (its ``AGENTS.md``, skills, prompt templates) load: ``ask``
    once per folder (remembered), ``always`` unasked, ``never``. A project's MCP servers are asked
    about whatever this says."""


# --- sessions ----------------------------------------------------------------------------


class NewSessionParams(ProtocolModel):
    cwd: str | None = None
    model: ModelRef | None = None
    thinking_level: ThinkingLevelName | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    context_files: bool | None = None
    """Read the project instructions (``AGENTS.md``, ``CLAUDE.md``) into the system prompt (default true)."""
    permissions: dict[str, PermissionMode] | None = None
    """Permission modes of this session, over the server's."""
    allow_outside_workspace: bool | None = None
    """Let the tools use paths outside ``cwd``; writes there ask first (default: the server's option)."""
    compaction: CompactionSettings | None = None
    """This session's compaction settings instead of the server's (stored with the session)."""
    mcp_servers: dict[str, Any] | list[Any] | None = None
    """MCP servers of this session, over the others of the same name (stored with the session)."""
    permission_preset: PermissionPresetName | None = None
    """The session's preset at its start (default ``acceptEdits``: its own modes, unchanged)."""
    sandbox: SandboxSettings | None = None
    """The sandbox of this session's ``bash`` instead of the server's."""
    budget: BudgetSettings | None = None
    """This session's spending limits instead of the server's."""


class SessionParams(ProtocolModel):
    session_id: str = Field(min_length=1)


class SessionInfo(ResultModel):
    session_id: str
    cwd: str
    title: str | None = None
    """The first prompt's text, shortened."""
    created_at: int
    updated_at: int
    message_count: int
    model: ModelRef | None = None
    loaded: bool = False
    """Whether the session is loaded (live) in this server."""
    running: bool = False
    """Whether a run of the session goes on."""
    clients: int = 0
    """How many clients are attached to the session."""


class TreeEntry(ResultModel):
    id: str
    parent_id: str | None
    """The nearest entry above it that is in the tree (``None``: a root)."""
    type: Literal["message", "compaction", "branchSummary"]
    role: str
    preview: str
    """One line of at most 120 characters."""
    timestamp: int
    label: str | None = None
    on_branch: bool
    """On the path from the root to the current position."""
    files: list[str] | None = None
    """On a tool result: the files its ``write``/``edit`` changed (relative to the session's folder)."""

    def wire(self) -> dict[str, Any]:
        return {**super().wire(), "parentId": self.parent_id}


class TreeBranch(ResultModel):
    leaf_id: str
    preview: str
    timestamp: int
    message_count: int
    current: bool


class TreeResult(ResultModel):
    leaf_id: str | None
    """The entry at the current position (``None``: before the first message)."""
    entries: list[TreeEntry]
    branches: list[TreeBranch]

    def wire(self) -> dict[str, Any]:
        return {
            "leafId": self.leaf_id,
            "entries": [entry.wire() for entry in self.entries],
            "branches": [branch.wire() for branch in self.branches],
        }


class RevertedFile(ResultModel):
    path: str
    action: Literal["reverted", "deleted", "restored", "applied"]


class SkippedFile(ResultModel):
    path: str
    reason: str


class RewindResult(ResultModel):
    leaf_id: str | None
    message_count: int
    reverted: list[RevertedFile]
    skipped: list[SkippedFile]
    summary: str | None = None

    def wire(self) -> dict[str, Any]:
        return {**super().wire(), "leafId": self.leaf_id}


class ChangesSpan(SessionParams):
    """A span of a session: one run (``runId``; neither: the last run), or the entries after
    ``fromEntryId`` (``null``: from the start) up to ``toEntryId`` (default: the leaf)."""

    run_id: str | None = Field(None, min_length=1)
    from_entry_id: str | None = Field(None, min_length=1)
    to_entry_id: str | None = Field(None, min_length=1)

    @property
    def by_entries(self) -> bool:
        """The span is given by entries (``fromEntryId`` was sent, ``null`` included)."""
        return "from_entry_id" in self.model_fields_set or self.to_entry_id is not None


class GetChangesParams(ChangesSpan):
    text: bool = False
    """Also each file's whole text before and after (``oldText``, ``newText``), for a diff editor."""


class ChangeHunk(ResultModel):
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]


class ChangedFile(ResultModel):
    path: str
    uri: str
    status: Literal["added", "modified", "deleted", "renamed"]
    old_path: str | None = None
    by: list[Literal["write", "edit", "bash", "mcp", "tool", "user"]]
    hunks: list[ChangeHunk]
    binary: bool | None = None
    recorded: bool | None = None
    old_text: str | None = None
    new_text: str | None = None


class ChangesResult(ResultModel):
    run_id: str | None = None
    from_entry_id: str | None
    to_entry_id: str | None
    files: list[ChangedFile]
    checkpoints: Literal["on", "off", "unavailable"]

    def wire(self) -> dict[str, Any]:
        return {**super().wire(), "fromEntryId": self.from_entry_id, "toEntryId": self.to_entry_id}


class HunkRef(ProtocolModel):
    path: str = Field(min_length=1)
    index: int = Field(ge=0)


class RevertChangesParams(ChangesSpan):
    files: list[str] | None = None
    hunks: list[HunkRef] | None = None
    force: bool = False


class RevertedChange(ResultModel):
    path: str
    action: Literal["reverted", "deleted", "restored"]
    hunks: list[int] | None = None


class RevertChangesResult(ResultModel):
    reverted: list[RevertedChange]
    skipped: list[SkippedFile]


class McpServerInfo(ResultModel):
    name: str
    source: str
    """The configuration file's path, ``initializationOptions`` or ``newSession``."""
    transport: Literal["stdio", "http", "sse"]
    status: Literal["starting", "ready", "failed", "needsTrust"]
    error: str | None = None
    tools: list[str]
    """The agent's names of its tools (``mcp__SERVER__TOOL``)."""
    cwd: str
    """The folder whose sessions use it."""


# --- prompts and queues ------------------------------------------------------------------


class ImageParam(ProtocolModel):
    type: Literal["image"] = "image"
    data: str = Field(min_length=1)
    """Base64."""
    mime_type: str = Field(pattern=r"^image/[A-Za-z0-9.+-]+$")


class PositionParam(ProtocolModel):
    """An LSP position (0-based; ``character`` in the negotiated position encoding)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class RangeParam(ProtocolModel):
    start: PositionParam
    end: PositionParam


class SelectionContext(ProtocolModel):
    """The text of ``range`` in a document (the editor's buffer when it has it open)."""

    type: Literal["selection"]
    uri: str
    range: RangeParam


class FileContext(ProtocolModel):
    type: Literal["file"]
    uri: str
    text: str | None = None
    """The file's content as the client has it (its unsaved buffer); default: read it."""


class DiagnosticsContext(ProtocolModel):
    """The diagnostics the editor shows for ``uri`` (every document without it)."""

    type: Literal["diagnostics"]
    uri: str | None = None


ContextAttachment = Annotated[
    SelectionContext | FileContext | DiagnosticsContext, Field(discriminator="type")
]
"""What the user attached from the editor to a prompt (see "Editor context" in protocol.md)."""


class PromptResult(ResultModel):
    run_id: str | None = None
    """Set when the prompt started a run."""
    queued: str | None = None
    """The queue item id, when the agent was busy and the prompt was queued."""


class QueueItem(ResultModel):
    id: str
    kind: Literal["steering", "followUp"]
    text: str
    images: list[dict[str, Any]] | None = None
    context: list[dict[str, Any]] | None = None


class QueueState(ResultModel):
    steering: list[QueueItem]
    follow_up: list[QueueItem]


class AbortResult(ResultModel):
    aborted: bool
    """Whether a run was going."""
    run_id: str | None = None
    queue: QueueState


# --- state -------------------------------------------------------------------------------


class MessagesResult(ResultModel):
    messages: list[dict[str, Any]]
    total: int
    entry_ids: list[str] = Field(default_factory=list)
    """The session-file entry of each message, in the same order (what ``agent/fork`` names)."""
    seq: int = 0
    """The session's last notification that ``messages`` reflects: ``agent/attach {since: seq}`` replays
    what they lack."""


class StateResult(ResultModel):
    session_id: str
    cwd: str
    model: ModelRef | None
    thinking_level: ThinkingLevelName
    system_prompt: str
    is_running: bool
    is_compacting: bool = False
    """A compaction's summary is being made (in a run, or for ``agent/compact``)."""
    run_id: str | None = None
    steering_mode: QueueModeName
    follow_up_mode: QueueModeName
    message_count: int
    pending_tool_calls: list[str]
    error_message: str | None = None
    queue: QueueState
    context_files: list[str] = Field(default_factory=list)
    """The absolute paths of the project instructions in the system prompt."""
    project_trust: Literal["trusted", "untrusted", "asking"] = "trusted"
    """Whether the session's folder is trusted, so that its project files are loaded."""
    resources: list[ResourceInfo] = Field(default_factory=list)
    """The instructions, skills and prompt templates loaded, and the project's held back."""
    permission_preset: PermissionPresetName = "acceptEdits"
    permission_presets: list[PermissionPresetInfo] = Field(default_factory=list)
    """Every preset, in the order a one-key switch cycles them."""
    checkpoints: CheckpointState | None = None
    """Whether the session snapshots its folder."""
    sandbox: SandboxState | None = None
    """The sandbox of the agent's ``bash``."""
    budget: BudgetState | None = None
    """The spending limits and what the current (or last) run and the session have spent."""


class BudgetSpent(ResultModel):
    cost_usd: float
    tokens: int
    turns: int


class BudgetState(ResultModel):
    limits: BudgetSettings
    run: BudgetSpent
    """The run going on, or the last one."""
    session: BudgetSpent


class CheckpointState(ResultModel):
    state: Literal["on", "off", "unavailable"]
    reason: str | None = None


class PermissionPresetInfo(ResultModel):
    id: PermissionPresetName
    name: str
    description: str


class ResourceInfo(ResultModel):
    """A file a session reads for the model or its user (``agent/getState``)."""

    path: str
    kind: Literal["contextFile", "skill", "promptTemplate"]
    scope: Literal["user", "project"]
    """``user``: the data folder's (or ``~/.agents/skills``); ``project``: the folder's own."""
    loaded: bool
    """``False``: a project file held back until the folder is trusted."""


class CommandInfo(ResultModel):
    """A prompt template or a skill, for editors to complete after ``/``."""

    name: str
    """What follows the ``/``: the template's name, or ``skill:`` and the skill's name."""
    description: str
    kind: Literal["template", "skill"]
    argument_hint: str | None = None
    path: str
    """The template's or skill's file."""


class TokenStats(ResultModel):
    input: int
    output: int
    cache_read: int
    cache_write: int
    total: int


class ContextStats(ResultModel):
    tokens: int
    context_window: int
    percent: float | None


class StatsResult(ResultModel):
    tokens: TokenStats
    cost: float
    """Dollars, summed over the session's assistant messages."""
    context: ContextStats
    """The current context size (the last response's prompt and output) against the model's window."""


# --- compaction --------------------------------------------------------------------------


class CompactResult(ResultModel):
    summary: str
    first_kept_entry_id: str
    """The session-file entry of the first message kept as it is."""
    tokens_before: int
    """The context's size before (the last response's usage plus an estimate of what came after)."""
    tokens_after: int | None = None
    """An estimate of the context's size after (summary and kept messages, four characters a token)."""


CompactionReason = Literal["threshold", "overflow", "manual"]


# --- permissions -------------------------------------------------------------------------


class PermissionOption(ResultModel):
    id: PermissionOutcome
    label: str


class RequestPermissionParams(ResultModel):
    """Server -> client request ``agent/requestPermission``."""

    session_id: str
    tool_call_id: str
    tool_name: str
    args: Any = None
    title: str
    options: list[PermissionOption]
    kind: Literal["tool", "sandbox", "budget"] = "tool"
    """``tool``: may the call run; ``sandbox``: the sandbox denied the call, run it outside once?;
    ``budget``: the run reached a limit (``budget``), go on?"""
    budget: BudgetUsage | None = None
    """With ``kind: "budget"``: the limit reached."""


class RequestPermissionResult(ProtocolModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    outcome: PermissionOutcome
    reason: str | None = Field(None, max_length=2000)
    """Why a question was rejected (no one could be asked, say): the tool's result says it."""


Ask = Callable[[RequestPermissionParams], Awaitable[RequestPermissionResult]]
"""Asks the user a permission question (a front's ``agent/requestPermission``); the answer."""


class PermissionRule(ResultModel):
    workspace: str
    tool_name: str


# --- notifications -----------------------------------------------------------------------
