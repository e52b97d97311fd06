"""Prompt templates: parsing, discovery, arguments and ``/name args`` expansion, as Pi has them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from agentls.session.instructions.prompt_templates import (
    expand_prompt_template,
    parse_command_args,
    parse_template,
    substitute_args,
)
from agentls.session.instructions.resources import ProjectResources

from tests.session.files import write


def test_a_template_is_named_after_its_file_and_described_by_its_front_matter_or_first_line() -> None:
    review = parse_template(
        Path("/p/review.md"), '---\ndescription: Review a PR\nargument-hint: "<PR-URL>"\n---\nReview $1.\n'
    )
    assert review is not None
    assert (review.name, review.description, review.argument_hint, review.content) == (
        "review",
        "Review a PR",
        "<PR-URL>",
        "Review $1.",
    )
    plain = parse_template(
        Path("/p/wrap-up.md"), "\n\n  Finish the task end to end and summarise what changed in it\nmore"
    )
    assert plain is not None and plain.argument_hint is None
    assert plain.description == "  Finish the task end to end and summarise what changed in i..."
    assert plain.content == "\n\n  Finish the task end to end and summarise what changed in it\nmore"
    assert parse_template(Path("/p/broken.md"), "---\ndescription: [\n---\nx") is None


def test_arguments_split_like_shell_words() -> None:
    assert parse_command_args("Button \"click handler\"  'it''s'\tdisabled") == [
        "Button",
        "click handler",
        "its",
        "disabled",
    ]
    assert parse_command_args("  ") == []
    assert parse_command_args('say "unclosed quote') == ["say", "unclosed quote"]
    assert parse_command_args("a\u00a0b") == ["a", "b"]  # JavaScript's \s


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("$1 and $2", "one and two"),
        ("$3|$0|$9", "three||"),
        ("all: $@ / $ARGUMENTS", "all: one two three / one two three"),
        ("${1:-first} ${5:-fifth}", "one fifth"),
        ("${@:2}", "two three"),
        ("${@:2:1}|${@:0:1}|${@:7}", "two|one|"),
        ("${ARGUMENTS:-none}", "one two three"),
        ("$$1 ${1} $x", "$one ${1} $x"),
    ],
)
def test_placeholders(content: str, expected: str) -> None:
    assert substitute_args(content, ["one", "two", "three"]) == expected


def test_defaults_and_no_recursion() -> None:
    assert substitute_args("${@:-nothing given} ${1:-x}", []) == "nothing given x"
    assert substitute_args("$1 $2", ["$2", "${@}"]) == "$2 ${@}"


def test_expansion_needs_a_known_template_at_the_start() -> None:
    component = parse_template(Path("/p/component.md"), "Create a component named $1 with: ${@:2}")
    assert component is not None
    templates = [component]
    assert expand_prompt_template('/component Button "onClick" disabled', templates) == (
        "Create a component named Button with: onClick disabled"
    )
    assert expand_prompt_template("/component", templates) == "Create a component named  with: "
    assert expand_prompt_template("/component\nButton\nsecond line", templates) == (
        "Create a component named Button with: second line"
    )
    assert expand_prompt_template("/unknown Button", templates) == "/unknown Button"
    assert expand_prompt_template("make a /component", templates) == "make a /component"
    assert expand_prompt_template("/", templates) == "/"


def test_discovery_is_flat_project_first_and_the_first_name_wins(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "agentls.session")
    cwd, data = tmp_path / "project", tmp_path / "data"
    write(cwd / ".agentls" / "prompts" / "review.md", "agentls review")
    write(cwd / ".agentls" / "prompts" / "nested" / "deep.md", "not found: discovery is not recursive")
    write(cwd / ".agentls" / "prompts" / "notes.txt", "not markdown")
    write(cwd / ".agentls" / "prompts" / ".secret.md", "a dot file")
    write(cwd / ".agentls" / "prompts" / "draft.md", "ignored")
    write(cwd / ".agentls" / "prompts" / ".gitignore", "draft.md\n")
    write(cwd / ".pi" / "prompts" / "review.md", "pi review")
    write(cwd / ".pi" / "prompts" / "fix.md", "pi fix")
    write(data / "prompts" / "fix.md", "user fix")
    write(data / "prompts" / "standup.md", "user standup")
    resources = ProjectResources(cwd, data, home=tmp_path / "home")
    templates = resources.refresh().templates
    assert [(t.name, t.content) for t in templates] == [
        ("review", "agentls review"),
        ("fix", "pi fix"),
        ("standup", "user standup"),
    ]
    collisions = [r.getMessage() for r in caplog.records]
    assert collisions == [
        f'prompt template {cwd}/.pi/prompts/review.md: name "/review" collision; '
        f"{cwd}/.agentls/prompts/review.md is used",
        f'prompt template {data}/prompts/fix.md: name "/fix" collision; {cwd}/.pi/prompts/fix.md is used',
    ]
    assert resources.expand("/fix now") == "pi fix"
