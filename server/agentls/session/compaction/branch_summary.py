"""Branch summarisation: Pi 0.85.0's ``compaction/branch-summarization.js``, prompts word for word.

When a session goes back to an earlier point (``agent/rewind``, ``agent/switchBranch``
with ``summarize``), the branch it leaves, from its leaf back to where the two paths
part, is summarised into a ``branchSummary`` message at the new position, so the model
keeps what was learnt there without the whole branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentls.ai.types import AgentMessage, Usage
from agentls.session.compaction.file_ops import FileOperations, format_file_operations
from agentls.session.compaction.summary import Summarizer
from agentls.session.compaction.tokens import estimate_tokens
from agentls.session.history.transcript import BranchSummary
from agentls.session.history.tree import Node

BRANCH_SUMMARY_PREAMBLE = """The user explored a different conversation branch before returning here.
Summary of that exploration:

"""

BRANCH_SUMMARY_PROMPT = """Create a structured summary of this conversation branch for context when returning later.

Use this EXACT format:

## Goal
[What was the user trying to accomplish in this branch?]

## Constraints & Preferences
- [Any constraints, preferences, or requirements mentioned]
- [Or "(none)" if none were mentioned]

## Progress
### Done
- [x] [Completed tasks/changes]

### In Progress
- [ ] [Work that was started but not finished]

### Blocked
- [Issues preventing progress, if any]

## Key Decisions
- **[Decision]**: [Brief rationale]

## Next Steps
1. [What should happen next to continue this work]

Keep each section concise. Preserve exact file paths, function names, and error messages."""  # noqa: E501

RESERVE_TOKENS = 16384
"""Pi's ``branchSummary.reserveTokens`` default: the window less this is the branch's budget."""


@dataclass(frozen=True)
class BranchSummaryResult:
    text: str
    """The summary with Pi's preamble and the file lists appended."""
    info: BranchSummary


def prepare_branch_entries(
    nodes: Sequence[Node], token_budget: int = 0
) -> tuple[list[AgentMessage], FileOperations]:
    """Pi's ``prepareBranchEntries``: the newest messages that fit ``token_budget`` (0: all), and
    the files they and earlier branch summaries touched."""
    files = FileOperations()
    for node in nodes:  # file lists of the summaries on the way, even of those that do not fit
        if node.type == "branch_summary" and isinstance(node.data, BranchSummary):
            files.read.update(node.data.read_files)
            files.edited.update(node.data.modified_files)
    messages: list[AgentMessage] = []
    total = 0
    for node in reversed(nodes):
        message = node.message
        if message is None or message.role == "toolResult":  # a call's context is in the assistant's call
            continue
        files.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if node.type in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.insert(0, message)  # a summary is important context: fit it if almost possible
            break
        messages.insert(0, message)
        total += tokens
    return messages, files


async def summarize_branch(
    nodes: Sequence[Node], summarizer: Summarizer, instructions: str | None = None
) -> BranchSummaryResult:
    """Pi's ``generateBranchSummary`` of the entries left behind (chronological).

    Raises :class:`~agentls.session.compaction.summary.SummaryError` or ``SummaryAborted``.
    """
    window = summarizer.model.context_window or 128000
    messages, files = prepare_branch_entries(nodes, window - RESERVE_TOKENS)
    read, modified = files.file_lists()
    if not messages:
        return BranchSummaryResult("No content to summarize", BranchSummary(tuple(read), tuple(modified)))
    prompt = BRANCH_SUMMARY_PROMPT
    if instructions:
        prompt += f"\n\nAdditional focus: {instructions}"
    summary = await summarizer.summarize_with(messages, prompt, 4096, "Branch summarization")
    text = BRANCH_SUMMARY_PREAMBLE + (summary.text or "No summary generated")
    text += format_file_operations(read, modified)
    usage: Usage | None = summary.usage
    return BranchSummaryResult(text, BranchSummary(tuple(read), tuple(modified), usage))
