"""Compaction: Pi 0.85.0's way of keeping a long session inside the model's context window.

The pure parts (token estimates, the cut point, the summary request, file tracking,
overflow detection) live in their own modules; :class:`Compactor` decides when a session
compacts and applies a compaction to it.
"""

from agentls.session.compaction.compact import CompactionResult, Preparation, compact, prepare_compaction
from agentls.session.compaction.compactor import CompactionFailed, Compactor
from agentls.session.compaction.cut_point import CutPoint, find_cut_point
from agentls.session.compaction.overflow import is_context_overflow, is_recoverable_length
from agentls.session.compaction.summary import Summarizer, SummaryAborted, SummaryError
from agentls.session.compaction.tokens import estimate_context_tokens, estimate_tokens, should_compact

__all__ = [
    "CompactionFailed",
    "CompactionResult",
    "Compactor",
    "CutPoint",
    "Preparation",
    "Summarizer",
    "SummaryAborted",
    "SummaryError",
    "compact",
    "estimate_context_tokens",
    "estimate_tokens",
    "find_cut_point",
    "is_context_overflow",
    "is_recoverable_length",
    "prepare_compaction",
    "should_compact",
]
