"""The entries of a session file as typed models, one per ``type`` (Pi's ``SessionEntry`` union).

Every line after the header is one entry: ``{"type", "id", "parentId", "timestamp", ...}``
and the fields of its type (the list is in :mod:`agentls.session.history.store`). :func:`read_entry`
validates a line's JSON as the member of :data:`SessionEntry` its ``type`` names, and says in
one line what is wrong with a damaged one; :meth:`Entry.to_node` makes the entry the
:class:`~agentls.session.history.tree.Node` the session's tree holds.

An entry is checked against the entries before it as well: its id must be new, and a
compaction's ``firstKeptEntryId`` must name a message entry on its path (the validation
context is the tree read so far).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, TypeAlias, TypeGuard, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError

from agentls.ai.types import AssistantMessage, CustomMessage, ToolResultMessage, Usage, UserMessage
from agentls.session.history.checkpoints import WorkspaceChanges
from agentls.session.history.file_changes import parse_file_changes
from agentls.session.history.session_lines import brief
from agentls.session.history.transcript import BranchSummary, Compaction
from agentls.session.history.tree import FILE_CHANGES, WORKSPACE_CHANGES, Node, SessionTree
from agentls.session.messages import branch_summary_message, compaction_summary_message

__all__ = [
    "ENTRY_TYPES",
    "MAX_TIMESTAMP",
    "BranchSummaryEntry",
    "CompactionEntry",
    "CustomEntry",
    "Entry",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "SessionEntry",
    "SessionInfoEntry",
    "SystemPromptChangeEntry",
    "ThinkingLevelChangeEntry",
    "damaged_fields",
    "is_timestamp",
    "message_envelope",
    "one_line",
    "parent_in",
    "plain_custom_node",
    "read_entry",
]

MAX_TIMESTAMP = 253_402_300_799_999
"""The last millisecond of the year 9999: later timestamps (and negative ones) are damage."""

Text: TypeAlias = Annotated[str, Strict()]
Count: TypeAlias = Annotated[int, Strict(), Field(ge=0)]
"""A non-negative integer (not a boolean), as token counts are."""
Timestamp: TypeAlias = Annotated[float, Strict(), Field(ge=0, le=MAX_TIMESTAMP)]
"""Milliseconds since 1970 (an integer or a float, not a boolean), up to the year 9999."""


_TIMESTAMP: TypeAdapter[float] = TypeAdapter(Timestamp)


def is_timestamp(value: Any) -> bool:
    """Whether ``value`` is a :data:`Timestamp` (the year 9999 at most keeps it exact in JavaScript too)."""
    try:
        _TIMESTAMP.validate_python(value)
    except ValidationError:
        return False
    return True


def parent_in(parent_id: Any, tree: SessionTree) -> str | None:
    """An entry's parent: the one it names, or the entry before it when that one is not in the file.

    A damaged or truncated line takes its entry out of the tree; the entries below it
    then hang from the entry before it, so the conversation stays in one piece.
    """
    if parent_id is None:
        return None
    return parent_id if isinstance(parent_id, str) and parent_id in tree else tree.leaf_id


def _message_role(value: Any) -> str | None:
    """The tag of a stored message: its ``role``, ``custom`` for any other string (as ``parse_message``)."""
    role = value.get("role") if isinstance(value, dict) else None
    if not isinstance(role, str):
        return None
    return role if role in ("user", "assistant", "toolResult") else "custom"


StoredMessage: TypeAlias = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[CustomMessage, Tag("custom")],
    Discriminator(_message_role),
]


class SummaryDetails(BaseModel):
    """A summary entry's ``details``: the files the summarised conversation read and changed."""

    model_config = ConfigDict(alias_generator=to_camel, frozen=True)

    read_files: list[Text] = []
    modified_files: list[Text] = []


def _no_details(value: Any) -> Any:
    return value or {}  # null, {} (and any other falsy value) are no details


Details: TypeAlias = Annotated[SummaryDetails, BeforeValidator(_no_details)]


def _damage(text: str) -> PydanticCustomError:
    """A validation error whose message is ``text`` as it is (no template, no prefix)."""
    return PydanticCustomError("session_entry", "{text}", {"text": text})


class Entry(BaseModel):
    """What every entry has: an id, its parent's id, a time, and what its type adds."""

    model_config = ConfigDict(alias_generator=to_camel, frozen=True)

    type: str
    id: Annotated[str, Strict(), Field(min_length=1)]
    parent_id: Any = None
    """Any value: one that names no earlier entry means the entry before it (:func:`parent_in`)."""
    timestamp: Timestamp

    reasons: ClassVar[dict[str, str]] = {}
    """What a damaged field (by its wire name) makes the warning say; ``{error}`` is pydantic's."""

    def to_node(self, parent_id: str | None) -> Node:
        return Node(self.id, parent_id, self.type, int(self.timestamp), **self._node_fields())

    def _node_fields(self) -> dict[str, Any]:
        """What the entry puts in its :class:`Node` besides id, parent, type and time."""
        return {}


class MessageEntry(Entry):
    type: Literal["message"]
    message: StoredMessage

    reasons: ClassVar[dict[str, str]] = {"message": "the message does not parse: {error}"}

    def _node_fields(self) -> dict[str, Any]:
        return {"message": self.message}


_NO_DETAILS = SummaryDetails()
_BAD_DETAILS = "whose details are not {{readFiles?: [string], modifiedFiles?: [string]}}"


class CompactionEntry(Entry):
    """Pi's ``CompactionEntry``: the messages before ``firstKeptEntryId`` are, for the model, ``summary``.

    ``firstKeptEntryId`` must name a message entry on the path to it: a compaction that
    kept nothing it can name would hide the whole conversation before it, so it is
    skipped instead, and the model sees that conversation in full.
    """

    type: Literal["compaction"]
    summary: Text
    tokens_before: Count
    first_kept_entry_id: Any = Field(default=None, validate_default=True)
    details: Details = _NO_DETAILS
    usage: Usage | None = None

    reasons: ClassVar[dict[str, str]] = {
        "summary": "compaction entry without a string summary and a token count tokensBefore",
        "tokensBefore": "compaction entry without a string summary and a token count tokensBefore",
        "firstKeptEntryId": "compaction entry whose firstKeptEntryId {error}",
        "details": f"compaction entry {_BAD_DETAILS}",
        "usage": "compaction entry whose usage does not parse: {error}",
    }

    @field_validator("first_kept_entry_id")
    @classmethod
    def _kept_before(cls, kept: Any, info: ValidationInfo) -> str:
        tree: SessionTree = info.context
        above = tree.path(parent_in(info.data.get("parent_id"), tree))
        if not any(node.id == kept and node.type == "message" for node in above):
            raise _damage(f"{brief(kept)} names no message entry before it")
        return kept  # type: ignore[no-any-return]

    def _node_fields(self) -> dict[str, Any]:
        details = self.details
        return {
            "message": compaction_summary_message(self.summary, self.tokens_before, int(self.timestamp)),
            "compaction": Compaction(
                self.first_kept_entry_id, tuple(details.read_files), tuple(details.modified_files), self.usage
            ),
        }


class BranchSummaryEntry(Entry):
    """Pi's ``branch_summary``: what the branch left at ``fromId`` did, for the branch taken."""

    type: Literal["branch_summary"]
    summary: Text
    from_id: Text
    details: Details = _NO_DETAILS
    usage: Usage | None = None

    reasons: ClassVar[dict[str, str]] = {
        "summary": "branch_summary entry without a string summary and fromId",
        "fromId": "branch_summary entry without a string summary and fromId",
        "details": f"branch_summary entry {_BAD_DETAILS}",
        "usage": "branch_summary entry whose usage does not parse: {error}",
    }

    def _node_fields(self) -> dict[str, Any]:
        details = self.details
        return {
            "message": branch_summary_message(self.summary, self.from_id, int(self.timestamp)),
            "data": BranchSummary(tuple(details.read_files), tuple(details.modified_files), self.usage),
        }


class CustomEntry(Entry):
    """Pi's ``custom`` entry (no part of the context); agentls's own are read into their types."""

    type: Literal["custom"]
    custom_type: Text
    data: Any = Field(default=None, validate_default=True)

    reasons: ClassVar[dict[str, str]] = {
        "customType": "custom entry without a string customType",
        "data": "{error}",
    }

    @field_validator("data")
    @classmethod
    def _known_data(cls, data: Any, info: ValidationInfo) -> Any:
        custom_type = info.data.get("custom_type")
        if custom_type not in (FILE_CHANGES, WORKSPACE_CHANGES):
            return data
        try:
            return parse_file_changes(data) if custom_type == FILE_CHANGES else WorkspaceChanges.parse(data)
        except ValueError as error:
            raise _damage(str(error)) from None

    def _node_fields(self) -> dict[str, Any]:
        return {"custom_type": self.custom_type, "data": self.data}


class LabelEntry(Entry):
    """Pi's ``label``: a bookmark on ``targetId`` (``null`` clears it)."""

    type: Literal["label"]
    target_id: Text
    label: Text | None = None

    reasons: ClassVar[dict[str, str]] = dict.fromkeys(
        ("targetId", "label"), "label entry without a string targetId and a string or null label"
    )

    def _node_fields(self) -> dict[str, Any]:
        return {"data": {"targetId": self.target_id, "label": self.label}}


class ModelChangeEntry(Entry):
    type: Literal["model_change"]
    provider: Text
    model_id: Text

    reasons: ClassVar[dict[str, str]] = dict.fromkeys(
        ("provider", "modelId"), "model_change without string provider and modelId"
    )

    def _node_fields(self) -> dict[str, Any]:
        return {"data": (self.provider, self.model_id)}


class ThinkingLevelChangeEntry(Entry):
    type: Literal["thinking_level_change"]
    thinking_level: Text

    reasons: ClassVar[dict[str, str]] = {
        "thinkingLevel": "thinking_level_change without a string thinkingLevel"
    }

    def _node_fields(self) -> dict[str, Any]:
        return {"data": self.thinking_level}


class SystemPromptChangeEntry(Entry):
    type: Literal["system_prompt_change"]
    system_prompt: Text

    reasons: ClassVar[dict[str, str]] = {"systemPrompt": "system_prompt_change without a string systemPrompt"}

    def _node_fields(self) -> dict[str, Any]:
        return {"data": self.system_prompt}


class SessionInfoEntry(Entry):
    """Pi's ``session_info``: the session's display name (``null`` or blank: none)."""

    type: Literal["session_info"]
    name: Text | None = None

    reasons: ClassVar[dict[str, str]] = {"name": "session_info whose name is not a string"}

    @property
    def display_name(self) -> str | None:
        return (self.name or "").strip() or None


SessionEntry: TypeAlias = (
    MessageEntry
    | BranchSummaryEntry
    | CustomEntry
    | LabelEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | SystemPromptChangeEntry
    | CompactionEntry
    | SessionInfoEntry
)

_ENTRY_CLASSES: dict[str, type[SessionEntry]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls for cls in get_args(SessionEntry)
}
"""Each entry class by its ``type``: validating with the class its ``type`` names is the union
discriminated by ``type``, and a third faster than a ``TypeAdapter`` over that union (21 ms against
32 ms for 2,000 message entries)."""
ENTRY_TYPES: tuple[str, ...] = tuple(_ENTRY_CLASSES)


def message_envelope(data: Any, tree: SessionTree) -> tuple[str, Any, float, dict[str, Any]] | None:
    """A message entry's id, ``parentId``, timestamp and message, where :func:`read_entry` could refuse
    it only for its message: its id new, its time in range, its message an object with a string
    ``role`` (the tag of :data:`StoredMessage`). ``None`` for anything else (:func:`read_entry` says)."""
    if type(data) is not dict or data.get("type") != "message":
        return None
    entry_id, timestamp, message = data.get("id"), data.get("timestamp"), data.get("message")
    if _next_entry(entry_id, timestamp, tree) and type(message) is dict and type(message.get("role")) is str:
        return entry_id, data.get("parentId"), timestamp, message
    return None


def plain_custom_node(data: Any, tree: SessionTree) -> Node | None:
    """The node :func:`read_entry` makes of a ``custom`` entry whose data it takes as it is (any
    ``customType`` but :data:`FILE_CHANGES` and :data:`WORKSPACE_CHANGES`), made without validating
    a model: one starts every run, and a listing reads every run of every session. ``None`` for
    anything else (:func:`read_entry` reads it)."""
    if type(data) is not dict or data.get("type") != "custom":
        return None
    entry_id, timestamp, custom_type = data.get("id"), data.get("timestamp"), data.get("customType")
    if (
        _next_entry(entry_id, timestamp, tree)
        and type(custom_type) is str
        and custom_type not in (FILE_CHANGES, WORKSPACE_CHANGES)
    ):
        parent_id = parent_in(data.get("parentId"), tree)
        custom_data = data.get("data")
        return Node(entry_id, parent_id, "custom", int(timestamp), custom_type=custom_type, data=custom_data)
    return None


def _next_entry(entry_id: Any, timestamp: Any, tree: SessionTree) -> TypeGuard[str]:
    """Whether an entry's ``id`` and ``timestamp`` are valid for one read after ``tree``'s entries."""
    return (
        type(entry_id) is str
        and entry_id != ""
        and entry_id not in tree
        and type(timestamp) in _NUMBER
        and 0 <= timestamp <= MAX_TIMESTAMP
    )


_NUMBER = (int, float)
"""What a :data:`Timestamp` may be (``type`` is: a boolean is neither)."""


def read_entry(data: Any, tree: SessionTree) -> SessionEntry:
    """The entry ``data`` (a line's JSON) is, after the entries of ``tree``; ``ValueError`` saying
    in one line what is wrong with a damaged one."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    entry_type = data.get("type")
    if not isinstance(entry_type, str) or entry_type not in _ENTRY_CLASSES:
        raise ValueError(f"unknown entry type {brief(entry_type)}")
    cls = _ENTRY_CLASSES[entry_type]
    try:
        entry = cls.model_validate(data, context=tree)
    except ValidationError as error:
        raise ValueError(_what_is_wrong(cls, data, error.errors(), tree)) from None
    except Exception as error:  # anything odd from a validator of a message: a skipped line, never a crash
        raise ValueError(f"{entry_type} entry does not parse: {_shorten(str(error))}") from None
    if entry.id in tree:
        raise ValueError(_duplicate(entry_type, entry.id))
    return entry


def _what_is_wrong(
    cls: type[SessionEntry], data: dict[str, Any], errors: list[ErrorDetails], tree: SessionTree
) -> str:
    """The warning of a damaged entry: its id first, then whether the id is new, its time, its fields."""
    entry_type = data["type"]
    by_field = damaged_fields(errors)
    if "id" in by_field:
        return f"{entry_type} entry without a string id"
    if data["id"] in tree:
        return _duplicate(entry_type, data["id"])
    if "timestamp" in by_field:
        timestamp = brief(data.get("timestamp"))
        return f"{entry_type} entry whose timestamp {timestamp} is not a time in milliseconds"
    name, field_errors = next(iter(by_field.items()))
    return cls.reasons.get(name, f"{entry_type} entry whose {name} {{error}}").format(
        error=one_line(field_errors)
    )


def damaged_fields(errors: list[ErrorDetails]) -> dict[str, list[ErrorDetails]]:
    """Pydantic's errors by the wire name of the field they are in, the fields in their order (so the
    first damaged field comes first; a validated default has its Python name in ``loc``)."""
    by_field: dict[str, list[ErrorDetails]] = {}
    for error in errors:
        by_field.setdefault(to_camel(str(error["loc"][0])) if error["loc"] else "", []).append(error)
    return by_field


def _duplicate(entry_type: str, entry_id: str) -> str:
    return f"{entry_type} entry whose id {brief(entry_id)} an earlier entry has"


def one_line(errors: list[ErrorDetails]) -> str:
    """Pydantic's errors of one field on one line, each with where below the field it is."""
    parts = []
    for error in errors:
        where = ".".join(str(part) for part in error["loc"][1:])
        parts.append(f"{where}: {error['msg']}" if where else error["msg"])
    return _shorten("; ".join(parts))


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:299] + "…"
