"""Prompt templates: Markdown files that ``/name args`` expands, as Pi's ``prompt-templates.js`` has them.

``review.md`` is the command ``/review``. Its front matter may give a ``description``
(else the first non-empty line, cut at 60 characters) and an ``argument-hint`` for
completion menus. The body may use the arguments: ``$1``, ``$2``...; ``$@`` and
``$ARGUMENTS`` for all of them; ``${1:-default}``, ``${@:-default}``; ``${@:N}`` and
``${@:N:L}`` for a slice. Arguments are split like a shell's words (single or double
quotes group, no escapes), and what they contain is not expanded again.

Discovery (Pi's ``collectAutoPromptEntries``) is not recursive: the ``.md`` files
directly in a prompts folder, minus dot files, ``node_modules`` and what a
``.gitignore``, ``.ignore`` or ``.fdignore`` there ignores. The first template of a name
wins. Pi's regular expressions use JavaScript's ``\\s``; :data:`_SPACE` is that class.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from agentls.session.front_matter import FrontMatterError, parse_front_matter
from agentls.session.resource_files import ResourceReader
from agentls.tools.ignore import GitIgnore

DESCRIPTION_LENGTH = 60
IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")

_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""JavaScript's ``\\s``, as a character class body."""
_IS_SPACE = re.compile(f"[{_SPACE}]")
_COMMAND = re.compile(f"/([^{_SPACE}]+)(?:[{_SPACE}]+(.*))?", re.DOTALL)
_PLACEHOLDER = re.compile(
    r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)"
)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    description: str
    content: str
    path: Path
    argument_hint: str | None = None


def parse_template(path: Path, text: str) -> PromptTemplate | None:
    """The template a file holds (Pi's ``loadTemplateFromFile``); ``None`` if its front matter is broken."""
    try:
        front = parse_front_matter(text)
    except FrontMatterError:
        return None
    description = _text(front.fields.get("description"))
    if not description:
        first = next((line for line in front.body.split("\n") if line.strip()), "")
        description = first[:DESCRIPTION_LENGTH] + ("..." if len(first) > DESCRIPTION_LENGTH else "")
    return PromptTemplate(
        name=path.name.removesuffix(".md"),
        description=description,
        content=front.body,
        path=path,
        argument_hint=_text(front.fields.get("argument-hint")) or None,
    )


def _text(value: object) -> str:
    """A front matter value as text (YAML may have made a number or a date of it); falsy is none, as in Pi."""
    if not value:
        return ""
    return value if isinstance(value, str) else str(value)


def template_files(folder: Path, ignore_text: ResourceReader[str]) -> list[Path]:
    """The ``.md`` files directly in ``folder`` that may be templates, in name order."""
    try:
        names = sorted(os.listdir(folder))
    except (OSError, ValueError):
        return []
    ignore = GitIgnore()
    for name in IGNORE_FILES:
        text = ignore_text.read(folder / name)
        if text is not None:
            ignore = ignore.extended("", text)
    return [
        folder / name
        for name in names
        if not name.startswith(".")
        and name != "node_modules"
        and name.endswith(".md")
        and not ignore.ignored(name, False)
        and os.path.isfile(folder / name)
    ]


def unique_templates(
    candidates: Iterable[PromptTemplate], warn: Callable[[str], None]
) -> list[PromptTemplate]:
    """The first template of each name (Pi's ``dedupePrompts``); collisions are warned."""
    by_name: dict[str, PromptTemplate] = {}
    for template in candidates:
        winner = by_name.get(template.name)
        if winner is None:
            by_name[template.name] = template
        else:
            warn(f'prompt template {template.path}: name "/{template.name}" collision; {winner.path} is used')
    return list(by_name.values())


def parse_command_args(text: str) -> list[str]:
    """Shell-like words: whitespace separates, quotes group (Pi's ``parseCommandArgs``)."""
    args: list[str] = []
    current = ""
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current += char
        elif char in ('"', "'"):
            quote = char
        elif _IS_SPACE.match(char):
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


def substitute_args(content: str, args: list[str]) -> str:
    """The template's placeholders replaced by the arguments (Pi's ``substituteArgs``)."""
    everything = " ".join(args)

    def arg(number: str) -> str:
        index = int(number) - 1
        return args[index] if 0 <= index < len(args) else ""

    def replace(match: re.Match[str]) -> str:
        default_target, default, slice_start, slice_length, simple = match.groups()
        if default_target is not None:
            value = everything if default_target in ("@", "ARGUMENTS") else arg(default_target)
            return value or default
        if slice_start is not None:
            start = max(int(slice_start) - 1, 0)
            end = start + int(slice_length) if slice_length is not None else None
            return " ".join(args[start:end])
        if simple in ("@", "ARGUMENTS"):
            return everything
        return arg(simple)

    return _PLACEHOLDER.sub(replace, content)


def expand_prompt_template(text: str, templates: Iterable[PromptTemplate]) -> str:
    """``/name args`` as the template ``name`` with the arguments (Pi's ``expandPromptTemplate``).

    Any other text, and a name that is no template, is returned as it is.
    """
    match = _COMMAND.fullmatch(text)
    if match is None:
        return text
    name, rest = match.group(1), match.group(2) or ""
    template = next((t for t in templates if t.name == name), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(rest))
