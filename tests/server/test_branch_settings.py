"""The thinking level and the model follow the branch (Pi's ``getSessionContextSettings``).

Through the real server on the faux model: a thinking level set after the first answer is
on that branch only; a rewind to before it brings back the earlier level, a switch back
brings the later one again, and a loaded session is on its leaf's branch's settings, not
on the last ones written to the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.server.conftest import FauxScript, Servers, server_options, within

pytestmark = pytest.mark.asyncio(loop_scope="module")


def entry_of(tree: object, text: str) -> str:
    """The id of the user entry whose preview is ``text``."""
    entries = tree.entries  # type: ignore[attr-defined]
    return next(e.id for e in entries if e.role == "user" and e.preview == text)


async def test_a_rewind_a_switch_and_a_load_take_the_thinking_level_of_their_branch(
    servers: Servers, data_dir: Path, faux_script: FauxScript, workspace: Path
) -> None:
    faux_script([{"content": "First."}, {"content": "Second."}])
    client = await servers.start(server_options(data_dir, faux_script))
    session = await within(client.new_session(cwd=str(workspace), thinking_level="low"))
    assert (await within(client.prompt(session, "one", wait=True))).stop_reason == "stop"  # type: ignore[union-attr]
    await within(client.set_thinking_level(session, "high"))
    assert (await within(client.prompt(session, "two", wait=True))).stop_reason == "stop"  # type: ignore[union-attr]
    tree = await within(client.get_tree(session))
    tip = tree.leaf_id
    second = next(e for e in tree.entries if e.id == entry_of(tree, "two"))
    assert second.parent_id is not None

    await within(client.rewind(session, second.parent_id, files=False))
    assert (await within(client.get_state(session))).thinking_level == "low"
    await within(client.switch_branch(session, tip))
    assert (await within(client.get_state(session))).thinking_level == "high"
    await within(client.rewind(session, second.parent_id, files=False))
    await within(client.close(), 15)

    again = await servers.start(server_options(data_dir, faux_script))
    await within(again.load_session(session))
    # the file's last thinking_level_change says "high", but it is not on the leaf's branch
    assert (await within(again.get_state(session))).thinking_level == "low"
