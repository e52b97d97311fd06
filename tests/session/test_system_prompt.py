"""The system prompt builder: Pi's ``buildSystemPrompt`` for agentls's tools, custom prompt, appended text."""

from __future__ import annotations

import datetime
from pathlib import Path

from agentls.session.instructions.context_files import ContextFile
from agentls.session.instructions.skills import Skill
from agentls.session.instructions.system_prompt import (
    Documentation,
    build_system_prompt,
    installed_documentation,
)

ALL_TOOLS = ["read", "write", "edit", "ls", "find", "grep", "bash"]
DAY = datetime.date(2025, 3, 4)
CWD = "/work/project"


def skill(name: str, *, hidden: bool = False) -> Skill:
    return Skill(
        name=name,
        description=f"Does {name} <things> & 'more'",
        path=Path(f"/skills/{name}/SKILL.md"),
        disable_model_invocation=hidden,
        body="",
    )


def test_the_base_prompt_lists_each_tool_with_its_snippet_and_guidelines() -> None:
    prompt = build_system_prompt(cwd=CWD, tools=ALL_TOOLS, today=DAY)
    assert prompt.startswith(
        "You are an expert coding assistant operating inside agentls, a coding agent harness."
    )
    tools = prompt.split("Available tools:\n", 1)[1].split("\n\n", 1)[0]
    assert tools.splitlines() == [
        "- read: Read file contents",
        "- write: Create or overwrite files",
        "- edit: Make precise file edits with exact text replacement, including several edits in one call",
        "- ls: List directory contents",
        "- find: Find files by glob pattern (respects .gitignore)",
        "- grep: Search file contents for patterns (respects .gitignore)",
        "- bash: Execute bash commands (ls, grep, find, etc.)",
    ]
    guidelines = prompt.split("Guidelines:\n", 1)[1].split("\nCurrent date", 1)[0].splitlines()
    assert guidelines[0] == "- Use read to examine files instead of cat or sed."
    assert "- Use write only for new files or complete rewrites." in guidelines
    assert any("apply in order" in line for line in guidelines)  # agentls's edit, not Pi's
    assert guidelines[-2:] == [
        "- Be concise in your responses",
        "- Show file paths clearly when working with files",
    ]
    assert "Use bash for file operations" not in prompt  # ls, find and grep are there
    assert prompt.endswith("\nCurrent date: 2025-03-04\nCurrent working directory: /work/project")


def test_the_guidelines_follow_the_tools_present() -> None:
    only_bash = build_system_prompt(cwd=CWD, tools=["bash"], today=DAY)
    assert "- Use bash for file operations like ls, rg, find\n" in only_bash
    assert "read:" not in only_bash and "Use read to examine" not in only_bash
    read_only = build_system_prompt(cwd=CWD, tools=["read", "grep"], today=DAY)
    assert "- read: Read file contents\n- grep: Search" in read_only
    assert "Use bash for file operations" not in read_only and "Use edit" not in read_only
    unknown = build_system_prompt(cwd=CWD, tools=["mcp_search"], today=DAY)
    assert "Available tools:\n(none)\n" in unknown  # a tool without a snippet is not listed, as in Pi


def test_appended_text_project_instructions_and_skills_follow_in_pis_order() -> None:
    files = [ContextFile(Path("/AGENTS.md"), "Use tabs."), ContextFile(Path("/work/AGENTS.md"), "Run make.")]
    prompt = build_system_prompt(
        cwd=CWD,
        tools=ALL_TOOLS,
        today=DAY,
        append="Answer in French.",
        context_files=files,
        skills=[skill("pdf"), skill("secret", hidden=True)],
    )
    guidelines_end = prompt.index("- Show file paths clearly when working with files")
    assert guidelines_end < prompt.index("\n\nAnswer in French.\n\n<project_context>")
    assert (
        "<project_context>\n\nProject-specific instructions and guidelines:\n\n"
        '<project_instructions path="/AGENTS.md">\nUse tabs.\n</project_instructions>\n\n'
        '<project_instructions path="/work/AGENTS.md">\nRun make.\n</project_instructions>\n\n'
        "</project_context>\n\n\nThe following skills provide specialized instructions for specific tasks.\n"
        "Use the read tool to load a skill's file when the task matches its description.\n"
    ) in prompt
    assert (
        "<available_skills>\n  <skill>\n    <name>pdf</name>\n"
        "    <description>Does pdf &lt;things&gt; &amp; &apos;more&apos;</description>\n"
        "    <location>/skills/pdf/SKILL.md</location>\n  </skill>\n</available_skills>\n"
        "Current date: 2025-03-04\nCurrent working directory: /work/project"
    ) in prompt
    assert "secret" not in prompt  # disable-model-invocation: only /skill:secret uses it


def test_skills_need_a_tool_that_can_read_them() -> None:
    skills = [skill("pdf")]
    assert "<available_skills>" not in build_system_prompt(cwd=CWD, tools=["ls"], today=DAY, skills=skills)
    with_bash = build_system_prompt(cwd=CWD, tools=["bash"], today=DAY, skills=skills)
    assert "Use bash to load a skill's file when the task matches its description." in with_bash


def test_a_custom_prompt_replaces_the_base_and_keeps_the_rest() -> None:
    prompt = build_system_prompt(
        cwd=CWD,
        tools=ALL_TOOLS,
        today=DAY,
        custom_prompt="You review code.",
        append="Be strict.",
        context_files=[ContextFile(Path("/work/project/AGENTS.md"), "No globals.")],
        skills=[skill("pdf")],
        docs=Documentation(Path("/docs/README.md"), Path("/docs/protocol.md")),
    )
    assert prompt.startswith("You review code.\n\nBe strict.\n\n<project_context>")
    assert "Available tools" not in prompt and "/docs/README.md" not in prompt
    assert "No globals." in prompt and "<name>pdf</name>" in prompt
    assert prompt.endswith("\nCurrent date: 2025-03-04\nCurrent working directory: /work/project\n")


def test_the_documentation_section_names_the_installed_docs() -> None:
    docs = Documentation(Path("/src/agentls/README.md"), Path("/src/agentls/protocol.md"))
    prompt = build_system_prompt(cwd="C:\\work\\project", tools=ALL_TOOLS, today=DAY, docs=docs)
    assert "- Main documentation: /src/agentls/README.md\n- Wire protocol: /src/agentls/protocol.md" in prompt
    assert "Current working directory: C:/work/project" in prompt
    assert "agentls documentation" not in build_system_prompt(cwd=CWD, tools=ALL_TOOLS, today=DAY)
    found = installed_documentation()  # this checkout has both files beside the package
    assert found is not None and found.readme.name == "README.md" and found.protocol.is_file()
