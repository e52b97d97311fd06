"""The ``git diff``-style unified diff that ``edit`` shows, bounded whatever the file.

The diff goes into the tool's result (for the model) and its details (for panels), which
are stored in the session file and sent to the client: an edit beside a 10 MB line must
not make a 20 MB result. Lines longer than :data:`MAX_LINE_CHARS` are cut, and the diff
stops at :data:`MAX_DIFF_BYTES` with a note of what was left out.

The lines the two texts share at their start and end are set aside before matching
(as GNU diff does), so a one-line change in a large file costs little.
"""

from __future__ import annotations

from collections.abc import Iterator

from agentls.tools.hunks import grouped_opcodes, line_range, split_lines

MAX_LINE_CHARS = 1000
"""Longer lines of the diff are cut (the file itself is not)."""
MAX_DIFF_BYTES = 50 * 1024
"""The diff stops here (Pi's output limit)."""


def _shown(prefix: str, line: str) -> str:
    text = line.removesuffix("\n")
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [{len(text) - MAX_LINE_CHARS} more characters]"
    if line.endswith("\n"):
        return f"{prefix}{text}\n"
    return f"{prefix}{text}\n\\ No newline at end of file\n"


def _diff_lines(a: list[str], b: list[str], name: str) -> Iterator[str]:
    groups = grouped_opcodes(a, b)
    if not groups:
        return
    yield f"--- a/{name}\n"
    yield f"+++ b/{name}\n"
    for opcodes in groups:
        first, last = opcodes[0], opcodes[-1]
        yield f"@@ -{line_range(first[1], last[2])} +{line_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                yield from (_shown(" ", line) for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from (_shown("-", line) for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from (_shown("+", line) for line in b[j1:j2])


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of two texts, ``a/NAME`` and ``b/NAME``, 3 lines of context, within the bounds."""
    out: list[str] = []
    size = 0
    lines = _diff_lines(split_lines(old), split_lines(new), name)
    for line in lines:
        cost = len(line.encode("utf-8", errors="surrogatepass"))
        if size + cost > MAX_DIFF_BYTES:
            more = 1 + sum(1 for _ in lines)
            out.append(f"[The diff is cut at {MAX_DIFF_BYTES // 1024}KB: {more} more lines not shown.]\n")
            break
        out.append(line)
        size += cost
    return "".join(out)
