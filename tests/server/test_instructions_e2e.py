"""The system prompt, project instructions, skills and prompt templates end to end, through the real server.

What the model is sent is seen on the wire: these sessions run on a provider of
``models.json`` that speaks Anthropic's Messages API to a mock server on 127.0.0.1,
which records every request. The server's ``HOME`` is the test's, so the machine's
``~/.agents/skills`` cannot leak in.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient
from agentls.protocol import RequestPermissionParams
from agentls.protocol_methods import SettledNotification

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text, a_tool
from tests.ai.providers.mock_http import MockServer
from tests.server.conftest import LONG_TEXT, FauxScript, Recorder, Servers, server_options, within

pytestmark = pytest.mark.asyncio(loop_scope="module")

NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "ANTHROPIC_BASE_URL": "", "OPENAI_BASE_URL": ""}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def mock_provider(data_dir: Path, url: str) -> None:
    """``models.json`` with the provider ``mock``: two reasoning models behind the mock Messages API."""
    models = [{"id": "model-a", "reasoning": True}, {"id": "model-b", "reasoning": True}]
    config = {
        "providers": {"mock": {"api": "anthropic-messages", "baseUrl": url, "apiKey": "k", "models": models}}
    }
    (data_dir / "models.json").write_text(json.dumps(config), encoding="utf-8")


def ours(paths: list[str], tree: Path) -> list[str]:
    """The paths inside the test's tree (folders above it belong to the machine, not the test)."""
    return [path for path in paths if Path(path).is_relative_to(tree)]


async def start(servers: Servers, tmp_path: Path, options: dict[str, Any], **kwargs: Any) -> AgentClient:
    """A server whose project files load unasked (``projectTrust: always``): the trust step that
    comes before them has its own tests (``test_hardening_trust.py``)."""
    env = {**NO_KEYS, "HOME": str(tmp_path / "home")}
    return await servers.start({"projectTrust": "always", **options}, env=env, **kwargs)


async def test_project_instructions_are_in_the_first_request(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    write(data_dir / "AGENTS.md", "Global: answer in English.")
    write(workspace / "AGENTS.md", "Project: run `make test` before you finish.")
    write(
        data_dir / "skills" / "pdf" / "SKILL.md",
        "---\ndescription: Extract text from PDFs\n---\nUse pdftotext.",
    )
    async with MockServer([a_reply(a_start(model="model-a"), a_text(0, "Hi."), a_end())]) as mock:
        mock_provider(data_dir, mock.url)
        client = await start(servers, tmp_path, {"dataDir": str(data_dir), "appendSystemPrompt": "Be brief."})
        session = await within(client.new_session(cwd=str(workspace)))
        state = await within(client.get_state(session))
        assert ours(state.context_files, tmp_path) == [
            str(data_dir / "AGENTS.md"),
            str(workspace / "AGENTS.md"),
        ]
        settled = await within(client.prompt(session, "hello", wait=True))
        assert isinstance(settled, SettledNotification) and settled.stop_reason == "stop"

    system = mock.requests[0].json()["system"][0]["text"]
    assert system == state.system_prompt
    assert system.startswith("You are an expert coding assistant operating inside agentls")
    assert "- bash: Execute bash commands (ls, grep, find, etc.)" in system
    global_at = system.index(
        f'<project_instructions path="{data_dir / "AGENTS.md"}">\nGlobal: answer in English.'
    )
    project = f'<project_instructions path="{workspace / "AGENTS.md"}">\nProject: run `make test`'
    project_at = system.index(project)
    assert system.index("\n\nBe brief.\n\n<project_context>") < global_at < project_at
    assert f"<location>{data_dir / 'skills' / 'pdf' / 'SKILL.md'}</location>" in system
    assert system.endswith(f"\nCurrent working directory: {workspace}")


async def test_prompt_settings_are_stored_with_the_session(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path, faux_script: FauxScript
) -> None:
    write(workspace / "AGENTS.md", "Project instructions.")
    options = server_options(data_dir, faux_script)
    client = await start(servers, tmp_path, options)
    session = await within(
        client.new_session(
            cwd=str(workspace),
            system_prompt="You review code.",
            append_system_prompt="Be strict.",
            context_files=False,
        )
    )
    state = await within(client.get_state(session))
    assert state.context_files == [] and "Project instructions." not in state.system_prompt
    assert state.system_prompt.startswith("You review code.\n\nBe strict.\nCurrent date: ")
    await within(client.close())

    header = json.loads((data_dir / "sessions" / f"{session}.jsonl").read_text().splitlines()[0])
    assert header["systemPrompt"] == "You review code." and header["appendSystemPrompt"] == "Be strict."
    assert header["contextFiles"] is False

    # another server, with other defaults, makes the loaded session's prompt the same way
    client = await start(
        servers, tmp_path, {**options, "systemPrompt": "Other.", "appendSystemPrompt": "Other."}
    )
    await within(client.load_session(session))
    loaded = await within(client.get_state(session))
    assert loaded.system_prompt == state.system_prompt and loaded.context_files == []
    fresh = await within(client.get_state(await within(client.new_session(cwd=str(workspace)))))
    assert fresh.system_prompt.startswith("Other.\n\nOther.\n\n<project_context>")
    assert ours(fresh.context_files, tmp_path) == [str(workspace / "AGENTS.md")]


async def test_commands_are_listed_and_expanded(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path, faux_script: FauxScript
) -> None:
    review = write(
        workspace / ".agentls" / "prompts" / "review.md",
        '---\ndescription: Review a file\nargument-hint: "<file> [focus]"\n---\n'
        "Review $1, focusing on ${2:-bugs}.",
    )
    pdf = write(
        data_dir / "skills" / "pdf" / "SKILL.md", "---\ndescription: Extract PDF text\n---\nUse pdftotext."
    )
    faux_script([{"content": "Reviewed."}, {"content": "Extracted."}, {"content": LONG_TEXT}], slow=True)
    client = await start(servers, tmp_path, server_options(data_dir, faux_script))
    recorder = await Recorder(client).start()
    try:
        session = await within(client.new_session(cwd=str(workspace)))
        commands = [c.wire() for c in await within(client.list_commands(session))]
        assert commands == [
            {
                "name": "review",
                "description": "Review a file",
                "kind": "template",
                "argumentHint": "<file> [focus]",
                "path": str(review),
            },
            {"name": "skill:pdf", "description": "Extract PDF text", "kind": "skill", "path": str(pdf)},
        ]

        await within(client.prompt(session, "/review src/app.py", wait=True), 20)
        await within(client.prompt(session, "/skill:pdf report.pdf", wait=True), 20)
        messages = (await within(client.get_messages(session))).messages
        texts = [m["content"][0]["text"] for m in messages if m["role"] == "user"]
        assert texts == [
            "Review src/app.py, focusing on bugs.",
            f'<skill name="pdf" location="{pdf}">\nReferences are relative to {pdf.parent}.\n\n'
            "Use pdftotext.\n</skill>\n\nreport.pdf",
        ]

        # queued text expands too, as Pi's steer and followUp do
        run = await within(client.prompt(session, "go on"))
        await recorder.wait_delta(session, run_id=run.run_id)
        await within(client.steer(session, '/review "lib/x.py" style'))
        await within(client.follow_up(session, "/unknown stays as typed"))
        queue = await within(client.get_queue(session))
        assert [i.text for i in queue.steering] == ["Review lib/x.py, focusing on style."]
        assert [i.text for i in queue.follow_up] == ["/unknown stays as typed"]
        await within(client.abort(session))
        assert (await recorder.settled(run.run_id))["stopReason"] == "aborted"
    finally:
        await recorder.stop()


class Gate:
    """Answers the permission question once the test lets it, so the test can act between two turns."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, request: RequestPermissionParams) -> str:
        self.asked.set()
        await self.release.wait()
        return "reject"


async def test_model_thinking_level_and_instructions_change_at_the_next_turn(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    instructions = write(workspace / "AGENTS.md", "Version one of the rules.")
    replies = [
        a_reply(
            a_start(model="model-a"), a_tool(0, "toolu_1", "bash", '{"command": "make"}'), a_end("tool_use")
        ),
        a_reply(a_start(model="model-b"), a_text(0, "Not allowed, then."), a_end()),
    ]
    gate = Gate()
    async with MockServer(replies) as mock:
        mock_provider(data_dir, mock.url)
        client = await start(servers, tmp_path, {"dataDir": str(data_dir)}, on_permission=gate)
        session = await within(client.new_session(cwd=str(workspace), model=("mock", "model-a")))
        run = await within(client.prompt(session, "build it"))
        await within(gate.asked.wait())  # the run waits between its first and second turn
        await within(client.set_model(session, "mock", "model-b"))
        await within(client.set_thinking_level(session, "high"))
        instructions.write_text("Version two of the rules, longer.", encoding="utf-8")
        write(
            workspace / ".agentls" / "skills" / "deploy" / "SKILL.md", "---\ndescription: Deploy it\n---\nx"
        )
        gate.release.set()
        settled = await within(client.wait_settled(run.run_id))
        assert settled.stop_reason == "stop"
        messages = (await within(client.get_messages(session))).messages
        state = await within(client.get_state(session))

    first, second = (request.json() for request in mock.requests)
    assert first["model"] == "model-a" and first["thinking"] == {"type": "disabled"}
    assert "Version one of the rules." in first["system"][0]["text"]
    assert second["model"] == "model-b" and second["thinking"]["type"] == "enabled"
    system = second["system"][0]["text"]
    assert "Version two of the rules, longer." in system and "Version one" not in system
    assert "<name>deploy</name>" in system and system == state.system_prompt
    assistants = [(m["provider"], m["model"]) for m in messages if m["role"] == "assistant"]
    assert assistants == [("mock", "model-a"), ("mock", "model-b")]
