"""The ``git diff``-style unified diff that ``edit`` shows, bounded whatever the file.

The diff goes into the tool's result (for the model) and its details (for panels), which
are stored in the session file and sent to the client: an edit beside a 10 MB line must
not make a 20 MB result. Lines longer than :data:`MAX_LINE_CHARS` are cut, and the diff
stops at :data:`MAX_DIFF_BYTES` with a note of what was left out.

The lines the two texts share at their start and end are set aside before matching
(as GNU diff does), so a one-line change in a large file costs little.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

DIFF_CONTEXT = 3
MAX_LINE_CHARS = 1000
"""Longer lines of the diff are cut (the file itself is not)."""
MAX_DIFF_BYTES = 50 * 1024
"""The diff stops here (Pi's output limit)."""


def _lines(text: str) -> list[str]:
    """Lines split on ``\\n`` keeping their ends (not ``splitlines``, which splits on more)."""
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def _shared_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start, and then at their end."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _range(start: int, stop: int) -> str:
    """A hunk's range as ``difflib`` writes it: 1-based, the length left out when it is 1."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + (1 if length else 0)},{length}"


def _shown(prefix: str, line: str) -> str:
    text = line.removesuffix("\n")
    if len(text) > MAX_LINE_CHARS:
        text = f"{text[:MAX_LINE_CHARS]}… [{len(text) - MAX_LINE_CHARS} more characters]"
    if line.endswith("\n"):
        return f"{prefix}{text}\n"
    return f"{prefix}{text}\n\\ No newline at end of file\n"


def _diff_lines(a: list[str], b: list[str], name: str) -> Iterator[str]:
    head, tail = _shared_ends(a, b)
    skip = max(0, head - DIFF_CONTEXT)
    keep = max(0, tail - DIFF_CONTEXT)
    matcher = difflib.SequenceMatcher(None, a[skip : len(a) - keep], b[skip : len(b) - keep])
    groups = list(matcher.get_grouped_opcodes(DIFF_CONTEXT))
    if not groups:
        return
    yield f"--- a/{name}\n"
    yield f"+++ b/{name}\n"
    for group in groups:
        opcodes = [(tag, i1 + skip, i2 + skip, j1 + skip, j2 + skip) for tag, i1, i2, j1, j2 in group]
        first, last = opcodes[0], opcodes[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
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
    lines = _diff_lines(_lines(old), _lines(new), name)
    for line in lines:
        cost = len(line.encode("utf-8", errors="surrogatepass"))
        if size + cost > MAX_DIFF_BYTES:
            more = 1 + sum(1 for _ in lines)
            out.append(f"[The diff is cut at {MAX_DIFF_BYTES // 1024}KB: {more} more lines not shown.]\n")
            break
        out.append(line)
        size += cost
    return "".join(out)
