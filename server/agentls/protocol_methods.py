"""The methods of the agentls JSON-RPC protocol (see ``protocol.md``): each ``agent/*`` request's
params and result, each notification, and ``protocol.schema.json`` made from them.

What the session core and the ACP front also use (initialization options, session and state
results, permissions, the error kinds) is in :mod:`agentls.protocol`; this module holds what only
the LSP front, the Python client and the command line speak. So ``agentls acp`` never builds
these classes (59 pydantic models, ~10 ms of its start).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from agentls.protocol import (
    PROTOCOL_VERSION,
    AbortResult,
    BudgetSettings,
    BudgetUsage,
    ChangeHunk,
    ChangesResult,
    CommandInfo,
    CompactionReason,
    CompactResult,
    ContextAttachment,
    GetChangesParams,
    ImageParam,
    InitializationOptions,
    McpServerInfo,
    MessagesResult,
    NewSessionParams,
    PermissionMode,
    PermissionPresetName,
    PermissionRule,
    PromptResult,
    ProtocolModel,
    QueueItem,
    QueueModeName,
    QueueState,
    RequestPermissionParams,
    RequestPermissionResult,
    ResultModel,
    RevertChangesParams,
    RevertChangesResult,
    RewindResult,
    SessionInfo,
    SessionParams,
    StateResult,
    StatsResult,
    ThinkingLevelName,
    TreeResult,
    WhenBusy,
)

# --- initialization ----------------------------------------------------------------------


class ClientAgentCapabilities(ProtocolModel):
    """``capabilities.experimental.agent`` of the client."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    request_permission: bool = False
    """The client answers ``agent/requestPermission`` (else ``window/showMessageRequest`` is used)."""
    save_documents: bool = False
    """The client answers ``agent/saveDocuments`` by saving those documents from its buffers."""
    diagnostics: bool = False
    """The client answers ``agent/getDiagnostics`` with what its language servers report."""
    review_edit: bool = False
    """The client answers ``agent/reviewEdit``: it shows a change as a diff; the user accepts or not."""


# --- sessions ----------------------------------------------------------------------------


class NewSessionResult(ResultModel):
    session_id: str


class ListSessionsParams(ProtocolModel):
    cwd: str | None = None


class ListSessionsResult(ResultModel):
    sessions: list[SessionInfo]


class LoadSessionParams(SessionParams):
    permissions: dict[str, PermissionMode] | None = None
    """Permission modes of this session as the user gives them, over the file's (which only narrow)."""
    allow_outside_workspace: bool | None = None
    """Let the tools use paths outside the session's folder (the file's own say needs the server's option)."""


class LoadSessionResult(ResultModel):
    session_id: str
    message_count: int
    warnings: list[str] | None = None
    """What of the file's policy was not applied, and what a rewind that was cut short left behind."""


class ForkParams(SessionParams):
    entry_id: str
    """The entry to fork at (from ``entryIds`` of ``agent/getMessages``): the new session's last."""


class MoveParams(SessionParams):
    summarize: bool = False
    """Summarise the branch left behind into a ``branchSummary`` message (Pi's branch summarisation)."""
    instructions: str | None = None
    """What that summary should focus on."""
    force: bool = False
    """Put back the files that can be and leave those that cannot (``skipped``) instead of refusing."""


class RewindParams(MoveParams):
    entry_id: str | None = Field(min_length=1)
    """The entry to continue from, on the current branch; ``None``: from before the first message."""
    files: bool = True
    """Revert what the tools changed after that entry."""


class SwitchBranchParams(MoveParams):
    entry_id: str = Field(min_length=1)
    """Any entry of the tree, typically a branch's ``leafId``."""
    files: bool = False
    """Undo the changes of the branch left and redo those of the branch gone to."""


class SetLabelParams(SessionParams):
    entry_id: str = Field(min_length=1)
    label: str | None = Field(max_length=100)
    """The bookmark's text; ``None`` or ``""`` clears it."""


class SetLabelResult(ResultModel):
    label: str | None

    def wire(self) -> dict[str, Any]:
        return {"label": self.label}


class ListMcpServersParams(ProtocolModel):
    session_id: str | None = Field(None, min_length=1)


class ListMcpServersResult(ResultModel):
    servers: list[McpServerInfo]
    problems: list[str] = Field(default_factory=list)
    """Mistakes in the configuration (of the session), one line each naming the source and field."""


class RestartMcpServerParams(ProtocolModel):
    name: str = Field(min_length=1)
    session_id: str | None = Field(None, min_length=1)


class RenameSessionParams(SessionParams):
    name: str = Field(max_length=200)
    """The session's display name (shown instead of its first prompt); empty clears it."""


class RenameSessionResult(ResultModel):
    name: str | None
    """The name as stored (on one line), ``None`` when cleared."""


class DeleteSessionResult(ResultModel):
    deleted: bool


# --- prompts and queues ------------------------------------------------------------------


class PromptParams(SessionParams):
    text: str
    images: list[ImageParam] | None = None
    context: list[ContextAttachment] | None = None
    when_busy: WhenBusy | None = None


class QueueParams(SessionParams):
    text: str
    images: list[ImageParam] | None = None
    context: list[ContextAttachment] | None = None


class QueueItemResult(ResultModel):
    item_id: str


class ClearQueueParams(SessionParams):
    kind: Literal["steering", "followUp", "all"] = "all"
    item_id: str | None = None
    """Remove only this item."""


class EditQueueItemParams(SessionParams):
    item_id: str
    text: str
    images: list[ImageParam] | None = None
    """The item's new images (its old ones are kept when this is left out)."""


class MoveQueueItemParams(SessionParams):
    item_id: str
    index: int = Field(ge=0)
    """The item's new place in its queue (0: delivered first); past the end means last."""


class RunResult(ResultModel):
    run_id: str


# --- state -------------------------------------------------------------------------------


class GetMessagesParams(SessionParams):
    since: int = Field(default=0, ge=0)
    """Index of the first message to return."""


class ListCommandsResult(ResultModel):
    commands: list[CommandInfo]


class SetModelParams(SessionParams):
    provider: str = Field(min_length=1)
    id: str = Field(min_length=1)


class SetThinkingLevelParams(SessionParams):
    level: ThinkingLevelName


class SetPermissionPresetParams(SessionParams):
    preset: PermissionPresetName


class SetBudgetParams(SessionParams):
    budget: BudgetSettings
    """The session's new limits (they replace the old ones; ``{}`` lifts them all)."""


class SetQueueModesParams(SessionParams):
    steering: QueueModeName | None = None
    follow_up: QueueModeName | None = None


class ListModelsParams(ProtocolModel):
    session_id: str | None = None


class ModelsResult(ResultModel):
    models: list[dict[str, Any]]


# --- the user's commands ----------------------------------------------------------------


class BashParams(SessionParams):
    command: str
    exclude_from_context: bool = False
    """Pi's ``!!cmd``: the message stays in the transcript and is never sent to the model."""


class BashResult(ResultModel):
    bash_id: str


class AbortBashResult(ResultModel):
    aborted: bool
    """Whether a command was running; answered once its ``agent/bashEnd`` has been sent."""


# --- compaction --------------------------------------------------------------------------


class CompactParams(SessionParams):
    instructions: str | None = None
    """What the summary should focus on (Pi's ``/compact [instructions]``)."""


class CompactionNotification(ResultModel):
    """``agent/compaction``: a compaction starts (``phase: "start"``) or ends (``"end"``)."""

    session_id: str
    seq: int
    """The session's numbering of its notifications (see ``agent/event``)."""
    run_id: str | None = None
    """The run it happens in; absent for ``agent/compact``."""
    phase: Literal["start", "end"]
    reason: CompactionReason
    tokens_before: int
    tokens_after: int | None = None
    """On a successful end."""
    summary: str | None = None
    """On a successful end."""
    first_kept_entry_id: str | None = None
    """On a successful end."""
    will_retry: bool | None = None
    """On a successful end of an ``overflow`` compaction: the failed request is sent again."""
    aborted: bool | None = None
    """On an end: the compaction was aborted; the session is as it was."""
    error_message: str | None = None
    """On an end: the compaction failed; the session is as it was."""


# --- permissions -------------------------------------------------------------------------


class SaveDocumentsParams(ProtocolModel):
    uris: list[str]


class SaveDocumentsResult(ProtocolModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    saved: list[str]
    """The URIs the client saved; the server writes the others to disk itself."""


class GetDiagnosticsParams(ProtocolModel):
    uris: list[str] | None = None
    """Those documents' diagnostics; every document's without it."""


class FileDiagnostics(ProtocolModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    uri: str
    items: list[dict[str, Any]]
    """LSP ``Diagnostic`` objects: ``range``, ``severity?``, ``message``, ``source?``, ``code?``."""


class GetDiagnosticsResult(ProtocolModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    diagnostics: list[FileDiagnostics]


class ReviewEditParams(ProtocolModel):
    session_id: str
    tool_call_id: str
    tool_name: Literal["write", "edit"]
    uri: str
    path: str
    """The file relative to the session's folder (absolute outside it)."""
    old_text: str
    """The file as it is now (the buffer when open; empty for a new file)."""
    new_text: str
    hunks: list[ChangeHunk] = Field(default_factory=list)
    """The change as hunks (``agent/getChanges``'s shape): an answer may accept some of them."""


class ReviewEditResult(ProtocolModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    outcome: Literal["accept", "reject"]
    reason: str | None = None
    """Why it was rejected: the model reads it."""
    hunks: list[int] | None = None
    """With ``accept``: only these hunks (indexes into the request's ``hunks``) land."""
    text: str | None = None
    """With ``accept``: the user's own version of the file lands instead of the proposal."""


class ListPermissionRulesParams(ProtocolModel):
    cwd: str | None = None


class PermissionRulesResult(ResultModel):
    rules: list[PermissionRule]


class RevokePermissionRuleParams(ProtocolModel):
    workspace: str = Field(min_length=1)
    tool_name: str = Field(min_length=1)


class RevokeResult(ResultModel):
    revoked: bool


# --- notifications -----------------------------------------------------------------------


class EventNotification(ResultModel):
    session_id: str
    run_id: str | None
    """``null`` for the events of a message that joins the transcript between runs (``agent/bash``)."""
    seq: int
    event: dict[str, Any]
    """An agent event in Pi's shape, less what a client can rebuild (``agentls.fronts.lsp.event_wire``)."""


class QueueNotification(ResultModel):
    session_id: str
    seq: int
    """The session's numbering of its notifications (see ``agent/event``)."""
    steering: list[QueueItem]
    follow_up: list[QueueItem]


class SettledNotification(ResultModel):
    session_id: str
    seq: int
    """The session's numbering of its notifications (see ``agent/event``)."""
    run_id: str
    stop_reason: str
    error_message: str | None = None
    budget: BudgetUsage | None = None
    """The run stopped because it reached this limit."""


class BranchNotification(ResultModel):
    session_id: str
    seq: int
    """The session's numbering of its notifications (see ``agent/event``)."""
    leaf_id: str | None
    message_count: int

    def wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)  # leafId null too


class BashOutputNotification(ResultModel):
    session_id: str
    seq: int
    """The session's numbering of its notifications (see ``agent/event``)."""
    bash_id: str
    chunk: str
    """The next piece of the command's output, as it arrives (all of it, even what the message cuts)."""


class BashEndNotification(ResultModel):
    session_id: str
    seq: int
    """The session's numbering of its notifications (see ``agent/event``)."""
    bash_id: str
    message: dict[str, Any]
    """The ``bashExecution`` message."""


class AttachParams(SessionParams):
    since: int | None = Field(default=None, ge=0)
    """A ``seq`` the client saw: the session's notifications after it are sent again first."""


class AttachResult(ResultModel):
    attached: bool = True
    replayed: int
    """How many notifications were sent again."""
    gap: bool
    """Some notifications after ``since`` are no longer kept (or ``since`` is past the session's last):
    reload with ``agent/getMessages`` and attach with its ``seq``."""
    seq: int
    """The session's last ``seq`` when the replay ended."""


class DetachResult(ResultModel):
    detached: bool


REQUESTS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "agent/newSession": (NewSessionParams, NewSessionResult),
    "agent/listSessions": (ListSessionsParams, ListSessionsResult),
    "agent/loadSession": (LoadSessionParams, LoadSessionResult),
    "agent/deleteSession": (SessionParams, DeleteSessionResult),
    "agent/renameSession": (RenameSessionParams, RenameSessionResult),
    "agent/fork": (ForkParams, NewSessionResult),
    "agent/getTree": (SessionParams, TreeResult),
    "agent/rewind": (RewindParams, RewindResult),
    "agent/switchBranch": (SwitchBranchParams, RewindResult),
    "agent/setLabel": (SetLabelParams, SetLabelResult),
    "agent/getChanges": (GetChangesParams, ChangesResult),
    "agent/revertChanges": (RevertChangesParams, RevertChangesResult),
    "agent/listMcpServers": (ListMcpServersParams, ListMcpServersResult),
    "agent/restartMcpServer": (RestartMcpServerParams, McpServerInfo),
    "agent/prompt": (PromptParams, PromptResult),
    "agent/steer": (QueueParams, QueueItemResult),
    "agent/followUp": (QueueParams, QueueItemResult),
    "agent/getQueue": (SessionParams, QueueState),
    "agent/clearQueue": (ClearQueueParams, QueueState),
    "agent/editQueueItem": (EditQueueItemParams, QueueState),
    "agent/moveQueueItem": (MoveQueueItemParams, QueueState),
    "agent/abort": (SessionParams, AbortResult),
    "agent/continue": (SessionParams, RunResult),
    "agent/getState": (SessionParams, StateResult),
    "agent/getMessages": (GetMessagesParams, MessagesResult),
    "agent/setModel": (SetModelParams, StateResult),
    "agent/listModels": (ListModelsParams, ModelsResult),
    "agent/setThinkingLevel": (SetThinkingLevelParams, StateResult),
    "agent/setQueueModes": (SetQueueModesParams, StateResult),
    "agent/setBudget": (SetBudgetParams, StateResult),
    "agent/setPermissionPreset": (SetPermissionPresetParams, StateResult),
    "agent/getStats": (SessionParams, StatsResult),
    "agent/compact": (CompactParams, CompactResult),
    "agent/listCommands": (SessionParams, ListCommandsResult),
    "agent/bash": (BashParams, BashResult),
    "agent/abortBash": (SessionParams, AbortBashResult),
    "agent/listPermissionRules": (ListPermissionRulesParams, PermissionRulesResult),
    "agent/revokePermissionRule": (RevokePermissionRuleParams, RevokeResult),
    "agent/attach": (AttachParams, AttachResult),
    "agent/detach": (SessionParams, DetachResult),
}
"""Every request: method -> (params model, result model)."""

NOTIFICATIONS: dict[str, type[BaseModel]] = {
    "agent/event": EventNotification,
    "agent/queue": QueueNotification,
    "agent/settled": SettledNotification,
    "agent/compaction": CompactionNotification,
    "agent/bashOutput": BashOutputNotification,
    "agent/bashEnd": BashEndNotification,
    "agent/branch": BranchNotification,
    "agent/mcpStatus": McpServerInfo,
}
"""Every server -> client notification."""

SERVER_REQUESTS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "agent/requestPermission": (RequestPermissionParams, RequestPermissionResult),
    "agent/saveDocuments": (SaveDocumentsParams, SaveDocumentsResult),
    "agent/getDiagnostics": (GetDiagnosticsParams, GetDiagnosticsResult),
    "agent/reviewEdit": (ReviewEditParams, ReviewEditResult),
}
"""Requests the server sends to the client (only when the client advertised them)."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every params, result and notification, as kept in ``protocol.schema.json``."""
    methods: dict[str, Any] = {}
    for method, (params, result) in REQUESTS.items():
        methods[method] = {
            "params": params.model_json_schema(by_alias=True, mode="validation"),
            "result": result.model_json_schema(by_alias=True, mode="serialization"),
        }
    notifications = {
        method: model.model_json_schema(by_alias=True, mode="serialization")
        for method, model in NOTIFICATIONS.items()
    }
    server_requests = {
        method: {
            "params": params.model_json_schema(by_alias=True, mode="serialization"),
            "result": result.model_json_schema(by_alias=True, mode="validation"),
        }
        for method, (params, result) in SERVER_REQUESTS.items()
    }
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "initializationOptions": InitializationOptions.model_json_schema(by_alias=True),
        "requests": methods,
        "notifications": notifications,
        "serverRequests": server_requests,
    }


def write_json_schema(path: str) -> None:
    """Write :func:`json_schema` to ``path`` (``python -m agentls.protocol_methods protocol.schema.json``)."""
    import json
    from pathlib import Path

    Path(path).write_text(json.dumps(json_schema(), indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import sys

    write_json_schema(sys.argv[1] if len(sys.argv) > 1 else "protocol.schema.json")
