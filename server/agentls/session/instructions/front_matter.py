"""YAML front matter of Markdown files, as Pi's ``utils/frontmatter.js`` reads it.

Skills and prompt templates start with a ``---`` block of YAML (``name``,
``description``, ``argument-hint``, ...). The rules are Pi's: newlines are normalised
to ``\\n``; a file that does not start with ``---``, or has no closing ``\\n---``, has no
front matter and its body is the whole text; otherwise the body is what follows the
closing line, trimmed. YAML that is not a mapping counts as none; YAML that does not
parse raises :class:`FrontMatterError` (Pi throws too, and its callers decide).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class FrontMatterError(ValueError):
    """The front matter is not valid YAML."""


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def parse_front_matter(text: str) -> FrontMatter:
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return FrontMatter(body=normalized)
    end = normalized.find("\n---", 3)
    if end == -1:
        return FrontMatter(body=normalized)
    source, body = normalized[4:end], normalized[end + 4 :].strip()
    if not source:
        return FrontMatter(body=body)
    import yaml  # only a file with front matter needs it (~10 ms of a server's start otherwise)

    try:
        parsed = yaml.safe_load(source)
    except (yaml.YAMLError, ValueError, RecursionError) as error:  # ValueError: a date like 2024-02-30
        raise FrontMatterError(
            f"the front matter is not valid YAML ({' '.join(str(error).split())})"
        ) from None
    return FrontMatter(fields=parsed if isinstance(parsed, dict) else {}, body=body)
