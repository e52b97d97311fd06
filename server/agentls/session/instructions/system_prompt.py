"""The system prompt, built as Pi's ``buildSystemPrompt`` builds it.

The base prompt lists the tools the session has, each with its one-line snippet
(:data:`TOOL_PROMPTS`, from Pi's tool definitions), and guidelines that follow from
them; then come the appended text, the project instructions in ``<project_context>``,
the skills (when a tool can read them), the date and the working directory. A custom
prompt replaces the base and keeps everything after it, as in Pi.

Where agentls differs from Pi 0.85.0, on purpose:

- Pi's base prompt points to Pi's own documentation; agentls's points to its README and
  protocol when they are installed (a source checkout), and says nothing otherwise.
- ``edit`` applies its edits in order, each on the file as the previous ones left it,
  where Pi matches them all against the original file: its snippet and guidelines
  say so. ``bash`` has no ``PI_*`` session variables to mention, and there is no
  PowerShell tool.
- The date, which Pi 0.85.0 dropped and this project wants: only the day, so that the
  prompt stays the same from turn to turn (providers cache it) and changes at midnight.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import agentls
from agentls.session.instructions.context_files import ContextFile
from agentls.session.instructions.skills import Skill, format_skills_for_prompt


@dataclass(frozen=True)
class ToolPrompt:
    snippet: str
    """One line for the tool list of the system prompt."""
    guidelines: tuple[str, ...] = ()


TOOL_PROMPTS: dict[str, ToolPrompt] = {
    "read": ToolPrompt("Read file contents", ("Use read to examine files instead of cat or sed.",)),
    "write": ToolPrompt("Create or overwrite files", ("Use write only for new files or complete rewrites.",)),
    "edit": ToolPrompt(
        "Make precise file edits with exact text replacement, including several edits in one call",
        (
            "Use edit for precise changes (edits[].oldText must match exactly)",
            "When changing multiple separate locations in one file, use one edit call with multiple entries "
            "in edits[] instead of multiple edit calls",
            "The entries of edits[] apply in order: each oldText must match the file as the edits before "
            "it left it, exactly once.",
            "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with "
            "large unchanged regions.",
        ),
    ),
    "ls": ToolPrompt("List directory contents"),
    "find": ToolPrompt("Find files by glob pattern (respects .gitignore)"),
    "grep": ToolPrompt("Search file contents for patterns (respects .gitignore)"),
    "bash": ToolPrompt("Execute bash commands (ls, grep, find, etc.)"),
    "diagnostics": ToolPrompt(
        "List the errors and warnings the user's editor reports for a file",
        ("After editing code, use diagnostics to check the change for errors the editor reports.",),
    ),
}
"""Pi's ``promptSnippet`` and ``promptGuidelines`` of each built-in tool (and agentls's ``diagnostics``);
other tools are not listed."""


@dataclass(frozen=True)
class Documentation:
    readme: Path
    protocol: Path


def installed_documentation() -> Documentation | None:
    """agentls's README and protocol, when they sit beside the package (a source or editable install)."""
    root = Path(agentls.__file__).resolve().parent.parent.parent
    docs = Documentation(root / "README.md", root / "protocol.md")
    return docs if docs.readme.is_file() and docs.protocol.is_file() else None


def build_system_prompt(
    *,
    cwd: str,
    tools: Sequence[str],
    today: datetime.date,
    custom_prompt: str | None = None,
    append: str | None = None,
    context_files: Sequence[ContextFile] = (),
    skills: Sequence[Skill] = (),
    docs: Documentation | None = None,
) -> str:
    """The system prompt of a session with these tools (by name, in order) in folder ``cwd``."""
    prompt = custom_prompt if custom_prompt else _base_prompt(tools, docs)
    if append:
        prompt += f"\n\n{append}"
    if context_files:
        prompt += "\n\n<project_context>\n\nProject-specific instructions and guidelines:\n\n"
        for file in context_files:
            prompt += (
                f'<project_instructions path="{file.path}">\n{file.content}\n</project_instructions>\n\n'
            )
        prompt += "</project_context>\n"
    read_tool = next((name for name in ("read", "bash") if name in tools), None)
    if read_tool is not None and skills:
        prompt += format_skills_for_prompt(skills, read_tool)
    folder = cwd.replace("\\", "/")
    prompt += f"\nCurrent date: {today.isoformat()}\nCurrent working directory: {folder}"
    return prompt + "\n" if custom_prompt else prompt


def _base_prompt(tools: Sequence[str], docs: Documentation | None) -> str:
    listed = [name for name in tools if name in TOOL_PROMPTS]
    tool_list = "\n".join(f"- {name}: {TOOL_PROMPTS[name].snippet}" for name in listed) or "(none)"
    guidelines: list[str] = []

    def add(guideline: str) -> None:
        if guideline not in guidelines:
            guidelines.append(guideline)

    if "bash" in tools and not {"grep", "find", "ls"} & set(tools):
        add("Use bash for file operations like ls, rg, find")
    for name in listed:
        for guideline in TOOL_PROMPTS[name].guidelines:
            add(guideline)
    add("Be concise in your responses")
    add("Show file paths clearly when working with files")
    prompt = (
        "You are an expert coding assistant operating inside agentls, a coding agent harness. You help users "
        "by reading files, executing commands, editing code, and writing new files.\n\n"
        f"Available tools:\n{tool_list}\n\n"
        "In addition to the tools above, you may have access to other custom tools depending on the "
        "project.\n\n"
        "Guidelines:\n" + "\n".join(f"- {guideline}" for guideline in guidelines)
    )
    if docs is not None:
        prompt += (
            "\n\nagentls documentation (read only when the user asks about agentls itself: its settings, "
            "models, project instructions, skills, prompt templates, or its protocol):\n"
            f"- Main documentation: {docs.readme}\n"
            f"- Wire protocol: {docs.protocol}"
        )
    return prompt
