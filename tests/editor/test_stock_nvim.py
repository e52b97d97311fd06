"""Stock Neovim without the plugin: an agent edit lands in the open buffer, ``u`` undoes it, the disk matches.

Neovim advertises ``workspace.applyEdit`` but not ``workspaceEdit.documentChanges``, so
the server sends the ``changes`` form of the edit. ``stock_nvim.lua`` runs in
``nvim --headless --clean`` against ``agentls serve`` on the faux provider and ends
its output with ``N passed, M failed``.
"""

from __future__ import annotations

from pathlib import Path

from tests.editor.headless import run_script
from tests.server.conftest import tool_call, write_faux_script

SCRIPT = Path(__file__).with_name("stock_nvim.lua")
TIMEOUT = 60
KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}


def test_an_agent_edit_lands_in_a_stock_neovim_buffer(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "m.py").write_text("a = 1\nb = 2\n")
    edit = tool_call("e", "edit", {"path": "m.py", "edits": [{"oldText": "b = 2", "newText": "b = 'two'"}]})
    faux = write_faux_script(
        tmp_path / "faux.json", [{"content": [edit], "stopReason": "toolUse"}, {"content": "Done."}]
    )
    passed, failed, report = run_script(
        SCRIPT, [str(faux), str(workspace), "edit"], workspace, tmp_path, TIMEOUT, KEYS
    )
    assert failed == 0 and passed == 3, report
    assert (workspace / "m.py").read_text() == "a = 1\nb = 'two'\n"


def test_a_file_the_agent_creates_in_stock_neovim_holds_exactly_its_content(tmp_path: Path) -> None:
    """CreateFile, then the content over the new buffer's whole range: no extra empty line at its end."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "m.py").write_text("a = 1\n")
    write = tool_call("w", "write", {"path": "new.py", "content": "NEW = 1\nOTHER = 2\n"})
    faux = write_faux_script(
        tmp_path / "faux.json", [{"content": [write], "stopReason": "toolUse"}, {"content": "Done."}]
    )
    passed, failed, report = run_script(
        SCRIPT, [str(faux), str(workspace), "create"], workspace, tmp_path, TIMEOUT, KEYS
    )
    assert failed == 0 and passed == 3, report
    assert (workspace / "new.py").read_bytes() == b"NEW = 1\nOTHER = 2\n"
