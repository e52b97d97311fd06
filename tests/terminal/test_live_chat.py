"""`agentls chat --attach` in a real terminal (tmux): it joins an editor's live session of the
per-user server mid-run, shows the run as the editor sees it, and either side can go on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentls.client import per_user_server_command
from agentls.protocol import RequestPermissionParams

from tests.server.conftest import FauxScript, Recorder, Servers, server_options, tool_call, within
from tests.server.test_live_sessions import start_server, stop_server
from tests.terminal.conftest import Pane
from tests.terminal.test_terminal import workspace

STREAMED = "The editor asked, and the answer streams on while the terminal joins. " * 2


async def test_chat_attach_joins_the_editors_live_run_and_both_drive_the_session(
    pane: Pane, tmp_path: Path, socket_dir: Path
) -> None:
    folder = workspace(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    faux_script = FauxScript(tmp_path / "faux.json")
    bash = tool_call("b1", "bash", {"command": "echo answered-in-the-terminal"})
    faux_script(
        [{"content": [bash]}, {"content": STREAMED}, {"content": "Answered in the terminal."}], slow=True
    )
    path = socket_dir / "s.sock"
    server = await start_server(path)
    editors = Servers()
    editor_asked = asyncio.Event()
    editor_withdrawn = asyncio.Event()

    async def away_from_the_editor(params: RequestPermissionParams) -> str:
        editor_asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            editor_withdrawn.set()
        return "reject"

    try:
        editor = await editors.start(
            server_options(data, faux_script),
            command=per_user_server_command(str(path)),
            on_permission=away_from_the_editor,
        )
        seen = await Recorder(editor).start()
        session = await within(editor.new_session(cwd=str(folder)))
        run_id = (await within(editor.prompt(session, "Tell me slowly"))).run_id
        await within(editor_asked.wait())  # the run waits for an answer: nobody is at the editor

        args = ["chat", "--attach", "--socket", str(path), "--data-dir", str(data)]
        await asyncio.to_thread(pane.start, [*args, "--faux-script", str(faux_script.path)], folder)
        screen = await asyncio.to_thread(
            pane.wait_for, "allow? [o]nce"
        )  # the open question is asked here too
        assert f"joined live session {session} · 2 messages · 1 other client · running" in screen
        assert "Tell me slowly" in screen  # the prompt so far, from the transcript
        await asyncio.to_thread(
            pane.keys, "o"
        )  # answered in the terminal: the editor's question is withdrawn
        await within(editor_withdrawn.wait())
        await seen.settled(run_id)
        await asyncio.to_thread(pane.wait_for, "the terminal joins. The editor")
        await asyncio.to_thread(
            pane.wait_until, lambda screen: screen.count("faux/faux-1") >= 2, "the footer"
        )
        # the terminal prompts the same session: the editor's client sees that run
        await asyncio.to_thread(pane.type, "And now you?")
        await asyncio.to_thread(pane.wait_for, "Answered in the terminal.")
        terminal_run = await seen.wait_for(
            lambda note: note.method == "agent/settled" and note.params["runId"] != run_id
        )
        assert terminal_run.params["stopReason"] == "stop"
        messages = (await within(editor.get_messages(session))).messages
        assert [m["role"] for m in messages] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant",
        ]
        assert "answered-in-the-terminal" in messages[2]["content"][0]["text"]
        # leaving the chat leaves the session live in the per-user server
        await asyncio.to_thread(pane.keys, "C-d")
        screen = await asyncio.to_thread(pane.wait_for, "[exited 0]")
        assert f"session {session} (live in the per-user server)" in screen
        # each message once: what the transcript had, then what streamed
        assert screen.count("Tell me slowly") == 1 and screen.count("Answered in the terminal.") == 1
        assert screen.count("the terminal joins.") == 2  # the answer's two sentences, once
        listed = {info.session_id: info for info in await within(editor.list_sessions())}
        assert listed[session].loaded and listed[session].clients == 1
        await seen.stop()
    finally:
        await editors.close()
        assert await stop_server(server) == 0
