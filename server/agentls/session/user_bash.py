"""The user's own shell commands (Pi's ``!cmd`` and ``!!cmd``): ``agent/bash`` and ``agent/abortBash``.

The user typed the command, so no permission question is asked. It runs in the session's
folder through the ``bash`` tool's executor (:class:`~agentls.tools.shell.ShellCommand`):
the same process group, abort and truncation rules, and no time limit, as the tool
without its ``timeout`` argument and as Pi's ``!cmd``. Its output streams as
:class:`~agentls.session.events.BashOutput` events; when it ends, its ``bashExecution``
message goes to the session (``record``), which puts it in the transcript or holds it until
the running run ends, and then :class:`~agentls.session.events.BashEnded` carries the message.

Processes a command leaves in the background are the user's, not a run's: they live
until the session is closed (or the server exits), whereas those of the ``bash`` tool end
with their run. The command's environment is the tool's (the providers' API keys left out,
see :mod:`agentls.tools.environment`), and its full-output file, when its output is cut,
is deleted when the session closes. One command runs at a time per session.
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from agentls.ai import AbortController, AgentMessage
from agentls.session.errors import SessionError
from agentls.session.events import BashEnded, BashOutput, SessionListener
from agentls.session.history.checkpoints import WorkspaceChanges
from agentls.session.messages import bash_execution_message
from agentls.tools.environment import ToolEnvironment
from agentls.tools.output_files import OutputFolder
from agentls.tools.processes import ProcessTracker
from agentls.tools.shell import ShellCommand, ShellResult

logger = logging.getLogger(__name__)


@dataclass
class _Command:
    bash_id: str
    command: str
    exclude_from_context: bool
    controller: AbortController = field(default_factory=AbortController)
    before: str | None = None
    """The snapshot of the folder the command started from."""
    ended: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    """Done once the command's :class:`BashEnded` has been told."""


_ANSI = re.compile(
    r"(?:\x1b\][\s\S]*?(?:\x07|\x1b\\|\x9c))"
    r"|[\x1b\x9b][\[\]()#;?]*(?:\d{1,4}(?:[;:]\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]",
    re.ASCII,
)
"""Pi's ``ansiRegex`` (from chalk's ansi-regex): OSC sequences up to their terminator, and CSI ones."""

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\ufff9-\ufffb]")
"""What Pi's bash executor drops: control characters but tab and newline (``\\r`` too), and the
interlinear annotation characters."""


def _message_output(result: ShellResult) -> str:
    """The command's output as Pi's bash executor gives it to the ``bashExecution`` message.

    ANSI sequences stripped, control characters dropped (``sanitizeBinaryOutput`` and its
    removal of ``\\r``), and, as Pi's ``truncateTail``, an output within the bounds kept whole
    with its final newline (a truncated one is its last lines joined, with no final newline).
    """
    output = result.output + ("\n" if result.ends_with_newline and not result.truncated else "")
    if "\x1b" in output or "\x9b" in output:
        output = _ANSI.sub("", output)
    return _CONTROLS.sub("", output)


def _message(command: _Command, result: ShellResult) -> AgentMessage:
    return bash_execution_message(
        command.command,
        output=_message_output(result),
        exit_code=result.exit_code,
        cancelled=result.ended_by is not None,
        truncated=result.truncated,
        full_output_path=result.full_output_path,
        exclude_from_context=command.exclude_from_context,
    )


class UserBash:
    """The ``agent/bash`` commands of one session: at most one running, its processes tracked."""

    def __init__(
        self,
        *,
        session_id: str,
        cwd: str,
        emit: SessionListener,
        record: Callable[[AgentMessage, WorkspaceChanges | None], Awaitable[None]],
        environment: ToolEnvironment | None = None,
        outputs: OutputFolder | None = None,
        snapshot: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        self._session_id = session_id
        self._cwd = cwd
        self._emit = emit
        self._record = record
        self._snapshot = snapshot
        """A snapshot of the folder (``None``: none taken), before and after each command."""
        self._tracker = ProcessTracker(environment, outputs)
        self._running: _Command | None = None
        self._task: asyncio.Task[None] | None = None
        """The running command's task (asyncio keeps only weak references to tasks)."""

    @property
    def running(self) -> bool:
        """A command of the user's goes on."""
        return self._running is not None

    async def start(self, command: str, exclude_from_context: bool) -> str:
        """Start ``command``; its ``bashId`` once it runs. ``busy`` while another one runs."""
        if not command.strip():
            raise SessionError("invalidParams", "command must not be empty")
        if self._running is not None:
            raise SessionError(
                "busy",
                f"Session {self._session_id} is running the command {self._running.bash_id}: "
                "wait for its agent/bashEnd or stop it with agent/abortBash.",
            )
        running = _Command(f"bash-{uuid.uuid4().hex[:12]}", command, exclude_from_context)
        self._running = running
        try:
            running.before = await self._snapshot() if self._snapshot is not None else None
            shell = await ShellCommand.start(command, self._cwd, self._tracker, self._chunk_sender(running))
        except OSError as error:
            self._end(running)
            raise SessionError("invalidParams", f"Cannot run a command in {self._cwd}: {error}") from error
        except asyncio.CancelledError:  # the request was cancelled: nothing runs
            self._end(running)
            raise
        self._task = asyncio.get_running_loop().create_task(self._finish(running, shell))
        return running.bash_id

    def _chunk_sender(self, running: _Command) -> Callable[[str], None]:
        def send(chunk: str) -> None:
            self._emit(BashOutput(self._session_id, running.bash_id, chunk))

        return send

    async def _finish(self, running: _Command, shell: ShellCommand) -> None:
        try:
            result = await shell.wait(running.controller.signal)
        except Exception as error:  # e.g. the full-output file could not be written: report it as output
            logger.exception("the command %s of session %s failed", running.bash_id, self._session_id)
            message = bash_execution_message(
                running.command, output=str(error), exit_code=None, cancelled=False, truncated=False
            )
        else:
            message = _message(running, result)
        pair = None
        if running.before is not None and self._snapshot is not None:
            after = await self._snapshot()
            if after is not None:
                pair = WorkspaceChanges(running.before, after, ("user",), bash_id=running.bash_id)
        try:
            await self._record(message, pair)
        except Exception:  # the store failed: the message is in the transcript, not in the file
            logger.exception(
                "the command %s of session %s could not be recorded", running.bash_id, self._session_id
            )
        self._emit(BashEnded(self._session_id, running.bash_id, message))
        self._end(running)

    def _end(self, running: _Command) -> None:
        """The command is over: the next one may start, and :meth:`abort` returns."""
        self._running = None
        self._task = None
        running.ended.set_result(None)

    async def abort(self) -> bool:
        """Stop the running command (its output so far is kept, ``cancelled: true``); whether one ran.

        Returns once its :class:`BashEnded` has been told.
        """
        running = self._running
        if running is None:
            return False
        running.controller.abort()
        await asyncio.shield(running.ended)
        return True

    async def close(self) -> None:
        """Stop the running command, end every process the session's commands left behind and
        delete their output files."""
        await self.abort()
        await self._tracker.close()
