"""``/changes`` and ``/revert`` of ``agentls chat``: the net change of the last run (or of the whole
session) as a coloured diff, and taking files of it back (protocol.md "Checkpoints and changes").

``/changes`` prints each file's header (its status, path, ``OLD -> NEW`` for a rename, and who
changed it) and its hunks; ``/revert PATH`` (or several paths, or ``all``) takes back what the last
run did to them; ``force`` reverts the others when some changed since. The paths complete after
``/revert `` from the last run's change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from rich.text import Text

from agentls.cli.mentions import ranked
from agentls.protocol import ChangedFile, ChangeHunk, ChangesResult, RevertChangesResult
from agentls.terminal_text import visible, visible_text

FILE_LINES = 200
"""Diff lines shown of one file; the rest is counted."""

STATUS_STYLE = {"added": "green", "modified": "yellow", "deleted": "red", "renamed": "cyan"}

LINE_STYLE = {"+": "green", "-": "red", "\\": "dim"}
"""A diff line's style by its prefix (context lines keep the terminal's)."""

REVERT_PREFIX = "/revert "

REVERT_MESSAGE = "agentls/revert"
"""The ``customType`` of the message a revert leaves for the model (the chat reports the revert itself)."""


def file_header(file: ChangedFile) -> Text:
    """``modified src/app.py · bash``, ``renamed old.txt -> new.txt · bash, edit``."""
    header = Text.assemble((f"{file.status:<8} ", f"bold {STATUS_STYLE.get(file.status, '')}"))
    if file.old_path is not None:
        header.append_text(visible_text(file.old_path, "bold", newlines=False))
        header.append(" -> ", "dim")
    header.append_text(visible_text(file.path, "bold", newlines=False))
    header.append(f" · {', '.join(file.by)}", "dim")
    return header


def hunk_lines(hunk: ChangeHunk) -> Iterable[Text]:
    yield Text(f"@@ -{hunk.old_start},{hunk.old_lines} +{hunk.new_start},{hunk.new_lines} @@", "cyan")
    for line in hunk.lines:
        yield visible_text(line, LINE_STYLE.get(line[:1], ""), newlines=False)


def file_lines(file: ChangedFile) -> list[Text]:
    """A file's header and its diff (cut at :data:`FILE_LINES`), or why it has none."""
    lines = [file_header(file)]
    if file.binary:
        lines.append(Text("  binary file: no diff to show", "dim"))
    elif file.recorded is False:
        lines.append(Text("  its content was not recorded (too large, or pruned): no diff to show", "dim"))
    else:
        diff = [line for hunk in file.hunks for line in hunk_lines(hunk)]
        lines += diff[:FILE_LINES]
        if len(diff) > FILE_LINES:
            lines.append(Text(f"  … {len(diff) - FILE_LINES} more lines of this file's diff", "dim"))
    return lines


def changes_text(result: ChangesResult, *, whole_session: bool) -> Text:
    """What ``/changes`` prints: a title, then every file's header and hunks."""
    span = "this session" if whole_session else "the last run"
    lines: list[Text] = []
    if result.checkpoints != "on":
        lines.append(
            Text(
                f"checkpoints are {result.checkpoints}: only the changes of write and edit are known",
                "yellow",
            )
        )
    if not result.files:
        lines.append(Text(f"No changes in {span}.", "dim"))
    else:
        count = f"{len(result.files)} file{'s' if len(result.files) != 1 else ''}"
        title = "The changes of this session" if whole_session else "The changes of the last run"
        lines.append(Text(f"{title} · {count} (/revert PATH takes a file's back)", "bold"))
        for file in result.files:
            lines += file_lines(file)
    return Text("\n").join(lines)


@dataclass(frozen=True)
class RevertRequest:
    """What ``/revert ...`` asks for."""

    files: list[str] | None
    """The paths to revert, as ``agent/getChanges`` gives them; ``None``: everything."""
    force: bool
    words: str
    """What was typed before ``force`` (``all``, the paths): to repeat it with ``force``."""


def revert_request(argument: str, changes: ChangesResult) -> RevertRequest | str:
    """The request ``/revert ARGUMENT`` makes of ``changes``, or what is wrong with it.

    The argument is ``all``, one path (spaces and all), or paths separated by blanks; a renamed
    file goes by either of its names; ``force`` may end it. ``""`` (nothing but ``force``) is the
    caller's to handle (a list to pick from): it gives ``files=[]``.
    """
    words = argument.strip()
    force = words == "force" or words.endswith(" force")
    if force:
        words = words[: -len("force")].strip()
    if words == "all":
        return RevertRequest(None, force, words)
    if not words:
        return RevertRequest([], force, words)
    names: dict[str, str] = {}
    for file in changes.files:
        names[file.path] = file.path
        if file.old_path is not None:
            names.setdefault(file.old_path, file.path)
    wanted = [words] if normal(words) in names else words.split()
    unknown = [word for word in wanted if normal(word) not in names]
    if unknown:
        listed = ", ".join(visible(word, newlines=False) for word in unknown)
        return f"✗ not among the files the last run changed: {listed} (/changes lists them)"
    paths = list(dict.fromkeys(names[normal(word)] for word in wanted))
    return RevertRequest(paths, force, words)


def normal(path: str) -> str:
    """A typed path as ``agent/getChanges`` writes it: ``./a.txt`` is ``a.txt``."""
    while path.startswith("./"):
        path = path[2:]
    return path


def revert_report(result: RevertChangesResult) -> list[tuple[str, str]]:
    """The lines saying what a revert did: ``(text, style)`` each."""
    done = [f"{file.action} {file.path}" for file in result.reverted]
    lines = [(f"↶ reverted: {', '.join(done)}" if done else "↶ nothing was reverted", "bold")]
    lines += [(f"  skipped {file.path}: {file.reason}", "yellow") for file in result.skipped]
    return lines


def conflict_lines(data: object, request: RevertRequest, changes: ChangesResult) -> list[tuple[str, str]]:
    """The refusal of a revert (``fileConflict``): the files and why, and how to revert the others."""
    conflicts = data.get("files") if isinstance(data, dict) else None
    files = [file for file in conflicts or [] if isinstance(file, dict)]
    lines = [("✗ these files changed since the run; nothing was reverted:", "red")]
    lines += [(f"  {file.get('path')}: {file.get('reason')}", "yellow") for file in files]
    asked = request.files if request.files is not None else [file.path for file in changes.files]
    others = set(asked) - {file.get("path") for file in files}
    if others:
        lines.append(
            (f"/revert {request.words} force reverts the others and leaves these as they are", "yellow")
        )
    else:
        lines.append(("a revert never overwrites what changed since: these stay as they are", "yellow"))
    return lines


class RevertCompleter(Completer):
    """The paths after ``/revert `` (and ``all``), from ``paths()``: the last run's changed files.

    ``paths`` may ask the server (run it threaded).
    """

    def __init__(self, paths: Callable[[], list[str]]) -> None:
        self.paths = paths

    @staticmethod
    def wants(document: Document) -> bool:
        return document.text_before_cursor.startswith(REVERT_PREFIX)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        if not self.wants(document):
            return
        typed = document.text_before_cursor[len(REVERT_PREFIX) :]
        paths = self.paths()
        first = " " not in typed or any(typed.lower() in path.lower() for path in paths)
        if not first:
            typed = typed.rpartition(" ")[2]  # the next of several paths
        if paths and first and "all".startswith(typed):
            yield Completion(
                "all", start_position=-len(typed), display_meta="everything the last run changed"
            )
        for path in ranked(paths, typed):
            yield Completion(path, start_position=-len(typed), display=visible(path, newlines=False))
