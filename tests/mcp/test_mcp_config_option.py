"""``--mcp-config FILE``: one reading for ``agentls run``, ``chat`` and ``acp``.

A relative ``cwd`` is taken from the file's folder, as README and protocol.md say.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentls.fronts.acp.main import options_from
from agentls.mcp.config import McpConfigError, read_mcp_config


def config(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_relative_cwd_is_taken_from_the_files_folder(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    file = config(
        tmp_path / "conf" / "servers.json",
        {
            "mcpServers": {
                "here": {"command": "srv", "cwd": "tools"},
                "there": {"command": "srv", "cwd": "/opt/x"},
                "none": {"url": "http://127.0.0.1:1/mcp"},
            }
        },
    )
    servers = read_mcp_config(file)
    assert servers["here"] == {"command": "srv", "cwd": str(tmp_path.resolve() / "conf" / "tools")}
    assert servers["there"]["cwd"] == "/opt/x"
    assert "cwd" not in servers["none"]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "cannot read it (No such file or directory)"),
        ("{mcpServers", "not JSON (line 1, column 2"),
        ('{"mcpServers": {"a": {"command": NaN}}}', "cannot read it (NaN is not a JSON value)"),
        ('{"servers": {}}', 'expected {"mcpServers": {NAME:'),
        ('{"mcpServers": [{"name": "a", "command": "x"}]}', 'expected {"mcpServers": {NAME:'),
        ('{"mcpServers": {"x": 3}}', "mcpServers.x must be an object, not int"),
    ],
)
def test_a_file_that_cannot_be_used_says_why(tmp_path: Path, content: str | None, said: str) -> None:
    file = tmp_path / "servers.json"
    if content is not None:
        file.write_text(content, encoding="utf-8")
    with pytest.raises(McpConfigError) as error:
        read_mcp_config(file)
    assert str(error.value).startswith(said)


def test_acp_reads_it_the_same_way(tmp_path: Path) -> None:
    file = config(tmp_path / "servers.json", {"mcpServers": {"here": {"command": "srv", "cwd": "sub"}}})
    options = options_from(None, None, "faux/faux-1", str(file))
    assert options.mcp_servers == {"here": {"command": "srv", "cwd": str(tmp_path.resolve() / "sub")}}
    assert options.model is not None and (options.model.provider, options.model.id) == ("faux", "faux-1")
    with pytest.raises(ValueError, match=r"--mcp-config .*: mcpServers.x must be an object"):
        options_from(None, None, None, str(config(tmp_path / "bad.json", {"mcpServers": {"x": []}})))
    for model in ("faux", "/faux-1", "faux/"):
        with pytest.raises(ValueError, match="expected PROVIDER/ID"):
            options_from(None, None, model, None)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--mcp-config", "bad.json"], "--mcp-config bad.json: mcpServers.x must be an object, not list"),
        (["--mcp-config", "none.json"], "--mcp-config none.json: cannot read it"),
        (["--model", "/faux-1"], "expected PROVIDER/ID"),
    ],
)
def test_agentls_acp_refuses_a_bad_option_at_start_with_exit_code_2(
    tmp_path: Path, arguments: list[str], said: str
) -> None:
    config(tmp_path / "bad.json", {"mcpServers": {"x": []}})
    done = subprocess.run(
        [sys.executable, "-m", "agentls", "acp", "--data-dir", str(tmp_path / "data"), *arguments],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and said in done.stderr and done.stdout == ""
