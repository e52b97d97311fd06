"""A session's checkpoints: snapshots of its folder, and the file changes its entries record.

Two kinds of record say what changed a file: ``agentls/fileChanges`` entries (each
``write``/``edit``, before it writes: :mod:`agentls.session.history.file_changes`), and
``agentls/workspaceChanges`` entries, a pair of snapshots of the whole folder around what
else can change it (a tool batch running ``bash``, an MCP tool or another tool; the user's
``!cmd``). :meth:`Checkpoints.steps` turns a stretch of entries into one list of
:class:`Step` (a path, before and after, who), in the order they happened, which rewinds,
``agent/getChanges`` and ``agent/revertChanges`` all read.

Snapshots live in the folder's shadow repository (:mod:`agentls.session.history.shadow_repo`).
When it cannot be made or read (no git, too many files, too slow) the session says so once
and goes on with the ``write``/``edit`` records alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentls.ai import AssistantMessage
from agentls.protocol import CheckpointSettings, CheckpointState
from agentls.session.history.file_changes import FileChange, FileChanges, Snapshot
from agentls.session.history.shadow_repo import Bounds, ShadowRepo, SnapshotUnavailable
from agentls.session.history.tree import FILE_CHANGES, WORKSPACE_CHANGES, Node
from agentls.tools.mcp_names import server_of

logger = logging.getLogger(__name__)

FILE_TOOLS = frozenset({"read", "write", "edit", "ls", "find", "grep", "diagnostics"})
"""Tools whose changes the ``fileChanges`` records hold (or that change nothing): no snapshot for them."""
SYMLINK_MODE = 0o120000
EXECUTABLE_MODE = 0o100755


def actor(tool_name: str) -> str:
    """Who a tool call is, in ``agent/getChanges``'s ``by``."""
    if tool_name in ("write", "edit", "bash"):
        return tool_name
    return "mcp" if server_of(tool_name) is not None else "tool"


@dataclass(frozen=True)
class WorkspaceChanges:
    """The data of an ``agentls/workspaceChanges`` entry: two snapshots and who ran in between."""

    before: str
    after: str
    by: tuple[str, ...]
    tool_call_ids: tuple[str, ...] = ()
    bash_id: str | None = None

    def wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"before": self.before, "after": self.after, "by": list(self.by)}
        if self.tool_call_ids:
            wire["toolCallIds"] = list(self.tool_call_ids)
        if self.bash_id is not None:
            wire["bashId"] = self.bash_id
        return wire

    @classmethod
    def parse(cls, data: Any) -> WorkspaceChanges:
        """Read back; ``ValueError`` saying what is wrong."""
        if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("before", "after")):
            raise ValueError("agentls/workspaceChanges entry without string before and after trees")
        by, ids, bash_id = data.get("by", []), data.get("toolCallIds", []), data.get("bashId")
        if not isinstance(by, list) or not isinstance(ids, list):
            raise ValueError("agentls/workspaceChanges entry whose by or toolCallIds is not a list")
        return cls(
            data["before"],
            data["after"],
            tuple(str(item) for item in by),
            tuple(str(item) for item in ids),
            bash_id if isinstance(bash_id, str) else None,
        )


@dataclass(frozen=True)
class Step:
    """One file changed by one action (or one snapshot pair), and who made the change."""

    change: FileChange
    by: tuple[str, ...]


def tool_names(nodes: Iterable[Node]) -> dict[str, str]:
    """The tool name of each tool call the assistant messages among ``nodes`` made."""
    names = {}
    for node in nodes:
        if isinstance(node.message, AssistantMessage):
            for block in node.message.content:
                if getattr(block, "type", None) == "toolCall":
                    names[block.id] = block.name  # type: ignore[union-attr]
    return names


class Checkpoints:
    """The snapshots of one session's folder: taking them, and reading them back as steps."""

    def __init__(
        self, repo: ShadowRepo | None, state: Literal["on", "off", "unavailable"], reason: str | None
    ):
        self.repo = repo
        self.state: Literal["on", "off", "unavailable"] = state
        self.reason = reason
        self._diffs: dict[tuple[str, str], list[Step]] = {}

    @classmethod
    def of(
        cls, data_dir: Path, cwd: str, settings: CheckpointSettings, protected: Sequence[Path]
    ) -> Checkpoints:
        """The checkpoints of a session in ``cwd``: its folder's shadow repository under ``data_dir``."""
        root = Path(cwd)
        name = hashlib.sha256(str(root).encode("utf-8", errors="surrogateescape")).hexdigest()[:20]
        exclude = [*settings.exclude, ".*.agentls-*.tmp"]
        for folder in protected:  # the data folder, when it is inside the session's
            with contextlib.suppress(ValueError):
                exclude.append(f"/{folder.relative_to(root).as_posix()}/")
        bounds = Bounds(settings.max_file_bytes, settings.max_files, settings.max_store_bytes)
        repo = ShadowRepo(data_dir / "checkpoints" / name / "git", root, exclude=exclude, bounds=bounds)
        if not settings.enabled:
            return cls(repo, "off", None)
        return cls(repo, "on", None)

    def wire_state(self) -> CheckpointState:
        return CheckpointState(state=self.state, reason=self.reason)

    async def snapshot(self) -> str | None:
        """A snapshot of the folder now (``None`` when checkpoints are off or unavailable)."""
        if self.state != "on" or self.repo is None:
            return None
        try:
            return await asyncio.to_thread(self.repo.snapshot)
        except (SnapshotUnavailable, OSError) as error:
            self.state, self.reason = "unavailable", str(error)
            logger.warning(
                "checkpoints of %s are unavailable (%s): rewinds put back what write and edit changed only",
                self.repo.work_tree,
                error,
            )
            return None

    # --- reading back --------------------------------------------------------------------

    async def steps(self, nodes: Sequence[Node], names: dict[str, str]) -> list[Step]:
        """The file changes that ``nodes`` record, in order (``names``: tool names by call id).

        A ``write``/``edit`` inside a snapshot pair is part of the pair's diff (the pair brackets
        its whole batch), so its own record only adds its name to ``by``.
        """
        pairs = [
            n.data
            for n in nodes
            if n.custom_type == WORKSPACE_CHANGES and isinstance(n.data, WorkspaceChanges)
        ]
        inside = {call_id for pair in pairs for call_id in pair.tool_call_ids}
        named: dict[str, set[str]] = {}  # path -> the write/edit calls of a pair's batch that wrote it
        steps: list[Step] = []
        for node in nodes:
            data = node.data
            if node.custom_type == FILE_CHANGES and isinstance(data, FileChanges):
                who = data.by or actor(names.get(data.tool_call_id, "write"))
                if data.tool_call_id in inside:
                    for change in data.changes:
                        named.setdefault(change.path, set()).add(who)
                    continue
                steps.extend(Step(change, (who,)) for change in data.changes)
            elif node.custom_type == WORKSPACE_CHANGES and isinstance(data, WorkspaceChanges):
                for step in await self._pair(data):
                    extra = tuple(sorted(named.get(step.change.path, ())))
                    steps.append(dataclasses.replace(step, by=(*extra, *data.by)) if extra else step)
        return steps

    async def _pair(self, pair: WorkspaceChanges) -> list[Step]:
        key = (pair.before, pair.after)
        if key not in self._diffs:
            if self.repo is None:
                return []
            try:
                changes = await asyncio.to_thread(self.repo.diff, pair.before, pair.after)
            except (SnapshotUnavailable, OSError) as error:
                logger.warning("the snapshots %s..%s cannot be read (%s): left out", *key, error)
                return []
            root = self.repo.work_tree
            self._diffs[key] = [
                Step(
                    FileChange(
                        str(root / change.path),
                        Snapshot.of_blob(change.old_blob, change.old_mode) if change.old_blob else None,
                        Snapshot.of_blob(change.new_blob, change.new_mode) if change.new_blob else None,
                    ),
                    pair.by,
                )
                for change in changes
                if SYMLINK_MODE not in (change.old_mode, change.new_mode)  # links are never restored
            ]
        return self._diffs[key]

    async def read(self, snapshots: Sequence[Snapshot | None]) -> dict[str, Snapshot]:
        """The blobs among ``snapshots`` with their content, by blob id (a pruned one is left out)."""
        wanted = [
            s.blob for s in snapshots if s is not None and s.blob and not s.restorable and s.sha256 is None
        ]
        if not wanted or self.repo is None:
            return {}
        try:
            found = await asyncio.to_thread(self.repo.read_blobs, [blob for blob in wanted if blob])
        except (SnapshotUnavailable, OSError) as error:
            logger.warning("the snapshots' files cannot be read (%s)", error)
            return {}
        read = {}
        for snapshot in snapshots:
            if snapshot is not None and snapshot.blob in found:
                read[snapshot.blob] = snapshot.read_back(found[snapshot.blob])
        return read

    async def filled(self, snapshots: Sequence[Snapshot | None]) -> list[Snapshot | None]:
        """``snapshots`` with the content of each blob read (as far as it still can be)."""
        read = await self.read(snapshots)
        return [read.get(s.blob, s) if s is not None and s.blob else s for s in snapshots]
