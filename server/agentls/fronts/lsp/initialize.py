"""The client's ``initialize``: what the server reads of it, and the result it answers.

One parse serves the boot (:mod:`agentls.fronts.lsp.boot`, which answers ``initialize``
before the rest of the server is imported) and the server's own ``initialize`` handler, so
that both accept and refuse the same messages and the answer is the one
:func:`initialize_result` builds either way. Standard library, pydantic and
:mod:`agentls.protocol` only: the boot imports this before anything heavy.

The fields the server keeps are checked strictly (a wrong type is ``-32602``, naming the
field): ``processId``, ``rootUri``, ``rootPath``, ``workspaceFolders``,
``initializationOptions``, ``capabilities`` (an object),
``capabilities.general.positionEncodings`` and ``capabilities.experimental.agent``. The
LSP capabilities it reads besides (:class:`ClientCapabilities`) are read leniently: an
ill-typed one counts as absent, with a warning, as a client's other capabilities are of no
concern to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agentls import __version__
from agentls.json_depth import is_integer
from agentls.protocol import PROTOCOL_VERSION, InitializationOptions
from agentls.protocol_methods import REQUESTS, ClientAgentCapabilities

SERVER_FEATURES = [
    "sessions",
    "persistence",
    "queue",
    "deltaEvents",
    "faux",
    "permissions",
    "toolProgress",
    "editorWorkspace",
    "compaction",
]
"""``capabilities.experimental.agent.features`` of the ``initialize`` result."""

POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")
"""The position encodings the server can count in; it takes the first of the client's it knows."""

TEXT_DOCUMENT_SYNC_INCREMENTAL = 2


@dataclass(frozen=True)
class ClientCapabilities:
    """The LSP client capabilities the server acts on."""

    apply_edit: bool = False
    """``workspace.applyEdit``."""
    document_changes: bool = False
    """``workspace.workspaceEdit.documentChanges``."""
    resource_operations: frozenset[str] = frozenset()
    """``workspace.workspaceEdit.resourceOperations``: ``create``, ``rename``, ``delete``."""
    work_done_progress: bool = False
    """``window.workDoneProgress``: tool runs are shown as ``$/progress``."""


@dataclass(frozen=True)
class Initialize:
    """A usable ``initialize`` request's params, read."""

    options: InitializationOptions
    client_agent: ClientAgentCapabilities
    capabilities: ClientCapabilities
    position_encoding: str
    result: dict[str, Any]
    """The ``initialize`` result for this client."""
    warnings: list[str]
    """The capabilities taken as absent, for the server to log (the boot reads before logging is set up)."""


class InitializeRefused(ValueError):
    """The params of an ``initialize`` the server cannot accept; ``problems`` name the fields."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_initialize(params: Any) -> Initialize:
    """``initialize``'s params, checked as the module doc says; :class:`InitializeRefused` if unusable."""
    if params is None or params == []:
        params = {}
    if not isinstance(params, dict):
        raise InitializeRefused(["params: must be an object"])
    problems = _field_problems(params)
    if problems:
        raise InitializeRefused(problems)
    capabilities = params["capabilities"]
    try:
        options = InitializationOptions.model_validate(params.get("initializationOptions") or {})
    except ValidationError as error:
        raise InitializeRefused(validation_problems(error, ("initializationOptions",))) from None
    experimental = capabilities.get("experimental")
    agent = experimental.get("agent") if isinstance(experimental, dict) else None
    try:
        client_agent = ClientAgentCapabilities.model_validate(agent if isinstance(agent, dict) else {})
    except ValidationError as error:
        where = ("capabilities", "experimental", "agent")
        raise InitializeRefused(validation_problems(error, where)) from None
    encoding = _position_encoding(capabilities)
    reader = _LenientReader()
    return Initialize(
        options=options,
        client_agent=client_agent,
        capabilities=reader.client_capabilities(capabilities),
        position_encoding=encoding,
        result=initialize_result(capabilities, encoding),
        warnings=reader.warnings,
    )


def validation_problems(error: ValidationError, within: tuple[str, ...] = ()) -> list[str]:
    """One ``field.path: message`` per problem pydantic found."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in (*within, *item["loc"])) or "params"
        problems.append(f"{where}: {item['msg']}")
    return problems


def agent_capabilities() -> dict[str, Any]:
    """``capabilities.experimental.agent``: what a client needs to know about agentls's protocol."""
    return {"version": PROTOCOL_VERSION, "features": SERVER_FEATURES, "methods": sorted(REQUESTS)}


def initialize_result(capabilities: dict[str, Any], encoding: str) -> dict[str, Any]:
    """The ``initialize`` result: incremental text synchronisation, workspace folders, agentls's protocol."""
    return {
        "capabilities": {
            "positionEncoding": encoding,
            "textDocumentSync": _text_document_sync(capabilities),
            "executeCommandProvider": {"commands": []},
            "workspace": {
                "workspaceFolders": {"supported": True, "changeNotifications": True},
                "fileOperations": {},
            },
            "experimental": {"agent": agent_capabilities()},
        },
        "serverInfo": {"name": "agentls", "version": __version__},
    }


def _text_document_sync(capabilities: dict[str, Any]) -> dict[str, Any]:
    """Incremental changes; ``willSave`` / ``willSaveWaitUntil`` false where the client states them."""
    text_document = capabilities.get("textDocument")
    stated = text_document.get("synchronization") if isinstance(text_document, dict) else None
    stated = stated if isinstance(stated, dict) else {}
    will_save = {key: False for key in ("willSave", "willSaveWaitUntil") if isinstance(stated.get(key), bool)}
    return {"openClose": True, "change": TEXT_DOCUMENT_SYNC_INCREMENTAL, **will_save, "save": False}


def _position_encoding(capabilities: dict[str, Any]) -> str:
    general = capabilities.get("general")
    for encoding in (general.get("positionEncodings") if isinstance(general, dict) else None) or ():
        if encoding in POSITION_ENCODINGS:
            return str(encoding)
    return "utf-16"


class _LenientReader:
    """Reads the capabilities of :class:`ClientCapabilities`, noting each ill-typed one it takes as absent."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def client_capabilities(self, capabilities: dict[str, Any]) -> ClientCapabilities:
        workspace = self._object(capabilities, "workspace")
        edit = self._object(workspace, "workspaceEdit", "workspace.")
        operations = edit.get("resourceOperations")
        if not _strings(operations):
            if operations is not None:
                self._ignored("workspace.workspaceEdit.resourceOperations", "a list of strings")
            operations = []
        window = self._object(capabilities, "window")
        return ClientCapabilities(
            apply_edit=self._flag(workspace, "applyEdit", "workspace."),
            document_changes=self._flag(edit, "documentChanges", "workspace.workspaceEdit."),
            resource_operations=frozenset(operations),
            work_done_progress=self._flag(window, "workDoneProgress", "window."),
        )

    def _object(self, value: dict[str, Any], key: str, within: str = "") -> dict[str, Any]:
        found = value.get(key)
        if isinstance(found, dict):
            return found
        if found is not None:
            self._ignored(within + key, "an object")
        return {}

    def _flag(self, value: dict[str, Any], key: str, within: str) -> bool:
        found = value.get(key)
        if found is not None and not isinstance(found, bool):
            self._ignored(within + key, "a boolean")
            return False
        return bool(found)

    def _ignored(self, name: str, kind: str) -> None:
        self.warnings.append(
            f"initialize: capabilities.{name} is not {kind}: the capability is taken as absent"
        )


def _field_problems(params: dict[str, Any]) -> list[str]:
    """The kept fields (module doc) that do not have the types LSP gives them."""
    problems = []
    capabilities = params.get("capabilities")
    if not isinstance(capabilities, dict):
        problems.append("capabilities: must be an object")
        capabilities = {}
    process_id = params.get("processId")
    if not (process_id is None or is_integer(process_id)):
        problems.append("processId: must be an integer or null")
    problems += [
        f"{key}: must be a string or null" for key in ("rootUri", "rootPath") if not _text(params, key)
    ]
    folders = params.get("workspaceFolders")
    if not (folders is None or (isinstance(folders, list) and all(map(_is_folder, folders)))):
        problems.append("workspaceFolders: must be a list of {uri, name} or null")
    general = capabilities.get("general")
    encodings = general.get("positionEncodings") if isinstance(general, dict) else None
    if not (encodings is None or _strings(encodings)):
        problems.append("capabilities.general.positionEncodings: must be a list of strings")
    if not isinstance(params.get("initializationOptions"), dict | None):
        problems.append("initializationOptions: must be an object")
    return problems


def _text(params: dict[str, Any], key: str) -> bool:
    return isinstance(params.get(key), str | None)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_folder(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("uri"), str) and isinstance(value.get("name"), str)
    )
