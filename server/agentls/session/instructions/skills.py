"""Skills: folders with a ``SKILL.md`` the model reads on demand, as Pi's ``skills.js`` loads and lists them.

A skill is a ``SKILL.md`` with YAML front matter (``name``, ``description``,
``disable-model-invocation``; see the Agent Skills standard). Only the names,
descriptions and paths go into the system prompt (:func:`format_skills_for_prompt`);
the model reads a file when a task matches it, and ``/skill:name args`` in a prompt
puts the file in the prompt at once (:func:`expand_skill_command`).

Discovery follows Pi's ``collectSkillEntries``: in each skill folder, a folder holding
a ``SKILL.md`` is one skill (nothing below it is searched); dot folders and
``node_modules`` are skipped, and so is whatever a ``.gitignore``, ``.ignore`` or
``.fdignore`` inside the skill folder ignores. Loose Markdown files are skills too when
they declare a ``description``: at the top of an agentls/Pi skill folder
(:data:`TOP_LEVEL_FILES`), below the top of an ``.agents/skills`` folder
(:data:`NESTED_FILES`). Problems are warnings, as in Pi: a skill whose name breaks the
standard's rules still loads; one without a description does not. The first skill of a
name wins.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.session.instructions.front_matter import FrontMatterError, parse_front_matter
from agentls.session.instructions.resource_files import ResourceReader
from agentls.tools.ignore import GitIgnore

logger = logging.getLogger(__name__)

FileRule = Literal["top-level", "nested"]
TOP_LEVEL_FILES: FileRule = "top-level"
"""Pi's ``pi`` mode (``~/.pi/agent/skills``, ``.pi/skills``): loose ``.md`` files count at the top only."""
NESTED_FILES: FileRule = "nested"
"""Pi's ``agents`` mode (``.agents/skills``): loose ``.md`` files count only inside grouping folders."""

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")
_NAME = re.compile(r"[a-z0-9-]+")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path
    """The skill's Markdown file."""
    disable_model_invocation: bool
    """Left out of the system prompt: only ``/skill:name`` uses it."""
    body: str
    """The file's text after the front matter, trimmed."""

    @property
    def base_dir(self) -> Path:
        """Where the skill's relative paths start: the folder of its file."""
        return self.path.parent


def parse_skill(path: Path, text: str) -> Skill | None:
    """The skill a file declares (Pi's ``loadSkillFromFile``); ``None``, with warnings, when it is none."""
    declared = path.name == "SKILL.md"
    try:
        front = parse_front_matter(text)
    except FrontMatterError as error:
        if declared:
            _warn(path, str(error))
        return None
    description = front.fields.get("description")
    has_description = isinstance(description, str) and description.strip() != ""
    if not declared and not has_description:
        return None
    if not has_description:
        _warn(path, "description is required")
    elif len(description) > MAX_DESCRIPTION_LENGTH:
        _warn(path, f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({len(description)})")
    name = front.fields.get("name")
    name = name if isinstance(name, str) and name else path.parent.name
    for problem in name_problems(name):
        _warn(path, problem)
    if not has_description:
        return None
    return Skill(
        name=name,
        description=description,
        path=path,
        disable_model_invocation=front.fields.get("disable-model-invocation") is True,
        body=front.body.strip(),
    )


def name_problems(name: str) -> list[str]:
    """How a skill name breaks the Agent Skills standard (Pi's ``validateName``)."""
    problems = []
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name exceeds {MAX_NAME_LENGTH} characters ({len(name)})")
    if not _NAME.fullmatch(name):
        problems.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain consecutive hyphens")
    return problems


def _warn(path: Path, problem: str) -> None:
    logger.warning("skill %s: %s", path, problem)


def skill_files(folder: Path, rule: FileRule, ignore_text: ResourceReader[str]) -> list[Path]:
    """The files that may declare skills under ``folder``, in name order (Pi's ``collectSkillEntries``)."""
    found: list[Path] = []
    _collect(folder, folder, rule, GitIgnore(), ignore_text, set(), found)
    return found


def _collect(
    folder: Path,
    root: Path,
    rule: FileRule,
    ignore: GitIgnore,
    ignore_text: ResourceReader[str],
    visited: set[tuple[int, int]],
    found: list[Path],
) -> None:
    try:
        status = os.stat(folder)
        names = sorted(os.listdir(folder))
    except (OSError, ValueError):
        return
    if (status.st_dev, status.st_ino) in visited:  # a symlink back up the tree
        return
    visited.add((status.st_dev, status.st_ino))
    base = "" if folder == root else folder.relative_to(root).as_posix() + "/"
    for name in IGNORE_FILES:
        text = ignore_text.read(folder / name)
        if text is not None:
            ignore = ignore.extended(base, text)
    if (
        "SKILL.md" in names
        and os.path.isfile(folder / "SKILL.md")
        and not ignore.ignored(base + "SKILL.md", False)
    ):
        found.append(folder / "SKILL.md")
        return
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        path = folder / name
        is_dir, is_file = os.path.isdir(path), os.path.isfile(path)  # following symlinks, as Pi does
        relative = base + name
        wanted_here = (rule == TOP_LEVEL_FILES) == (folder == root)
        if is_file and name.endswith(".md") and wanted_here and not ignore.ignored(relative, False):
            found.append(path)
        elif is_dir and not ignore.ignored(relative, True):
            _collect(path, root, rule, ignore, ignore_text, visited, found)


def unique_skills(candidates: Iterable[Skill], warn: Callable[[str], None]) -> list[Skill]:
    """The first skill of each name and of each real file (Pi's ``loadSkills``); collisions are warned."""
    by_name: dict[str, Skill] = {}
    files: set[str] = set()
    for skill in candidates:
        real = os.path.realpath(skill.path)
        if real in files:
            continue
        winner = by_name.get(skill.name)
        if winner is not None:
            warn(f'skill {skill.path}: name "{skill.name}" collision; {winner.path} is used')
            continue
        by_name[skill.name] = skill
        files.add(real)
    return list(by_name.values())


def format_skills_for_prompt(skills: Iterable[Skill], read_tool: str = "read") -> str:
    """The skills section of the system prompt (Pi's ``formatSkillsForPrompt``, the Agent Skills XML)."""
    visible = [skill for skill in skills if not skill.disable_model_invocation]
    if not visible:
        return ""
    how = (
        "Use the read tool to load a skill's file when the task matches its description."
        if read_tool == "read"
        else "Use bash to load a skill's file when the task matches its description."
    )
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        how,
        "When a skill file references a relative path, resolve it against the skill directory (parent of "
        "SKILL.md / dirname of the path) and use that absolute path in tool commands.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{_xml(skill.name)}</name>",
            f"    <description>{_xml(skill.description)}</description>",
            f"    <location>{_xml(str(skill.path))}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})
"""Pi's ``escapeXml`` (``xml.sax.saxutils`` would import ``urllib.request`` and ``http.client``)."""


def _xml(text: str) -> str:
    return text.translate(_XML_ESCAPES)


SKILL_COMMAND = "/skill:"


def expand_skill_command(text: str, skills: Iterable[Skill]) -> str:
    """``/skill:name args`` as the skill's file followed by the arguments (Pi's ``_expandSkillCommand``).

    Any other text, and an unknown skill, is returned as it is.
    """
    if not text.startswith(SKILL_COMMAND):
        return text
    name, space, rest = text[len(SKILL_COMMAND) :].partition(" ")
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    block = (
        f'<skill name="{skill.name}" location="{skill.path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{skill.body}\n</skill>"
    )
    args = rest.strip() if space else ""
    return f"{block}\n\n{args}" if args else block
