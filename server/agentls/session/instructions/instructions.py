"""What a session tells the model besides the transcript, and the commands its user can type.

:class:`SessionInstructions` joins a session's prompt settings (a custom system
prompt, text to append, whether to read project instructions) with what
:class:`~agentls.session.instructions.resources.ProjectResources` finds around its folder, and
builds the system prompt from them for the tools the session has at that moment.
The session refreshes it before each turn (Pi's ``prepareNextTurn`` refresh), so an
edited ``AGENTS.md``, a new skill or a changed tool set reach the next model call. The
project's own files are used only while the folder is trusted
(:mod:`agentls.session.policy.project_trust`).
"""

from __future__ import annotations

import asyncio
import datetime
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.protocol import CommandInfo, ResourceInfo
from agentls.session.instructions.resources import ProjectResources
from agentls.session.instructions.system_prompt import (
    build_system_prompt,
    installed_documentation,
)
from agentls.session.policy.project_trust import FolderTrust, TrustStatus


@dataclass(frozen=True)
class PromptSettings:
    """How a session's system prompt is made; stored with it, so that a loaded one makes it the same way."""

    system_prompt: str | None = None
    """Replaces agentls's base prompt (project instructions, skills, date and folder still follow)."""
    append_system_prompt: str | None = None
    """Added after the base (or custom) prompt."""
    context_files: bool = True
    """Whether ``AGENTS.md`` / ``CLAUDE.md`` files are read."""


_documentation = functools.cache(installed_documentation)


class SessionInstructions:
    """A session's system prompt and slash commands, from its settings and the files around its folder."""

    def __init__(
        self, cwd: str, data_dir: Path, settings: PromptSettings, trust: FolderTrust | None = None
    ) -> None:
        self.cwd = cwd
        self.settings = settings
        self.resources = ProjectResources(Path(cwd), data_dir, context_files=settings.context_files)
        self.trust = trust
        """The server's trust decisions (``None``: every project file is used, as in unit tests)."""
        self._nothing_to_trust = False

    async def refresh(self) -> None:
        """Look at the files again (in a worker thread: it reads the disk)."""
        await asyncio.to_thread(self.resources.refresh, self.trust_status() == "trusted")

    def opened(self) -> list[str]:
        """After the first refresh: the project's files that wait for the folder's trust.

        None in a folder not decided about: the session trusts it, as Pi does a folder
        without project resources, so that the files that appear later are used.
        """
        held = [str(path) for path in self.resources.current.held_back]
        if not held and self.trust is not None and self.trust.decision(self.cwd) is None:
            self._nothing_to_trust = True
        return held

    def trust_status(self) -> TrustStatus:
        if self.trust is None:
            return "trusted"
        if self.trust.pending(self.cwd) is not None:
            return "asking"
        decision = self.trust.decision(self.cwd)
        return "trusted" if (self._nothing_to_trust if decision is None else decision) else "untrusted"

    def trust_pending(self) -> asyncio.Future[bool] | None:
        """The answer to the open question whether to trust the folder, if one is open."""
        return self.trust.pending(self.cwd) if self.trust is not None else None

    def found(self) -> list[ResourceInfo]:
        """What the last refresh found: used, and the project's held back (for ``agent/getState``)."""
        return [
            ResourceInfo(
                path=str(item.path),
                kind=item.kind,
                scope="project" if item.project else "user",
                loaded=item.loaded,
            )
            for item in self.resources.current.found
        ]

    def system_prompt(self, tools: Sequence[str]) -> str:
        """The system prompt for these tools, from what the last refresh found."""
        found = self.resources.current
        return build_system_prompt(
            cwd=self.cwd,
            tools=tools,
            today=datetime.date.today(),
            custom_prompt=self.settings.system_prompt,
            append=self.settings.append_system_prompt,
            context_files=found.context_files,
            skills=found.skills,
            docs=_documentation(),
        )

    def context_files(self) -> list[str]:
        """The absolute paths of the project instructions in the prompt."""
        return [str(file.path) for file in self.resources.current.context_files]

    def commands(self) -> list[CommandInfo]:
        """The prompt templates, then the skills, as ``/`` commands (Pi's ``getCommands``)."""
        found = self.resources.current
        templates = [
            CommandInfo(
                name=template.name,
                description=template.description,
                kind="template",
                argument_hint=template.argument_hint,
                path=str(template.path),
            )
            for template in found.templates
        ]
        skills = [
            CommandInfo(
                name=f"skill:{skill.name}", description=skill.description, kind="skill", path=str(skill.path)
            )
            for skill in found.skills
        ]
        return templates + skills

    def expand(self, text: str) -> str:
        """``/skill:name args`` or ``/template args`` at the start of a prompt, expanded as Pi does."""
        return self.resources.expand(text)
