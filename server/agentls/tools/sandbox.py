"""The sandbox of the agent's ``bash``: what a session's settings mean for each command.

A :class:`Sandbox` turns a session's :class:`~agentls.protocol.SandboxSettings` into the
:class:`Confinement` of each call (the plan its keeper applies with
:func:`agentls.tools.landlock.confine`, and the ``TMPDIR`` it gets), says whether the kernel
can enforce it (:meth:`Sandbox.state`) and, when a confined command failed, what of its output
looks like the sandbox's doing (:func:`denial_note`). The user's own commands (``agent/bash``)
are never confined.

- ``workspace-write``: writes in the session's folder, the session's temporary folder and
  ``writableRoots``; the folder's ``.git`` stays read-only unless it (or a folder holding it)
  is listed in ``writableRoots``.
- ``read-only``: writes in the temporary folder only.
- ``network: false``: no TCP connection or listening socket (see :mod:`agentls.tools.landlock`
  for what is and is not covered).

A kernel without the Landlock ABI the mode needs refuses: the command does not run and its
result says why, unless ``fallback`` is ``unconfined``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

from agentls.protocol import SandboxSettings, SandboxState
from agentls.tools import landlock
from agentls.tools.output_files import server_folder


class SandboxRefused(OSError):
    """A command was not run: the sandbox cannot be enforced (the message says why and what to do)."""


@dataclass(frozen=True)
class Confinement:
    """What the keeper of one call confines itself to: ``plan`` (see :func:`landlock.confine`)
    and the variables added to the command's environment."""

    plan: dict[str, Any]
    environment: dict[str, str]


_DENIED = re.compile(r"Permission denied|Read-only file system|Operation not permitted", re.IGNORECASE)
_MAX_NOTED = 5


class Sandbox:
    """The sandbox of one session's ``bash``, from its settings and folder."""

    def __init__(self, settings: SandboxSettings, cwd: str) -> None:
        self.settings = settings
        self.root = os.path.realpath(cwd)
        self._temp: str | None = None

    @property
    def active(self) -> bool:
        return self.settings.mode != "off"

    def _writable(self) -> list[str]:
        """The folders a command may write in (``writableRoots`` count in ``workspace-write`` only)."""
        if self.settings.mode != "workspace-write":
            return [self._temp] if self._temp else []
        extra = [os.path.realpath(os.path.join(self.root, path)) for path in self.settings.writable_roots]
        return [self.root, *([self._temp] if self._temp else []), *extra]

    def _read_only(self) -> list[str]:
        if self.settings.mode != "workspace-write":
            return []
        git = os.path.join(self.root, ".git")
        extra = [os.path.realpath(os.path.join(self.root, path)) for path in self.settings.writable_roots]
        if any(git == path or git.startswith(path.rstrip("/") + "/") for path in extra):
            return []
        return [git]

    def unsupported(self) -> str | None:
        """Why the kernel cannot enforce this sandbox, or ``None`` when it can."""
        needed = landlock.MIN_ABI_FILES if self.settings.network else landlock.MIN_ABI_NETWORK
        found = landlock.abi()
        if found >= needed:
            return None
        what = "Landlock" if found == 0 else f"Landlock ABI {needed} (it has {found})"
        return f"this kernel has no {what}, which the {self.settings.mode} sandbox needs"

    def state(self) -> SandboxState:
        reason = self.unsupported() if self.active else None
        status = "off"
        if self.active:
            status = "enforced" if reason is None else "unconfined" if self._falls_back else "refused"
        return SandboxState(
            mode=self.settings.mode,
            network=self.settings.network,
            writable_roots=self._writable() if self.active else [],
            read_only=[p for p in self._read_only() if os.path.lexists(p)],
            fallback=self.settings.fallback,
            status=status,
            reason=reason,
        )

    @property
    def _falls_back(self) -> bool:
        return self.settings.fallback == "unconfined"

    def confinement(self) -> Confinement | None:
        """The next call's confinement; ``None``: it runs unconfined (no sandbox, or the fallback).

        Raises :class:`SandboxRefused` when the kernel cannot enforce the sandbox and the
        fallback is to refuse. Blocks (it may make the temporary folder): call it in a thread.
        """
        if not self.active:
            return None
        if (reason := self.unsupported()) is not None:
            if self._falls_back:
                return None
            raise SandboxRefused(
                f'The command was not run: {reason}. Run it with the sandbox off (sandbox mode "off"), '
                'or let commands run unconfined where it cannot be enforced (sandbox fallback "unconfined").'
            )
        if self._temp is None or not os.path.isdir(self._temp):
            self._temp = tempfile.mkdtemp(prefix="sandbox-tmp-", dir=server_folder())
        plan = {
            "writable": self._writable(),
            "readOnly": [p for p in self._read_only() if os.path.lexists(p)],
            "network": self.settings.network,
        }
        return Confinement(plan, {"TMPDIR": self._temp})

    def command(self, command: list[str]) -> tuple[list[str], dict[str, str]]:
        """``command`` run through the confining launcher, and the variables to add to its
        environment (a stdio MCP server's); :class:`SandboxRefused` as :meth:`confinement`. Blocks."""
        confinement = self.confinement()
        if confinement is None:
            return command, {}
        launcher = [sys.executable, "-I", "-S", landlock.LAUNCHER, json.dumps(confinement.plan)]
        return [*launcher, *command], confinement.environment

    def denial_note(self, output: str) -> str | None:
        """A note for the result of a confined command that failed, when its output shows a denial."""
        lines = [line.strip() for line in output.splitlines() if _DENIED.search(line)]
        if not lines:
            return None
        shown = "\n".join(f"  {line}" for line in lines[:_MAX_NOTED])
        more = f"\n  ... and {len(lines) - _MAX_NOTED} more" if len(lines) > _MAX_NOTED else ""
        where = ", ".join(self._writable()) or "nowhere"
        kept = "".join(f"; {path} stays read-only" for path in self._read_only())
        network = "allowed" if self.settings.network else "off (no socket but unix ones)"
        return (
            f"[The sandbox ({self.settings.mode}) may have denied this. It lets commands write only in "
            f"{where}{kept}; network: {network}. Denied:\n{shown}{more}]"
        )

    def close(self) -> None:
        """Delete the temporary folder (blocks)."""
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
