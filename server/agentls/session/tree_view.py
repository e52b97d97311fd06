"""``agent/getTree``: a session's tree as clients show it, its conversation entries only.

Settings changes, labels and markers are entries of the tree too, but no one picks
them: each shown entry's parent is the nearest shown entry above it.
"""

from __future__ import annotations

from pathlib import Path

from agentls.ai.types import AgentMessage, AssistantMessage, ToolCall, ToolResultMessage
from agentls.protocol import TreeBranch, TreeEntry, TreeResult
from agentls.session.compaction.serialize import content_text
from agentls.session.file_changes import FileChanges
from agentls.session.rewind import display
from agentls.session.tree import FILE_CHANGES, SessionTree
from agentls.tools.catalogue import call_argument, one_line

PREVIEW_LENGTH = 120
_SHOWN = {"message": "message", "compaction": "compaction", "branch_summary": "branchSummary"}


def _preview_line(text: str) -> str:
    """``text`` as a preview: on one line, at most :data:`PREVIEW_LENGTH` characters."""
    return one_line(text, PREVIEW_LENGTH, rstrip=True)


def preview(message: AgentMessage) -> str:
    """One line saying what a message is."""
    if isinstance(message, AssistantMessage):
        text = content_text([block for block in message.content if block.type == "text"])  # type: ignore[arg-type]
        calls = [
            f"→ {b.name}({call_argument(b.arguments)})" for b in message.content if isinstance(b, ToolCall)
        ]
        return _preview_line(" ".join(part for part in (text, *calls) if part)) or "(no text)"
    role = message.role
    summary = getattr(message, "summary", None)
    if role == "branchSummary" and isinstance(summary, str):
        lines = [line for line in summary.splitlines()[2:] if line.strip() and not line.startswith("#")]
        return _preview_line("Branch summary: " + (lines[0] if lines else ""))
    if role == "compactionSummary" and isinstance(summary, str):
        return _preview_line("Compaction: " + summary)
    if role == "bashExecution":
        return _preview_line("$ " + str(getattr(message, "command", "")))
    content = getattr(message, "content", "")
    text = content_text(content) if isinstance(content, str | list) else ""
    if role == "toolResult":
        return _preview_line(f"{getattr(message, 'tool_name', 'tool')}: {text}")
    return _preview_line(text) or f"({role})"


def shown_leaf(tree: SessionTree) -> str | None:
    """The shown entry at the tree's leaf (the nearest one above a marker or a settings change)."""
    for node in reversed(tree.branch()):
        if node.type in _SHOWN:
            return node.id
    return None


def tree_view(tree: SessionTree, root: Path) -> TreeResult:
    """Every shown entry with its shown parent, in file order; the tips as branches."""
    nearest: dict[str, str | None] = {}
    """For every entry, itself if shown, else the nearest shown entry above it."""
    files: dict[str, list[str]] = {}
    """By tool call, the files its file-change entries name (written before the call's file writes, so
    the entries of parallel calls come in any order before their tool results)."""
    entries: list[TreeEntry] = []
    has_children: set[str] = set()
    labels = tree.labels()
    on_branch = {node.id for node in tree.branch()}
    for node in tree:
        parent = nearest.get(node.parent_id) if node.parent_id is not None else None
        if node.custom_type == FILE_CHANGES and isinstance(node.data, FileChanges):
            named = files.setdefault(node.data.tool_call_id, [])
            named += [shown for c in node.data.changes if (shown := display(root, c.path)) not in named]
        if node.type not in _SHOWN or node.message is None:
            nearest[node.id] = parent
            continue
        nearest[node.id] = node.id
        if parent is not None:
            has_children.add(parent)
        result = node.message if isinstance(node.message, ToolResultMessage) else None
        changed = files.get(result.tool_call_id) if result is not None else None
        entries.append(
            TreeEntry(
                id=node.id,
                parent_id=parent,
                type=_SHOWN[node.type],  # type: ignore[arg-type]
                role=node.message.role,
                preview=preview(node.message),
                timestamp=node.timestamp,
                label=labels.get(node.id),
                on_branch=node.id in on_branch,
                files=changed,
            )
        )
    leaf = shown_leaf(tree)
    by_id = {entry.id: entry for entry in entries}
    tips = [entry.id for entry in entries if entry.id not in has_children]
    if leaf is not None and leaf not in tips:
        tips.append(leaf)
    branches = [_branch(tip, by_id, leaf) for tip in tips]
    return TreeResult(leaf_id=leaf, entries=entries, branches=branches)


def _branch(tip: str, by_id: dict[str, TreeEntry], leaf: str | None) -> TreeBranch:
    """A branch, named by its last prompt (the tip's own preview when it has none)."""
    entry = by_id[tip]
    count, prompt, current = 0, None, by_id.get(tip)
    while current is not None:
        count += 1
        if prompt is None and current.role == "user":
            prompt = current.preview
        current = by_id.get(current.parent_id) if current.parent_id is not None else None
    return TreeBranch(
        leaf_id=tip,
        preview=prompt or entry.preview,
        timestamp=entry.timestamp,
        message_count=count,
        current=tip == leaf,
    )
