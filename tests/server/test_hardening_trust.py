"""End to end: what a project (or a stored session) may run or tell the model only once the user trusts it.

Through the real server (``agentls serve`` as a subprocess):

- the trust question about a project's MCP servers shows everything that changes what
  runs (command, args, env, cwd, url, headers) with secrets masked, and nothing secret
  reaches the question, the servers' logs or any notification;
- a changed configuration is asked about again, saying what changed;
- a folder's ``AGENTS.md``, skills and prompt templates load only once the folder is
  trusted (the same question as the MCP servers', one answer for both), no ``AGENTS.md``
  above the home folder is read, and ``agent/getState`` says what is loaded and from where;
- the first prompt waits for the answer; ``projectTrust`` pre-decides for every folder;
- a loaded session's own ``mcpServers`` go through trust too.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from agentls.client import AgentClient
from agentls.protocol import RequestPermissionParams, StateResult
from agentls.protocol_methods import PermissionRulesResult

from tests.ai.providers.helpers import a_end, a_reply, a_start, a_text
from tests.ai.providers.mock_http import MockServer
from tests.mcp.conftest import quirky_command
from tests.server.conftest import FauxScript, Recorder, Servers, server_options, within
from tests.server.test_instructions_e2e import NO_KEYS, mock_provider
from tests.server.test_mcp import Questions, ready, stdio

pytestmark = pytest.mark.asyncio(loop_scope="module")

API_KEY = "sk-ant-trust-e2e-0123456789"
"""``ANTHROPIC_API_KEY`` of the server: a project's ``.mcp.json`` passes it in args."""
TOKEN = "tok-trust-e2e-0123456789"
"""``SECRET_TOKEN`` of the server: a header value ``${SECRET_TOKEN}``."""
LITERAL_TOKEN = "ghp_literal0123456789abcdef"
BEARER = "literal-bearer-secret-0123"
SECRETS = [API_KEY, TOKEN, LITERAL_TOKEN, BEARER]


def trusting(request: RequestPermissionParams) -> str:
    return "allowAlways" if request.tool_name == "mcp" else "allowOnce"


async def start(
    servers: Servers, data_dir: Path, faux_script: FauxScript | None, home: Path, **kwargs: Any
) -> tuple[AgentClient, Recorder]:
    env = {**NO_KEYS, "HOME": str(home), "ANTHROPIC_API_KEY": API_KEY, "SECRET_TOKEN": TOKEN, "TEAM": "blue"}
    options = {**server_options(data_dir, faux_script), **kwargs.pop("options", {})}
    client = await servers.start(options, env=env, **kwargs)
    return client, await Recorder(client).start()


async def answered(client: AgentClient, session: str) -> StateResult:
    """The session's state once the trust question's answer has reached the server and been applied:
    the client is told it was asked before its answer is even sent, and no notification follows a
    rejection, so the state is read until it is no longer ``asking``."""
    while (state := await client.get_state(session)).project_trust == "asking":  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    return state


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project(workspace: Path, servers: dict[str, Any] | None = None) -> dict[str, Path]:
    """A project with instructions, a skill, a prompt template and (given) a ``.mcp.json``."""
    files = {
        "agents": write(workspace / "AGENTS.md", "Project rule: PROJECT-RULE-TEXT."),
        "skill": write(
            workspace / ".agentls" / "skills" / "deploy" / "SKILL.md", "---\ndescription: Deploy it\n---\nx"
        ),
        "template": write(workspace / ".agentls" / "prompts" / "review.md", "Review: $@"),
    }
    if servers is not None:
        files["mcp"] = write(workspace / ".mcp.json", json.dumps({"mcpServers": servers}))
    return files


async def status(recorder: Recorder, name: str, wanted: str) -> dict[str, Any]:
    note = await recorder.wait_for(
        lambda n: n.method == "agent/mcpStatus" and n.params["name"] == name and n.params["status"] == wanted
    )
    return note.params


# --- what the MCP trust question shows --------------------------------------------------


async def test_the_trust_question_shows_what_runs_and_no_secret_reaches_it_or_a_log(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "sub").mkdir()
    configured = {
        "leaky": {
            "command": sys.executable,
            "args": ["-c", "import sys; sys.exit(3)", "--key", "${ANTHROPIC_API_KEY}"],
            "env": {"PYTHONPATH": "/opt/evil", "GITHUB_TOKEN": LITERAL_TOKEN},
            "cwd": "sub",
        },
        "remote": {
            "type": "http",
            "url": "http://127.0.0.1:9/mcp?team=${TEAM}",
            "headers": {"X-Token": "${SECRET_TOKEN}", "Authorization": f"Bearer {BEARER}"},
        },
    }
    write(workspace / ".mcp.json", json.dumps({"mcpServers": configured}))
    questions = Questions(trusting)
    client, recorder = await start(servers, data_dir, faux_script, tmp_path / "home", on_permission=questions)
    session = await within(client.new_session(cwd=str(workspace)))
    await status(recorder, "leaky", "failed")
    await status(recorder, "remote", "failed")

    [trust] = questions.about("mcp")
    for shown in [
        f"command {sys.executable}",
        "args -c import sys; sys.exit(3) --key ${ANTHROPIC_API_KEY}",
        "env PYTHONPATH=/opt/evil",
        "env GITHUB_TOKEN=[redacted]",
        f"cwd {workspace / 'sub'}",
        "url http://127.0.0.1:9/mcp?team=${TEAM}",
        "header X-Token: ${SECRET_TOKEN}",
        "header Authorization: Bearer [redacted]",
    ]:
        assert shown in trust.title, (shown, trust.title)
    [leaky, remote] = trust.args["servers"]
    assert "env PYTHONPATH=/opt/evil" in leaky["runs"] and "header X-Token: ${SECRET_TOKEN}" in remote["runs"]

    listing = await within(client.list_mcp_servers(session))
    log = (data_dir / "mcp-logs" / "leaky.log").read_text()
    assert "--key ${ANTHROPIC_API_KEY}" in log
    everything = [
        json.dumps(trust.model_dump(mode="json")),
        log,
        listing.model_dump_json(),
        json.dumps([note.params for note in recorder.notes]),
    ]
    for text in everything:
        for secret in SECRETS:
            assert secret not in text, (secret, text[:2000])


async def test_a_changed_configuration_is_asked_about_again_saying_what_changed(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    quirky = stdio(quirky_command())
    write(workspace / ".mcp.json", json.dumps({"mcpServers": {"quirky": quirky}}))
    questions = Questions(lambda q: "allowAlways" if len(questions.about("mcp")) == 1 else "reject")
    client, recorder = await start(servers, data_dir, faux_script, tmp_path / "home", on_permission=questions)
    await within(client.new_session(cwd=str(workspace)))
    await ready(recorder, "quirky")
    [first] = questions.about("mcp")
    assert "new: not trusted in this folder before" in first.title

    preload = {**quirky, "env": {"LD_PRELOAD": "/tmp/hook.so"}}
    write(workspace / ".mcp.json", json.dumps({"mcpServers": {"quirky": preload}}))
    second_session = await within(client.new_session(cwd=str(workspace)))
    await questions.wait("mcp", 2)
    second = questions.about("mcp")[1]
    assert second.title != first.title
    assert "changed since you trusted it: env LD_PRELOAD=/tmp/hook.so added" in second.title
    assert second.args["servers"][0]["changed"] == ["env LD_PRELOAD=/tmp/hook.so added"]
    [rejected] = (await within(client.list_mcp_servers(second_session))).servers
    assert rejected.status == "needsTrust"


# --- the project's files ----------------------------------------------------------------


async def test_a_rejected_folder_loads_no_project_file_and_a_trusted_one_loads_them(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    above = write(tmp_path / "AGENTS.md", "Above the project, outside the home folder: ABOVE-TEXT.")
    files = project(workspace, {"quirky": stdio(quirky_command())})
    write(data_dir / "AGENTS.md", "The user's own: USER-TEXT.")
    rejecting = Questions(lambda q: "reject")
    client, _ = await start(servers, data_dir, faux_script, home, on_permission=rejecting)
    session = await within(client.new_session(cwd=str(workspace)))
    await rejecting.wait("mcp")
    state = await within(answered(client, session))
    commands = [c.name for c in await within(client.list_commands(session))]

    [question] = rejecting.asked  # one question for the files and the servers
    assert question.tool_name == "mcp" and f"Trust the folder {workspace}?" in question.title
    assert "AGENTS.md" in question.title and str(files["mcp"]) in question.title
    assert state.context_files == [str(data_dir / "AGENTS.md")]
    assert "USER-TEXT" in state.system_prompt and "PROJECT-RULE-TEXT" not in state.system_prompt
    assert "deploy" not in state.system_prompt and commands == []
    assert state.project_trust == "untrusted"
    held = {(r.path, r.kind, r.scope, r.loaded) for r in state.resources}
    assert held == {
        (str(data_dir / "AGENTS.md"), "contextFile", "user", True),
        (str(files["agents"]), "contextFile", "project", False),
        (str(files["skill"]), "skill", "project", False),
        (str(files["template"]), "promptTemplate", "project", False),
    }
    assert str(above) not in question.title and all(r.path != str(above) for r in state.resources)

    # another server asks again; Trust loads the files and starts the server, and is remembered
    answers = Questions(trusting)
    other, other_recorder = await start(servers, data_dir, faux_script, home, on_permission=answers)
    trusted = await within(other.new_session(cwd=str(workspace)))
    await ready(other_recorder, "quirky")
    run = await within(other.prompt(trusted, "hi"))
    await within(other.wait_settled(run.run_id))
    state = await within(other.get_state(trusted))
    assert state.project_trust == "trusted"
    assert state.context_files == [str(data_dir / "AGENTS.md"), str(files["agents"])]
    assert "PROJECT-RULE-TEXT" in state.system_prompt and "<name>deploy</name>" in state.system_prompt
    assert "ABOVE-TEXT" not in state.system_prompt
    assert {c.name for c in await within(other.list_commands(trusted))} == {"review", "skill:deploy"}
    rules = await within(
        other.request("agent/listPermissionRules", {"cwd": str(workspace)}, PermissionRulesResult)
    )
    assert "project:trust" in [r.tool_name for r in rules.rules]

    third, _ = await start(servers, data_dir, faux_script, home, on_permission=Questions(trusting))
    remembered = await within(third.new_session(cwd=str(workspace / ".agentls")))  # a folder below it
    state = await within(third.get_state(remembered))
    assert state.project_trust == "trusted" and all(r.loaded for r in state.resources)


async def test_the_first_prompt_waits_for_the_answer_and_sees_the_trusted_files(
    servers: Servers, data_dir: Path, workspace: Path, tmp_path: Path
) -> None:
    project(workspace)
    asked, answer = asyncio.Event(), asyncio.Event()

    async def later(request: RequestPermissionParams) -> str:
        asked.set()
        await answer.wait()
        return "allowAlways"

    async with MockServer([a_reply(a_start(model="model-a"), a_text(0, "Hi."), a_end())]) as mock:
        mock_provider(data_dir, mock.url)
        client, _ = await start(servers, data_dir, None, tmp_path / "home", on_permission=later)
        session = await within(client.new_session(cwd=str(workspace), model=("mock", "model-a")))
        assert (await within(client.get_state(session))).project_trust == "asking"
        run = await within(client.prompt(session, "hello"))
        await within(asked.wait())
        assert mock.requests == []  # the run waits for the answer
        answer.set()
        await within(client.wait_settled(run.run_id))
    [request] = (request.json() for request in mock.requests)
    assert "PROJECT-RULE-TEXT" in request["system"][0]["text"]


async def test_project_trust_always_and_never_decide_without_asking(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    files = project(workspace)
    for mode, loaded in (("always", True), ("never", False)):
        questions = Questions(trusting)
        options = {"projectTrust": mode}
        client, _ = await start(
            servers, data_dir, faux_script, tmp_path / "home", on_permission=questions, options=options
        )
        session = await within(client.new_session(cwd=str(workspace)))
        state = await within(client.get_state(session))
        assert questions.asked == []
        assert (str(files["agents"]) in state.context_files) is loaded
        assert state.project_trust == ("trusted" if loaded else "untrusted")


async def test_a_client_that_cannot_answer_gets_no_project_files(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    """Without ``agent/requestPermission`` the question goes as ``window/showMessageRequest``;
    this client rejects it (as Pi's print and RPC modes ignore an untrusted project)."""
    files = project(workspace)
    client, _ = await start(servers, data_dir, faux_script, tmp_path / "home")
    session = await within(client.new_session(cwd=str(workspace)))
    run = await within(client.prompt(session, "hi"))
    await within(client.wait_settled(run.run_id))
    state = await within(client.get_state(session))
    assert str(files["agents"]) not in state.context_files and state.project_trust == "untrusted"


# --- a stored session's servers ---------------------------------------------------------


async def test_a_loaded_sessions_own_mcp_servers_wait_for_trust(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path, tmp_path: Path
) -> None:
    questions = Questions(lambda q: "reject")
    client, recorder = await start(servers, data_dir, faux_script, tmp_path / "home", on_permission=questions)
    requested = {"quirky": stdio(quirky_command())}
    session = await within(client.new_session(cwd=str(workspace), mcp_servers=requested))
    await ready(recorder, "quirky")  # asked for by the client itself: no question
    assert questions.asked == []

    other, _ = await start(servers, data_dir, faux_script, tmp_path / "home", on_permission=questions)
    await within(other.load_session(session))
    await questions.wait("mcp")
    [question] = questions.asked
    stored = str(data_dir / "sessions" / f"{session}.jsonl")
    assert stored in question.title and "quirky.py" in question.title
    [listed] = (await within(other.list_mcp_servers(session))).servers
    assert listed.status == "needsTrust" and listed.source == stored
