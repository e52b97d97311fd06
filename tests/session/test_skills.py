"""Skills: ``SKILL.md`` parsing and validation, discovery in skill folders, collisions and ``/skill:name``."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from agentls.session.instructions.resource_files import ResourceReader
from agentls.session.instructions.resources import ProjectResources
from agentls.session.instructions.skills import (
    NESTED_FILES,
    TOP_LEVEL_FILES,
    FileRule,
    expand_skill_command,
    parse_skill,
    skill_files,
)

from tests.session.files import write


def skill_md(description: str | None = "Does things", **fields: str) -> str:
    lines = [f"{key.replace('_', '-')}: {value}" for key, value in fields.items()]
    if description is not None:
        lines.insert(0, f"description: {description}")
    return "---\n" + "\n".join(lines) + "\n---\n\n# Body\n\nRun ./run.sh\n"


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_a_skill_takes_its_name_from_the_front_matter_or_its_folder(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "agentls.session")
    named = parse_skill(Path("/s/folder/SKILL.md"), skill_md(name="pdf-tools"))
    assert named is not None and named.name == "pdf-tools" and named.description == "Does things"
    assert named.body == "# Body\n\nRun ./run.sh" and named.base_dir == Path("/s/folder")
    unnamed = parse_skill(Path("/s/web-search/SKILL.md"), "---\r\ndescription: Search\r\n---\r\nBody\r\n")
    assert unnamed is not None and unnamed.name == "web-search" and unnamed.body == "Body"
    assert not unnamed.disable_model_invocation
    hidden = parse_skill(Path("/s/h/SKILL.md"), skill_md(disable_model_invocation="true"))
    assert hidden is not None and hidden.disable_model_invocation
    assert warnings(caplog) == []


def test_problems_are_warnings_and_only_a_missing_description_stops_a_skill(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "agentls.session")
    odd = parse_skill(Path("/s/Bad--Name-/SKILL.md"), skill_md("x" * 1025))
    assert odd is not None and odd.name == "Bad--Name-"
    assert warnings(caplog) == [
        "skill /s/Bad--Name-/SKILL.md: description exceeds 1024 characters (1025)",
        "skill /s/Bad--Name-/SKILL.md: name contains invalid characters (must be lowercase a-z, 0-9, "
        "hyphens only)",
        "skill /s/Bad--Name-/SKILL.md: name must not start or end with a hyphen",
        "skill /s/Bad--Name-/SKILL.md: name must not contain consecutive hyphens",
    ]
    caplog.clear()
    assert parse_skill(Path("/s/empty/SKILL.md"), skill_md(None, name="empty")) is None
    assert parse_skill(Path("/s/broken/SKILL.md"), "---\ndescription: [unclosed\n---\nbody") is None
    said = warnings(caplog)
    assert said[0] == "skill /s/empty/SKILL.md: description is required"
    assert said[1].startswith("skill /s/broken/SKILL.md: the front matter is not valid YAML")
    caplog.clear()
    # a loose Markdown file without skill front matter is just not a skill
    assert parse_skill(Path("/s/notes.md"), "# Notes\n") is None
    assert parse_skill(Path("/s/broken.md"), "---\n: : :\n---\n") is None
    assert warnings(caplog) == []


def test_discovery_follows_pis_rules(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "pdf" / "SKILL.md", skill_md())
    write(root / "pdf" / "inner" / "SKILL.md", skill_md())  # below a skill: not searched
    write(root / "group" / "deep" / "SKILL.md", skill_md())
    write(root / "group" / "loose.md", skill_md())
    write(root / "top.md", skill_md())
    write(root / ".hidden" / "SKILL.md", skill_md())
    write(root / "node_modules" / "dep" / "SKILL.md", skill_md())
    write(root / "ignored" / "SKILL.md", skill_md())
    write(root / "group" / "drafts" / "SKILL.md", skill_md())
    write(root / ".gitignore", "ignored/\n")
    write(root / "group" / ".ignore", "drafts\n")
    (root / "loop").symlink_to(root)  # a link back up is followed once, not forever
    ignore_text: ResourceReader[str] = ResourceReader(lambda path, text: text)

    def relative(rule: FileRule) -> list[str]:
        return [p.relative_to(root).as_posix() for p in skill_files(root, rule, ignore_text)]

    assert relative(TOP_LEVEL_FILES) == ["group/deep/SKILL.md", "pdf/SKILL.md", "top.md"]
    assert relative(NESTED_FILES) == ["group/deep/SKILL.md", "group/loose.md", "pdf/SKILL.md"]
    assert skill_files(tmp_path / "missing", TOP_LEVEL_FILES, ignore_text) == []


def test_project_skills_come_first_and_win_a_name(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "agentls.session")
    repo, home, data = tmp_path / "repo", tmp_path / "home", tmp_path / "data"
    cwd = repo / "pkg"
    write(repo / ".git" / "HEAD", "ref: refs/heads/main\n")
    write(cwd / ".agentls" / "skills" / "review" / "SKILL.md", skill_md("project review"))
    write(cwd / ".pi" / "skills" / "review" / "SKILL.md", skill_md("pi review"))
    write(cwd / ".pi" / "skills" / "lint.md", skill_md("pi lint", name="lint"))
    write(cwd / ".agents" / "skills" / "deploy" / "SKILL.md", skill_md("package deploy"))
    write(repo / ".agents" / "skills" / "release" / "SKILL.md", skill_md("repository release"))
    write(tmp_path / ".agents" / "skills" / "outside" / "SKILL.md", skill_md("above the repository"))
    write(data / "skills" / "review" / "SKILL.md", skill_md("user review"))
    write(data / "skills" / "notes" / "SKILL.md", skill_md("user notes"))
    write(home / ".agents" / "skills" / "shared" / "SKILL.md", skill_md("shared by agents"))
    resources = ProjectResources(cwd, data, home=home)

    skills = resources.refresh().skills
    assert [(s.name, s.description) for s in skills] == [
        ("review", "project review"),
        ("lint", "pi lint"),
        ("deploy", "package deploy"),
        ("release", "repository release"),
        ("notes", "user notes"),
        ("shared", "shared by agents"),
    ]
    collisions = [w for w in warnings(caplog) if "collision" in w]
    assert len(collisions) == 2 and all(f'name "review" collision; {cwd}/.agentls' in w for w in collisions)
    resources.refresh()
    assert len([w for w in warnings(caplog) if "collision" in w]) == 2  # said once, not at every refresh


def test_a_skill_command_puts_the_skill_in_the_prompt(tmp_path: Path) -> None:
    skill = parse_skill(tmp_path / "pdf" / "SKILL.md", skill_md(name="pdf"))
    assert skill is not None
    block = (
        f'<skill name="pdf" location="{tmp_path}/pdf/SKILL.md">\n'
        f"References are relative to {tmp_path}/pdf.\n\n# Body\n\nRun ./run.sh\n</skill>"
    )
    assert expand_skill_command("/skill:pdf", [skill]) == block
    assert expand_skill_command("/skill:pdf   extract page 2  ", [skill]) == f"{block}\n\nextract page 2"
    assert expand_skill_command("/skill:other do it", [skill]) == "/skill:other do it"
    assert expand_skill_command("use /skill:pdf", [skill]) == "use /skill:pdf"
