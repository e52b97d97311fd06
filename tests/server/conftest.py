"""Fixtures for driving the real ``agentls serve`` subprocess over stdio.

Every test gets its own data directory and faux script file; the :class:`AgentClient`
fixture starts a server configured with both (the script is read when a session is
created, so a test writes it before ``new_session``). :class:`Recorder` keeps every
notification the client receives and lets a test await the one it needs, always with
a deadline: nothing here can hang a test run.

Starting a server takes most of a second, so the tests that need nothing but a working
server share one per module (:func:`shared`). The async fixtures therefore run in the
module's event loop, and so must the tests using them:
``pytestmark = pytest.mark.asyncio(loop_scope="module")``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agentls.client import AgentClient, Notification
from agentls.protocol import RequestPermissionParams

WAIT = 10.0
"""Seconds any single wait (a notification, a request, a server exit) may take."""

TEST_BUDGET = 45
"""Seconds one whole test may take, setup and teardown included (a last-resort watchdog)."""

SLOW = {"tokensPerSecond": 20, "tokenSize": {"min": 1, "max": 1}}
"""Faux pace: one 4-character chunk every 50 ms."""

LONG_TEXT = "All work and no play makes a faux model a dull model. " * 40
"""At the :data:`SLOW` pace this streams for about 27 s: long enough to act during it."""


class WatchdogTimeout(Exception):
    """The watchdog fired: the test took longer than :data:`TEST_BUDGET`."""


@contextlib.contextmanager
def watchdog(seconds: int = TEST_BUDGET) -> Iterator[None]:
    """Fail (rather than hang) a test that runs for more than ``seconds``."""
    if sys.platform == "win32" or not hasattr(signal, "SIGALRM"):
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise WatchdogTimeout(f"the test ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


async def within(awaitable: Any, seconds: float = WAIT) -> Any:
    """Await with a deadline."""
    return await asyncio.wait_for(awaitable, seconds)


def write_faux_script(
    path: Path,
    responses: list[Any],
    *,
    tokens_per_second: float | None = None,
    token_size: tuple[int, int] | None = None,
) -> Path:
    """Write a faux script (the conformance ``model`` format) to ``path``."""
    script: dict[str, Any] = {"responses": responses}
    if tokens_per_second is not None:
        script["tokensPerSecond"] = tokens_per_second
    if token_size is not None:
        script["tokenSize"] = {"min": token_size[0], "max": token_size[1]}
    path.write_text(json.dumps(script), encoding="utf-8")
    return path


class FauxScript:
    """The faux script file of a test's servers: call it to (re)write the responses.

    ``slow=True`` streams one 4-character chunk every 50 ms (see :data:`SLOW`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, responses: list[Any], *, slow: bool = False, **options: Any) -> Path:
        if slow:
            options = {"tokens_per_second": 20, "token_size": (1, 1), **options}
        return write_faux_script(self.path, responses, **options)


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


class Recorder:
    """Every notification a client receives, in order, from when it was created."""

    def __init__(self, client: AgentClient) -> None:
        self.client = client
        self.notes: list[Notification] = []
        self._changed = asyncio.Event()
        self._ready = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._record())

    async def _record(self) -> None:
        async with self.client.subscribe() as notes:
            self._ready.set()
            async for note in notes:
                self.notes.append(note)
                self._changed.set()

    async def start(self) -> Recorder:
        await within(self._ready.wait())
        return self

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def wait_for(
        self, predicate: Callable[[Notification], bool], *, count: int = 1, seconds: float = WAIT
    ) -> Notification:
        """The ``count``-th notification (of all received so far) matching ``predicate``."""

        async def wait() -> Notification:
            while True:
                matches = [n for n in self.notes if predicate(n)]
                if len(matches) >= count:
                    return matches[count - 1]
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(wait(), seconds)
        except TimeoutError:
            seen = [(n.method, n.params.get("event", {}).get("type")) for n in self.notes[-10:]]
            raise AssertionError(f"no matching notification within {seconds} s; last ones: {seen}") from None

    async def wait_event(self, session_id: str, event_type: str, *, count: int = 1, **fields: Any) -> dict:
        """The ``count``-th ``agent/event`` of a session with this event type (and these event fields)."""

        def match(note: Notification) -> bool:
            if note.method != "agent/event" or note.session_id != session_id:
                return False
            event = note.params["event"]
            return event["type"] == event_type and all(event.get(k) == v for k, v in fields.items())

        return (await self.wait_for(match, count=count)).params

    async def wait_delta(self, session_id: str, *, count: int = 1, run_id: str | None = None) -> dict:
        """The ``count``-th ``text_delta`` of a session, or of one of its runs (the model is streaming).

        Without ``run_id`` the deltas of the session's earlier runs count too.
        """

        def match(note: Notification) -> bool:
            return (
                note.method == "agent/event"
                and note.session_id == session_id
                and (run_id is None or note.params.get("runId") == run_id)
                and note.params["event"]["type"] == "message_update"
                and note.params["event"]["assistantMessageEvent"]["type"] == "text_delta"
            )

        return (await self.wait_for(match, count=count)).params

    async def settled(self, run_id: str) -> dict:
        """The ``agent/settled`` of a run."""
        note = await self.wait_for(lambda n: n.method == "agent/settled" and n.params["runId"] == run_id)
        return note.params

    def of(self, session_id: str, method: str | None = None) -> list[dict]:
        """The params of a session's notifications (of one method) so far."""
        return [
            n.params
            for n in self.notes
            if n.session_id == session_id and (method is None or n.method == method)
        ]

    def events(self, session_id: str, run_id: str | None = None) -> list[dict]:
        """The ``agent/event`` params of a session (of one run) so far."""
        return [p for p in self.of(session_id, "agent/event") if run_id is None or p["runId"] == run_id]


async def server_process(*args: str, **options: Any) -> asyncio.subprocess.Process:
    """``agentls serve ARGS`` as a subprocess whose stdin and stdout the test speaks on."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "serve",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        **options,
    )


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    with watchdog():
        yield


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder to use as a session's ``cwd`` (resolved, as the server reports it)."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path.resolve()


@pytest.fixture
def faux_script(tmp_path: Path) -> FauxScript:
    """The test's faux script writer; by default the script answers ``"Hello!"`` once."""
    script = FauxScript(tmp_path / "faux.json")
    script([{"content": "Hello!"}])
    return script


def server_options(data_dir: Path, faux_script: FauxScript | None) -> dict[str, Any]:
    options: dict[str, Any] = {"dataDir": str(data_dir)}
    if faux_script is not None:
        options["fauxScript"] = str(faux_script.path)
    return options


class Servers:
    """Starts :class:`AgentClient` servers for a test and makes sure every one of them ends."""

    def __init__(self) -> None:
        self.clients: list[AgentClient] = []

    async def start(self, options: dict[str, Any], **kwargs: Any) -> AgentClient:
        client = AgentClient(initialization_options=options, **kwargs)
        self.clients.append(client)
        await within(client.start())
        return client

    async def close(self) -> None:
        for client in self.clients:
            with contextlib.suppress(Exception):
                await within(client.close(), 15)
            process = client._rpc._server
            if process is not None and process.returncode is None:
                process.kill()
                with contextlib.suppress(Exception):
                    await within(process.wait())


@pytest_asyncio.fixture(loop_scope="module")
async def servers() -> AsyncIterator[Servers]:
    started = Servers()
    try:
        yield started
    finally:
        await started.close()


@pytest_asyncio.fixture(loop_scope="module")
async def client(servers: Servers, data_dir: Path, faux_script: FauxScript) -> AgentClient:
    """A client connected to a fresh server using the test's data dir and faux script."""
    return await servers.start(server_options(data_dir, faux_script))


@pytest_asyncio.fixture(loop_scope="module")
async def recorder(client: AgentClient) -> AsyncIterator[Recorder]:
    """Records every notification of :func:`client`."""
    recording = await Recorder(client).start()
    yield recording
    await recording.stop()


class Answers:
    """A client's answers to the server's questions, in order (then ``reject``), and the questions asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[RequestPermissionParams] = []

    async def __call__(self, request: RequestPermissionParams) -> str:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else "reject"


@pytest_asyncio.fixture(loop_scope="module")
async def start(tmp_path: Path, faux_script: FauxScript) -> AsyncIterator[Any]:
    """Starts clients of servers on the test's data dir and faux script: ``await start(answers,
    env=None, **initialization_options)`` (``answers`` answers the permission questions); closes them."""
    clients: list[AgentClient] = []

    async def start_client(
        answers: Any = None, env: dict[str, str] | None = None, **options: Any
    ) -> AgentClient:
        client = AgentClient(
            initialization_options={**server_options(tmp_path / "data", faux_script), **options},
            on_permission=answers,
            env=env,
        )
        await within(client.start())
        clients.append(client)
        return client

    yield start_client
    for client in clients:
        await within(client.close())


@dataclass
class Shared:
    """A server shared by the tests of a module, its recorder and its faux script."""

    client: AgentClient
    recorder: Recorder
    faux_script: FauxScript


@contextlib.asynccontextmanager
async def shared_server(root: Path, env: dict[str, str] | None = None) -> AsyncIterator[Shared]:
    """A server (with ``env`` added to its environment) and its recorder, its data and script in ``root``."""
    faux_script = FauxScript(root / "faux.json")
    faux_script([{"content": "Hello!"}])
    (root / "data").mkdir()
    started = Servers()
    try:
        with watchdog():
            client = await started.start(server_options(root / "data", faux_script), env=env or {})
            recorder = await Recorder(client).start()
        yield Shared(client, recorder, faux_script)
        await recorder.stop()
    finally:
        with watchdog():
            await started.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    """One server for the tests that need only their own sessions (each writes its faux script first)."""
    async with shared_server(tmp_path_factory.mktemp("shared")) as server:
        yield server
