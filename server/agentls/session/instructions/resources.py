"""Where a session finds its project instructions, skills and prompt templates, and reading them all at once.

The folders are Pi's, with agentls's data folder as Pi's agent folder and
``.agentls/`` as its project folder beside Pi's own ``.pi/``:

- context files: ``<dataDir>/AGENTS.md``, then the project's folders down to the
  session's (up to the home folder or the repository's root: see
  :mod:`agentls.session.instructions.context_files`);
- skills: ``.agentls/skills``, ``.pi/skills``, ``.agents/skills`` in the session's folder
  and each folder above it up to the git repository's root, then ``<dataDir>/skills``
  and ``~/.agents/skills``;
- prompt templates: ``.agentls/prompts``, ``.pi/prompts``, then ``<dataDir>/prompts``.

The project's come first, so they win a name both define. As in Pi, the project's own
files are used only once the user trusts the folder (:mod:`agentls.session.policy.project_trust`);
agentls counts the project's ``AGENTS.md`` among them too (Pi always reads it). An
untrusted refresh still finds them, so that the trust question and ``agent/getState``
can list what is held back (:attr:`Resources.held_back`).

:meth:`ProjectResources.refresh` reads everything again, which costs a ``stat`` per
file that did not change (see :class:`~agentls.session.instructions.resource_files.ResourceReader`);
it blocks, so the session runs it in a worker thread.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentls.session.instructions.context_files import (
    ContextFile,
    context_reader,
    load_context_files,
)
from agentls.session.instructions.prompt_templates import (
    PromptTemplate,
    expand_prompt_template,
    parse_template,
    template_files,
    unique_templates,
)
from agentls.session.instructions.resource_files import ResourceReader, child, up_from
from agentls.session.instructions.skills import (
    NESTED_FILES,
    TOP_LEVEL_FILES,
    FileRule,
    Skill,
    expand_skill_command,
    parse_skill,
    skill_files,
    unique_skills,
)

logger = logging.getLogger(__name__)

PROJECT_FOLDERS = (".agentls", ".pi")
"""The project folders whose ``skills/`` and ``prompts/`` are read, in order."""
AGENTS_SKILLS = Path(".agents", "skills")
"""The skills folder shared by coding agents (the ``.agents`` convention)."""


ResourceKind = Literal["contextFile", "skill", "promptTemplate"]


@dataclass(frozen=True)
class Found:
    """One file a refresh found: what it is, whether it is the project's, whether it is used."""

    path: Path
    kind: ResourceKind
    project: bool
    loaded: bool


@dataclass(frozen=True)
class Resources:
    """What one refresh found."""

    context_files: tuple[ContextFile, ...] = ()
    skills: tuple[Skill, ...] = ()
    templates: tuple[PromptTemplate, ...] = ()
    found: tuple[Found, ...] = ()
    """What is used (``loaded``), then the project's files held back until the folder is trusted."""

    @property
    def held_back(self) -> list[Path]:
        return [item.path for item in self.found if not item.loaded]


class ProjectResources:
    """The context files, skills and prompt templates of a session's folder and of the data folder."""

    def __init__(
        self, cwd: Path, data_dir: Path, *, context_files: bool = True, home: Path | None = None
    ) -> None:
        self.cwd = cwd
        self.data_dir = data_dir
        self.load_context_files = context_files
        self.home = home if home is not None else Path.home()
        self.current = Resources()
        """The latest refresh's findings (replaced whole, so a reader never sees half of one)."""
        self._context = context_reader()
        self._skills: ResourceReader[Skill] = ResourceReader(parse_skill)
        self._templates: ResourceReader[PromptTemplate] = ResourceReader(parse_template)
        self._ignore_files: ResourceReader[str] = ResourceReader(lambda path, text: text)
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def refresh(self, trusted: bool = True) -> Resources:
        """Read everything again (files that did not change are not re-read); blocks.

        Without ``trusted`` the project's files are found but not used.
        """
        with self._lock:
            context = (
                load_context_files(self.cwd, self.data_dir, self._context, self.home)
                if self.load_context_files
                else []
            )
            all_skills, all_templates = self._read_skills(), self._read_templates()
            own: dict[Path, ResourceKind] = {file.path: "contextFile" for file in context if file.project}
            own.update((skill.path, "skill") for skill, project in all_skills if project)
            own.update((template.path, "promptTemplate") for template, project in all_templates if project)

            def used(path: Path) -> bool:
                return trusted or path not in own

            used_context = [file for file in context if used(file.path)]
            skills = unique_skills((s for s, _ in all_skills if used(s.path)), self._warn_once)
            templates = unique_templates((t for t, _ in all_templates if used(t.path)), self._warn_once)
            for reader in (self._context, self._skills, self._templates, self._ignore_files):
                reader.sweep()
            found = [
                *(Found(file.path, "contextFile", file.project, True) for file in used_context),
                *(Found(skill.path, "skill", skill.path in own, True) for skill in skills),
                *(Found(t.path, "promptTemplate", t.path in own, True) for t in templates),
                *([] if trusted else [Found(path, kind, True, False) for path, kind in own.items()]),
            ]
            self.current = Resources(tuple(used_context), tuple(skills), tuple(templates), tuple(found))
            return self.current

    def expand(self, text: str) -> str:
        """``/skill:name args`` and ``/template args`` at the start of ``text`` expanded, as Pi does."""
        resources = self.current
        return expand_prompt_template(expand_skill_command(text, resources.skills), resources.templates)

    def _skill_folders(self) -> list[tuple[Path, FileRule, bool]]:
        """Each skill folder, how it is searched, and whether it is the project's."""
        user_agents = child(self.home, AGENTS_SKILLS)
        project = [
            (child(child(self.cwd, folder), "skills"), TOP_LEVEL_FILES, True) for folder in PROJECT_FOLDERS
        ]
        agents = [
            (child(folder, AGENTS_SKILLS), NESTED_FILES, True)
            for folder in _up_to_repository_root(self.cwd)
            if child(folder, AGENTS_SKILLS) != user_agents
        ]
        return [
            *project,
            *agents,
            (child(self.data_dir, "skills"), TOP_LEVEL_FILES, False),
            (user_agents, NESTED_FILES, False),
        ]

    def _template_folders(self) -> list[tuple[Path, bool]]:
        project = [(child(child(self.cwd, folder), "prompts"), True) for folder in PROJECT_FOLDERS]
        return [*project, (child(self.data_dir, "prompts"), False)]

    def _read_skills(self) -> list[tuple[Skill, bool]]:
        found = []
        for folder, rule, own in self._skill_folders():
            for path in skill_files(folder, rule, self._ignore_files):
                skill = self._skills.read(path)
                if skill is not None:
                    found.append((skill, own))
        return found

    def _read_templates(self) -> list[tuple[PromptTemplate, bool]]:
        found = []
        for folder, own in self._template_folders():
            for path in template_files(folder, self._ignore_files):
                template = self._templates.read(path)
                if template is not None:
                    found.append((template, own))
        return found

    def _warn_once(self, message: str) -> None:
        """Warn about what a refresh finds (name collisions) once, not before every turn."""
        if message not in self._warned:
            self._warned.add(message)
            logger.warning("%s", message)


def _up_to_repository_root(cwd: Path) -> list[Path]:
    """``cwd`` and the folders above it, up to the first that holds ``.git`` (else up to ``/``)."""
    folders = []
    for folder in up_from(cwd):
        folders.append(folder)
        if os.path.exists(child(folder, ".git")):
            break
    return folders
