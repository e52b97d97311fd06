"""``initialize`` answered before the server is imported (``agentls.fronts.lsp.boot``), for real.

The server handles the early-answered ``initialize`` itself too, without answering it again,
and logs an error if its own handling then fails; these tests read its stderr for that.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editor.headless import NVIM
from tests.server.conftest import FauxScript, server_options
from tests.server.raw import RawServer, notification, request

EARLY_ERRORS = (b"answered early", b"Traceback")

CLIENTS: dict[str, dict[str, Any]] = {
    "none": {},
    "vscode": {
        "general": {"positionEncodings": ["utf-16"]},
        "textDocument": {"synchronization": {"dynamicRegistration": True, "willSave": True, "didSave": True}},
        "workspace": {"applyEdit": True, "workspaceFolders": True},
        "experimental": {"agent": {"requestPermission": True, "reviewEdit": True}},
    },
    "neovim": {
        "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
        "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True, "didSave": True}},
        "window": {"workDoneProgress": True},
    },
    "helix": {
        "general": {"positionEncodings": ["utf-32", "utf-8", "utf-16"]},
        "textDocument": {"synchronization": {"willSave": False}},
        "notebookDocument": {"synchronization": {}},
    },
    "unknown encodings only": {"general": {"positionEncodings": ["utf-7"]}},
}


async def finish(server: RawServer) -> bytes:
    await server.call("bye", "shutdown")
    await server.send(notification("exit"))
    assert await server.close() == 0
    return bytes(server.stderr)


@pytest.mark.parametrize("client", CLIENTS)
async def test_the_early_answer_is_the_one_the_server_gives(
    client: str, data_dir: Path, faux_script: FauxScript
) -> None:
    server = await RawServer.start()
    answer = await server.initialize(server_options(data_dir, faux_script), CLIENTS[client])
    capabilities = answer["result"]["capabilities"]
    listing = await server.call(2, "agent/listModels", {})
    stderr = await finish(server)
    assert [m["id"] for m in server.responses()] == ["init", 2, "bye"]  # one answer to initialize
    assert not any(error in stderr for error in EARLY_ERRORS), stderr.decode()
    assert "result" in listing
    encodings = CLIENTS[client].get("general", {}).get("positionEncodings", [])
    usable = [e for e in encodings if e in ("utf-8", "utf-16", "utf-32")]
    assert capabilities["positionEncoding"] == (usable[0] if usable else "utf-16")
    assert capabilities["experimental"]["agent"]["methods"]


def neovim_capabilities() -> dict[str, Any]:
    """What real Neovim sends as its client capabilities (Lua writes its empty tables as ``[]``)."""
    lua = "io.write(vim.json.encode(vim.lsp.protocol.make_client_capabilities()))"
    result = subprocess.run(
        [str(NVIM), "--headless", "--clean", "-c", f"lua {lua}", "-c", "qa!"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(result.stdout)


async def test_neovims_own_capabilities_get_the_early_answer_the_server_gives(
    data_dir: Path, faux_script: FauxScript
) -> None:
    capabilities = neovim_capabilities()
    assert capabilities["general"]["positionEncodings"]
    server = await RawServer.start()
    answer = await server.initialize(server_options(data_dir, faux_script), capabilities)
    stderr = await finish(server)
    assert (
        answer["result"]["capabilities"]["positionEncoding"]
        == capabilities["general"]["positionEncodings"][0]
    )
    assert not any(error in stderr for error in (*EARLY_ERRORS, b"taken as absent")), stderr.decode()


async def test_what_came_with_initialize_is_handled_after_it(
    data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    server = await RawServer.start()
    params = {
        "processId": None,
        "capabilities": {},
        "initializationOptions": server_options(data_dir, faux_script),
    }
    await server.send(
        request(1, "initialize", params)
        + notification("initialized", {})
        + request(2, "agent/listModels", {})
        + request(3, "agent/newSession", {"cwd": str(workspace)})
    )
    answers = [await server.response(msg_id) for msg_id in (1, 2, 3)]
    stderr = await finish(server)
    assert server.responses()[0]["id"] == 1
    assert all("result" in answer for answer in answers), answers
    assert not any(error in stderr for error in EARLY_ERRORS), stderr.decode()


async def test_ill_typed_capabilities_are_taken_as_absent_not_refused(
    data_dir: Path, faux_script: FauxScript
) -> None:
    """An LSP capability the server reads with the wrong type counts as absent, with a warning; one it
    does not read is of no concern to it."""
    server = await RawServer.start()
    capabilities = {
        "workspace": {"applyEdit": "yes"},
        "window": {"showMessage": {"messageActionItem": 5}},
    }
    answer = await server.initialize(server_options(data_dir, faux_script), capabilities)
    listed = await server.call(2, "agent/listSessions", {})
    stderr = await finish(server)
    assert "result" in answer and "result" in listed
    assert stderr.count(b"capabilities.") == 1, stderr.decode()
    assert b"capabilities.workspace.applyEdit is not a boolean: the capability is taken as absent" in stderr
    assert not any(error in stderr for error in EARLY_ERRORS), stderr.decode()


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"capabilities": {}, "initializationOptions": {"applyEditTimeoutMs": -5}}, -32602),
        ({"capabilities": {"experimental": {"agent": {"reviewEdit": "sometimes"}}}}, -32602),
        ({"capabilities": {"general": {"positionEncodings": 5}}}, -32602),
        ({"capabilities": {}, "processId": "me"}, -32602),
        ({"capabilities": 3}, -32602),
    ],
)
async def test_an_initialize_the_boot_cannot_vouch_for_is_answered_by_the_server(
    params: dict[str, Any], code: int, data_dir: Path
) -> None:
    """Bad options or fields: the server gives its usual error, and a corrected initialize works."""
    server = await RawServer.start()
    refused = await server.call(1, "initialize", params)
    good = {"capabilities": {}, "initializationOptions": {"dataDir": str(data_dir)}}
    accepted = await server.call(2, "initialize", good)
    await finish(server)
    assert refused["error"]["code"] == code
    assert "result" in accepted


async def test_a_first_message_that_is_not_initialize_gets_the_usual_answer(data_dir: Path) -> None:
    server = await RawServer.start()
    early = await server.call(1, "agent/listSessions", {})
    good = {"capabilities": {}, "initializationOptions": {"dataDir": str(data_dir)}}
    assert "result" in await server.call(2, "initialize", good)
    await finish(server)
    assert early["error"]["code"] == -32002
