"""Files a client names (the faux script, the data folder's ``models.json`` and permission rules) that are
not what they should be: a device that never ends, a FIFO that never delivers, a folder, a huge file.
The server answers with an error naming the file, at once, and keeps working."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.server.raw import RawServer

pytestmark = pytest.mark.asyncio(loop_scope="module")


def device(path: Path) -> None:
    path.symlink_to("/dev/zero")


def fifo(path: Path) -> None:
    os.mkfifo(path)


def folder(path: Path) -> None:
    path.mkdir()


def huge(path: Path) -> None:
    with path.open("wb") as file:
        file.truncate(17 * 1024 * 1024)


def nested(path: Path) -> None:
    path.write_text("[" * 100_000)


MAKERS: list[Callable[[Path], None]] = [device, fifo, folder, huge, nested]
REASONS = {
    device: "not a regular file",
    fifo: "not a regular file",
    folder: "not a regular file",
    huge: "larger than 16777216 bytes",
    nested: "nested too deeply",
}


async def start(data_dir: Path, **options: str) -> RawServer:
    server = await RawServer.start()
    await server.initialize({"dataDir": str(data_dir), **options})
    return server


@pytest.mark.parametrize("make", MAKERS)
async def test_a_faux_script_that_is_no_file_is_refused_with_its_name(
    tmp_path: Path, data_dir: Path, workspace: Path, make: Callable[[Path], None]
) -> None:
    script = tmp_path / "script.json"
    make(script)
    server = await start(data_dir, fauxScript=str(script))
    try:
        answer = await server.call(1, "agent/newSession", {"cwd": str(workspace)})
        assert answer["error"]["data"] == {"kind": "noModel"}
        assert str(script) in answer["error"]["message"] and REASONS[make] in answer["error"]["message"]
        assert "result" in await server.call(2, "agent/listSessions", {})
    finally:
        await server.close()


@pytest.mark.parametrize("make", MAKERS)
async def test_a_models_file_that_is_no_file_is_reported_with_its_name(
    data_dir: Path, make: Callable[[Path], None]
) -> None:
    make(data_dir / "models.json")
    server = await start(data_dir)
    try:
        answer = await server.call(1, "agent/listModels", {})
        assert str(data_dir / "models.json") in answer["error"]["message"], answer
        assert REASONS[make] in answer["error"]["message"]
    finally:
        await server.close()


@pytest.mark.parametrize("make", MAKERS)
async def test_unreadable_permission_rules_are_ignored_with_a_warning(
    tmp_path: Path, data_dir: Path, make: Callable[[Path], None]
) -> None:
    make(data_dir / "permissions.json")
    server = await start(data_dir)
    try:
        answer = await server.call(1, "agent/listPermissionRules", {})
        assert answer["result"] == {"rules": []}
        await server.wait_for(
            lambda m: m.get("method") == "window/logMessage" and "permissions.json" in m["params"]["message"]
        )
    finally:
        await server.close()
