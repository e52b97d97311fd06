"""``@path`` mentions in chat's input, as the editors have them: completed from the workspace's files,
sent as ``file`` attachments (protocol.md "Editor context"), shown as chips in the transcript.

The completion lists the files the search tools would (``.gitignore``d ones and ``.git`` left
out: the walk of ``find``), ranked as VS Code's ``@`` menu ranks them. The mention stays in the
prompt's text; each mention of an existing file of the folder also attaches that file, so the
model reads it with the prompt (the server reads it as ``read`` would, cut past 2,000 lines).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

TYPED = re.compile(r"(?:^|\s)@(\S*)$")
"""The ``@word`` before the cursor: ``@`` at the start or after a blank, then no blank."""
MENTION = re.compile(r"(?:^|(?<=\s))@(\S+)")
TRAILING = ".,;:!?)]}'\"`"
"""What may end a sentence after a mention without being part of the path."""

SHOWN = 50
"""Completions offered at once."""
WALK_ENTRIES = 50_000
WALK_SECONDS = 2.0


def workspace_files(folder: str) -> list[str]:
    """The folder's files the search tools see, ``/``-separated and relative, in sorted order (bounded)."""
    from agentls.tools.walk import Bounds, Budget, Tree  # the tools layer takes half a second to load
    from agentls.tools.workspace import DiskWorkspace

    budget = Budget(Bounds(entries=WALK_ENTRIES, seconds=WALK_SECONDS), None)
    with contextlib.closing(Tree(DiskWorkspace(folder)).walk(Path(folder), ".", budget)) as walk:
        return [file.relative for file in walk]


def ranked(files: Iterable[str], typed: str) -> list[str]:
    """The files whose path holds ``typed`` (any case): by name first, then by path start, then the rest."""
    query = typed.lower()
    found: list[tuple[int, int, str]] = []
    for path in files:
        lower = path.lower()
        name = lower.rpartition("/")[2]
        rank = 0 if name.startswith(query) else 1 if lower.startswith(query) else 2 if query in lower else -1
        if rank >= 0:
            found.append((rank, len(path), path))
    return [path for _, _, path in sorted(found)[:SHOWN]]


class MentionCompleter(Completer):
    """``@`` and the start of a path: the workspace's files (run it threaded: it walks the folder).

    The folder is walked once per input (at its first ``@``); :meth:`forget` it when the input is sent.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.files: list[str] | None = None

    def forget(self) -> None:
        """The files may have changed: walk again at the next ``@``."""
        self.files = None

    @staticmethod
    def wants(document: Document) -> bool:
        return TYPED.search(document.text_before_cursor) is not None

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        match = TYPED.search(document.text_before_cursor)
        if match is None:
            return
        typed = match.group(1)
        if self.files is None:
            self.files = workspace_files(self.folder)
        for path in ranked(self.files, typed):
            yield Completion(path, start_position=-len(typed), display=f"@{path}")


def mentioned_file(folder: str, name: str) -> str | None:
    """The file of ``folder`` that ``@name`` means (punctuation after it dropped), or ``None``."""
    root = os.path.realpath(folder)
    while name:
        path = os.path.realpath(os.path.join(root, name))
        if os.path.isfile(path) and os.path.commonpath([root, path]) == root:
            return path
        shorter = name.rstrip(TRAILING)
        if shorter == name:
            return None
        name = shorter
    return None


def attachments(folder: str, text: str) -> list[dict[str, Any]]:
    """The ``file`` attachments of the mentions of existing files in ``text``, each file once."""
    paths: list[str] = []
    for match in MENTION.finditer(text):
        path = mentioned_file(folder, match.group(1))
        if path is not None and path not in paths:
            paths.append(path)
    return [{"type": "file", "uri": Path(path).as_uri()} for path in paths]
