"""An agent's change to a buffer, carried over to the file on disk without the user's unsaved text.

When the user has unsaved changes in a buffer the agent edits, saving the buffer would
write the user's text too. Instead the agent's change (the difference between the
buffer before and after it, by lines) is applied to the disk's text: each changed
run of lines, with up to two lines of context on each side, must be found in the disk's
text exactly once, else the change cannot be separated from the user's and nothing is
applied (``None``).
"""

from __future__ import annotations

import difflib

CONTEXT_LINES = 2


def rebase(before: str, after: str, disk: str) -> str | None:
    """``disk`` with the change from ``before`` to ``after``; ``None`` when it does not apply cleanly."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    out = disk.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    hunks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    for _tag, i1, i2, j1, j2 in reversed(hunks):  # from the end, so earlier positions stay valid
        lead = old[max(0, i1 - CONTEXT_LINES) : i1]
        trail = old[i2 : i2 + CONTEXT_LINES]
        needle = [*lead, *old[i1:i2], *trail]
        if not needle:
            return None  # the buffer was empty: nothing to find the place by
        found = [p for p in range(len(out) - len(needle) + 1) if out[p : p + len(needle)] == needle]
        if len(found) != 1:
            return None
        start = found[0] + len(lead)
        out[start : start + (i2 - i1)] = new[j1:j2]
    return "".join(out)
