"""The per-user server end to end: runs that outlive their client, attach with replay, several
clients on one session, questions to whoever is there, the socket's safety and the idle exit.

Every client reaches the server through the real stdio bridge (``agentls serve --attach``); the
server is the real ``agentls serve --listen`` on a socket in a folder of the test's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from agentls.bridge import listen_command
from agentls.client import AgentClient, AgentClientError, per_user_server_command
from agentls.protocol import RequestPermissionParams
from lsprotocol import types
from pytest_lsp import ClientServerConfig

from tests.server.conftest import WAIT, FauxScript, Recorder, Servers, server_options, tool_call, within
from tests.server.test_editor_workspace import EDITING, Editor
from tests.server.test_pytest_lsp import plain

SHORT_SLOW_TEXT = "All work and no play makes a faux model a dull model. " * 3
"""At the slow pace (a 4-character chunk every 50 ms) this streams for about 2 s."""


async def start_server(path: Path, *args: str) -> asyncio.subprocess.Process:
    """``agentls serve --listen unix:PATH`` as the test's own process, once it listens."""
    read_end, write_end = os.pipe()
    process = await asyncio.create_subprocess_exec(
        *listen_command(path, write_end, args),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        pass_fds=(write_end,),
    )
    os.close(write_end)
    with os.fdopen(read_end, "rb") as ready:
        line = await within(asyncio.to_thread(ready.readline))
    assert line == b"ready\n", (await within(process.stderr.read())).decode()  # type: ignore[union-attr]
    return process


async def stop_server(process: asyncio.subprocess.Process) -> int:
    if process.returncode is None:
        process.terminate()
    return await within(process.wait(), 15)


@pytest_asyncio.fixture
async def per_user(socket_dir: Path) -> AsyncIterator[Path]:
    """A per-user server on ``socket_dir/s.sock`` (questions wait 2 s for a client); its socket path."""
    path = socket_dir / "s.sock"
    process = await start_server(path, "--question-timeout", "2")
    try:
        yield path
    finally:
        assert await stop_server(process) == 0
        assert not path.exists()  # the server removed its socket


@pytest_asyncio.fixture
async def bridges() -> AsyncIterator[Servers]:
    started = Servers()
    try:
        yield started
    finally:
        await started.close()


async def bridge(
    servers: Servers, path: Path, data_dir: Path, faux_script: FauxScript, **kwargs: Any
) -> AgentClient:
    """A client of the per-user server through its own bridge process."""
    return await servers.start(
        server_options(data_dir, faux_script), command=per_user_server_command(str(path)), **kwargs
    )


async def slow_run(
    servers: Servers, path: Path, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> tuple[AgentClient, Recorder, str, str | None]:
    """A client, its recorder, its new session and the run it started, streaming ``SHORT_SLOW_TEXT``."""
    faux_script([{"content": SHORT_SLOW_TEXT}], slow=True)
    client = await bridge(servers, path, data_dir, faux_script)
    seen = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace)))
    run_id = (await within(client.prompt(session, "Write"))).run_id
    await seen.wait_delta(session)
    return client, seen, session, run_id


def numbered(recorder: Recorder, session: str) -> list[int]:
    return [params["seq"] for params in recorder.of(session)]


async def test_a_run_outlives_its_client_and_a_second_client_attaches_without_a_gap(
    per_user: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    first, first_seen, session, run_id = await slow_run(bridges, per_user, data_dir, faux_script, workspace)
    # the first client's bridge is killed mid-run: the editor window closed
    first._rpc._server.kill()  # type: ignore[union-attr]
    await within(first._rpc._server.wait())  # type: ignore[union-attr]
    # since the one before the last the first client saw: the last one at least is replayed, however
    # far the run got meanwhile (a bridge starts in tens of milliseconds, the stream's pace is 50)
    since = numbered(first_seen, session)[-2]
    await first_seen.stop()

    second = await bridge(bridges, per_user, data_dir, faux_script)
    listed = {info.session_id: info for info in await within(second.list_sessions())}
    assert (listed[session].loaded, listed[session].running, listed[session].clients) == (True, True, 0)
    recorder = await Recorder(second).start()
    attached = await within(second.attach(session, since=since))
    assert attached.attached and not attached.gap and attached.replayed >= 1
    settled = await recorder.settled(run_id)
    assert settled["stopReason"] == "stop"
    # every notification after ``since``, exactly once, in order, settled last
    seqs = numbered(recorder, session)
    assert seqs == list(range(since + 1, since + 1 + len(seqs)))
    assert recorder.of(session)[-1] == settled
    messages = (await within(second.get_messages(session))).messages
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"][0]["text"] == SHORT_SLOW_TEXT and messages[1]["stopReason"] == "stop"
    listed = {info.session_id: info for info in await within(second.list_sessions())}
    assert (listed[session].running, listed[session].clients) == (False, 1)
    # a seq from another life of the server (past the session's last) is a gap
    again = await within(second.attach(session, since=seqs[-1] + 100))
    assert again.gap and again.replayed == 0 and again.seq == seqs[-1]
    await recorder.stop()


async def test_get_messages_and_attach_join_a_run_midway(
    per_user: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    first, first_seen, session, run_id = await slow_run(bridges, per_user, data_dir, faux_script, workspace)

    second = await bridge(bridges, per_user, data_dir, faux_script)
    recorder = await Recorder(second).start()
    loaded = await within(second.get_messages(session))
    assert [m["role"] for m in loaded.messages] == ["user"]  # the answer is still being streamed
    attached = await within(second.attach(session, since=loaded.seq))
    assert not attached.gap
    await recorder.settled(run_id)
    await first_seen.settled(run_id)
    # what the list lacked came as events: the answer from its message_start, with every delta
    events = [params["event"] for params in recorder.events(session)]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "message_start" and events[0]["message"]["role"] == "assistant"
    deltas = "".join(
        event["assistantMessageEvent"].get("delta", "")
        for event in events
        if event["type"] == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta"
    )
    assert deltas == SHORT_SLOW_TEXT
    # both clients got the same notifications from there on
    tail = numbered(recorder, session)
    assert numbered(first_seen, session)[-len(tail) :] == tail
    # detached, a client hears no more of the session
    assert await within(second.detach(session)) is True
    assert await within(second.detach(session)) is False
    count = len(recorder.of(session))
    faux_script([{"content": "Again."}])
    await within(first.prompt(session, "Again", wait=True))
    assert len(recorder.of(session)) == count
    await recorder.stop()
    await first_seen.stop()


async def test_a_question_goes_to_every_attached_client_and_the_first_answer_wins(
    per_user: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": [tool_call("c1", "bash", {"command": "echo asked"})]}, {"content": "Done."}])
    asked_first = asyncio.Event()
    first_cancelled = asyncio.Event()

    async def never_answers(params: RequestPermissionParams) -> str:
        asked_first.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            first_cancelled.set()
            raise
        return "reject"

    first = await bridge(bridges, per_user, data_dir, faux_script, on_permission=never_answers)
    session = await within(first.new_session(cwd=str(workspace)))
    run_id = (await within(first.prompt(session, "Run it"))).run_id
    await within(asked_first.wait())

    asked_second: list[RequestPermissionParams] = []

    def allows(params: RequestPermissionParams) -> str:
        asked_second.append(params)
        return "allowOnce"

    second = await bridge(bridges, per_user, data_dir, faux_script, on_permission=allows)
    recorder = await Recorder(second).start()
    await within(second.attach(session))  # attached while the question is open: asked too
    settled = await recorder.settled(run_id)
    assert settled["stopReason"] == "stop"
    assert [params.tool_name for params in asked_second] == ["bash"]
    await within(first_cancelled.wait())  # the first client's question was cancelled ($/cancelRequest)
    messages = (await within(second.get_messages(session))).messages
    assert messages[2]["role"] == "toolResult" and "asked" in messages[2]["content"][0]["text"]
    await recorder.stop()


async def test_a_question_with_no_client_attached_is_rejected_after_the_timeout(
    per_user: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script(
        [{"content": [tool_call("c1", "bash", {"command": "echo never"})]}, {"content": "Understood."}]
    )
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    async def never_answers(params: RequestPermissionParams) -> str:
        asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            withdrawn.set()
        return "reject"

    first = await bridge(bridges, per_user, data_dir, faux_script, on_permission=never_answers)
    session = await within(first.new_session(cwd=str(workspace)))
    await within(first.prompt(session, "Run it"))
    await within(asked.wait())
    assert await within(first.detach(session))
    await within(withdrawn.wait())  # detached, its question is cancelled ($/cancelRequest)
    # nobody is attached: the question waits 2 s (--question-timeout) and is rejected. A detached
    # client hears nothing of the session (attaching would get it asked), so it looks now and then.
    await within(_until_settled(first, session))
    result = (await within(first.get_messages(session))).messages[2]
    assert result["role"] == "toolResult" and result["isError"]
    assert "no client was attached to answer within 2 s" in result["content"][0]["text"]
    assert (await within(first.get_messages(session))).messages[3]["role"] == "assistant"


async def _until_settled(client: AgentClient, session: str) -> None:
    while (await client.get_state(session)).is_running:  # noqa: ASYNC110 (no event reaches a detached client)
        await asyncio.sleep(0.05)


async def test_load_session_of_a_live_session_attaches_to_it(
    per_user: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    first = await bridge(bridges, per_user, data_dir, faux_script)
    session = await within(first.new_session(cwd=str(workspace)))
    second = await bridge(bridges, per_user, data_dir, faux_script)
    recorder = await Recorder(second).start()
    loaded = await within(second.load_session(session))
    assert loaded.session_id == session and loaded.message_count == 0
    run = await within(first.prompt(session, "Hi", wait=True))
    assert run.stop_reason == "stop"
    assert (await recorder.settled(run.run_id))["stopReason"] == "stop"  # the second client hears the run
    listed = {info.session_id: info for info in await within(first.list_sessions())}
    assert listed[session].clients == 2
    with pytest.raises(AgentClientError) as unknown:
        await within(second.attach("no-such-session"))
    assert unknown.value.kind == "unknownSession"
    await recorder.stop()


# --- the socket ------------------------------------------------------------------------------


async def refused(path: Path | str) -> str:
    """What the per-user server says when it refuses to listen on ``path`` (exit code 2)."""
    address = f"unix:{path}" if isinstance(path, Path) else path
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agentls", "serve", "--listen", address, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await within(process.communicate(), 15)
    assert process.returncode == 2
    return stderr.decode()


def bound(path: Path) -> None:
    """A socket file at ``path`` that nothing answers on (as a server that died leaves it)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as left:
        left.bind(str(path))


async def test_the_socket_is_the_users_own(socket_dir: Path, bridges: Servers, data_dir: Path) -> None:
    path = socket_dir / "s.sock"
    # a stale socket (nothing answers) is replaced, with mode 0600 in a 0700 folder
    bound(path)
    process = await start_server(path, "--idle-exit", "0")
    try:
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
        assert oct(os.stat(socket_dir).st_mode & 0o777) == "0o700"
        # one that answers is not taken over
        assert "already answers" in await refused(path)
    finally:
        assert await stop_server(process) == 0
    # another user's socket is refused, by the server and by the bridge
    bound(path)
    os.chown(path, 65534, 65534)
    assert "belongs to another user" in await refused(path)
    client = AgentClient(
        per_user_server_command(str(path)), initialization_options={"dataDir": str(data_dir)}
    )
    with pytest.raises(AgentClientError):
        await within(client.start())
    path.unlink()
    # a folder others may write in is refused (another user could put a socket there)
    open_folder = socket_dir / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    assert "writable by other users" in await refused(open_folder / "s.sock")
    assert "takes unix:PATH" in await refused("tcp:1234")


async def test_the_bridge_starts_the_server_which_stops_when_idle(
    socket_dir: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    path = socket_dir / "run" / "s.sock"
    command = [*per_user_server_command(str(path)), "--idle-exit", "0.5"]
    client = await bridges.start(server_options(data_dir, faux_script), command=command)
    session = await within(client.new_session(cwd=str(workspace)))
    assert (await within(client.prompt(session, "Hi", wait=True))).stop_reason == "stop"
    assert path.exists() and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    server = await within(asyncio.to_thread(_server_pid, path))
    await within(client.close())
    # no client, nothing running: the server stops on its own, its socket removed
    await within(asyncio.to_thread(_wait_gone, server))
    assert not path.exists()
    assert "listening on" in (path.parent / "serve.log").read_text()


def _server_pid(path: Path) -> int:
    """The pid of the process listening on ``path`` (``SO_PEERCRED`` of a connection to it)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(str(path))
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(credentials[:4], sys.byteorder)


def _wait_gone(pid: int) -> None:
    """Until process ``pid`` has ended (it is not our child: pidfd tells when)."""
    with contextlib.suppress(ProcessLookupError):
        fd = os.pidfd_open(pid)
        try:
            import select

            select.select([fd], [], [], WAIT)
        finally:
            os.close(fd)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


# --- the editor's edits and the run's processes ------------------------------------------------


async def test_the_terminal_starts_a_run_whose_edit_lands_in_the_editor_that_has_the_file_open(
    per_user: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("one\ntwo\n")
    edit = tool_call("e1", "edit", {"path": "notes.txt", "edits": [{"oldText": "two", "newText": "TWO"}]})
    faux_script([{"content": [edit]}, {"content": "Edited."}])
    lsp = await ClientServerConfig(server_command=per_user_server_command(str(per_user))).start()
    try:
        editor = Editor(lsp)
        await within(
            lsp.initialize_session(
                types.InitializeParams(
                    capabilities=EDITING, initialization_options=server_options(data_dir, faux_script)
                )
            )
        )
        editor.open(target)
        created = plain(
            await within(lsp.protocol.send_request_async("agent/newSession", {"cwd": str(workspace)}))
        )
        session = created["sessionId"]
        # the terminal joins the editor's session and starts the run
        terminal = await bridge(bridges, per_user, data_dir, faux_script)
        await within(terminal.load_session(session))
        settled = lsp.protocol.wait_for_notification_async("agent/settled")
        run = await within(terminal.prompt(session, "Make two loud", wait=True))
        assert run.stop_reason == "stop"
        assert plain(await within(settled))["runId"] == run.run_id  # the editor saw the run too
        # the edit went to the editor that has the file open, as an undoable workspace/applyEdit
        [applied] = editor.edits
        [change] = applied.edit.document_changes
        assert change.text_document.uri == target.as_uri()
        assert editor.text(target) == "one\nTWO\n"
        result = (await within(terminal.get_messages(session))).messages[2]
        assert result["role"] == "toolResult" and not result["isError"]
        await within(lsp.shutdown_session())
    finally:
        await lsp.stop()


async def test_a_stopped_server_ends_its_runs_and_their_processes(
    socket_dir: Path, bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    path = socket_dir / "s.sock"
    server = await start_server(path)
    sleeper = tool_call("b1", "bash", {"command": "sleep 300 & echo $! > sleeper.pid; wait"})
    faux_script([{"content": [sleeper]}, {"content": "Slept."}])
    client = await bridge(bridges, path, data_dir, faux_script, on_permission=lambda params: "allowOnce")
    recorder = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace)))
    await within(client.prompt(session, "Sleep"))
    await recorder.wait_for(
        lambda note: note.method == "agent/event" and note.params["event"]["type"] == "tool_execution_start"
    )
    pid_file = workspace / "sleeper.pid"
    await within(_until_written(pid_file))
    pid = int(pid_file.read_text())
    await within(client.close())  # the client leaves: the run goes on
    assert await asyncio.to_thread(os.path.exists, f"/proc/{pid}")
    assert await stop_server(server) == 0  # SIGTERM: the run is aborted, its processes ended
    await within(asyncio.to_thread(_wait_gone, pid))
    await recorder.stop()


async def _until_written(path: Path) -> None:
    while not await asyncio.to_thread(lambda: path.exists() and path.read_text().strip() != ""):  # noqa: ASYNC110 (bash writes a file: no event)
        await asyncio.sleep(0.02)


async def test_on_stdio_attach_replays_what_get_messages_lacks_and_an_older_seq_is_a_gap(
    bridges: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": SHORT_SLOW_TEXT}], slow=True)
    client = await bridges.start(server_options(data_dir, faux_script))  # agentls serve on stdio
    recorder = await Recorder(client).start()
    session = await within(client.new_session(cwd=str(workspace)))
    run_id = (await within(client.prompt(session, "Write"))).run_id
    await recorder.wait_delta(session)
    assert await within(client.detach(session))
    loaded = await within(client.get_messages(session))
    heard = len(recorder.of(session))
    attached = await within(client.attach(session, since=loaded.seq))
    assert not attached.gap
    await recorder.settled(run_id)
    joined = recorder.of(session)[heard:]  # what the attach sent: from the answer's message_start on
    assert joined[0]["seq"] == loaded.seq + 1 and joined[0]["event"]["type"] == "message_start"
    assert [note["seq"] for note in joined] == list(range(loaded.seq + 1, loaded.seq + 1 + len(joined)))
    # a client on stdio cannot come back after its connection ended: an older seq is not kept for it
    older = await within(client.attach(session, since=1))
    assert older.gap and older.replayed == 0
    await recorder.stop()
