"""End to end: what ``bash`` starts is found by the kernel's parent links, whatever it does to escape.

The first round's tests (``test_hardening_processes.py``) start plain and ``setsid``
background processes. These start ones that also clear their environment (``env -i``),
leave the call's session (``setsid``) and lose their parent (a double fork), and check
in ``/proc`` that none runs once the run has settled, been aborted, or the server has
exited on SIGTERM or at the end of its input.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from agentls.client import AgentClient

from tests.server.conftest import FauxScript, Recorder, Shared, within
from tests.server.test_hardening_processes import bash, bash_session, output, pids_shown
from tests.tools.test_bash import gone

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUIET = ">/dev/null 2>&1"
ESCAPES = "; ".join(
    [
        f"env -i sh -c 'sleep 300 {QUIET} & echo $!'",  # no environment, in the call's session
        f"env -i setsid sh -c 'sleep 300 {QUIET} & echo $!'",  # no environment, a session of its own
        f"env -i sh -c '(setsid sleep 300 {QUIET} & echo $!) ; exit 0'",  # double fork, then setsid
    ]
)
"""Three background processes that neither the call's environment nor its session can find, one a line."""


def still_running(pids: list[int]) -> list[int]:
    return [pid for pid in pids if not gone(pid)]


async def test_escaped_processes_live_until_the_run_settles(shared: Shared, workspace: Path) -> None:
    shared.faux_script(
        [
            bash("b1", f"{{ {ESCAPES}; }} | tee pids"),
            bash("b2", "for pid in $(cat pids); do kill -0 $pid && echo alive; done"),
            {"content": "All three run."},
        ]
    )
    session = await bash_session(shared.client, workspace)
    run_id = (await within(shared.client.prompt(session, "start three daemons"))).run_id
    pids = await pids_shown(shared.recorder, session, "b1", 3)
    settled = await shared.recorder.settled(run_id)
    assert settled["stopReason"] == "stop"
    checked = await shared.recorder.wait_event(session, "tool_execution_end", toolCallId="b2")
    assert output(checked["event"]) == ["alive", "alive", "alive"]  # they outlived their call
    assert still_running(pids) == []


async def test_abort_ends_escaped_processes(shared: Shared, workspace: Path) -> None:
    shared.faux_script([bash("b1", f"{ESCAPES}; sleep 1000"), {"content": "unreached"}])
    session = await bash_session(shared.client, workspace)
    run_id = (await within(shared.client.prompt(session, "start and wait"))).run_id
    pids = await pids_shown(shared.recorder, session, "b1", 3)
    aborted = await within(shared.client.abort(session))
    assert aborted.aborted and aborted.run_id == run_id
    assert (await shared.recorder.settled(run_id))["stopReason"] == "aborted"
    assert still_running(pids) == []


async def test_a_user_command_s_escaped_processes_end_with_its_session(
    shared: Shared, workspace: Path
) -> None:
    session = await bash_session(shared.client, workspace)
    end = await within(shared.client.bash(session, ESCAPES, wait=True))
    pids = [int(line) for line in end.message["output"].split()]
    assert len(pids) == 3 and still_running(pids) == pids  # a user's command's processes outlive it
    assert await within(shared.client.delete_session(session))
    assert still_running(pids) == []


@pytest.mark.parametrize("ending", ["sigterm", "end of input"])
async def test_the_server_s_exit_ends_escaped_processes(
    client: AgentClient, recorder: Recorder, faux_script: FauxScript, workspace: Path, ending: str
) -> None:
    faux_script([bash("b1", ESCAPES), bash("b2", "sleep 1000"), {"content": "unreached"}])
    session = await bash_session(client, workspace)
    await within(client.prompt(session, "start and wait"))
    pids = await pids_shown(recorder, session, "b1", 3)
    await recorder.wait_event(session, "tool_execution_start", toolCallId="b2")
    process = client._rpc._server
    assert process is not None and process.stdin is not None
    if ending == "sigterm":
        process.send_signal(signal.SIGTERM)
    else:
        process.stdin.close()
    assert await within(process.wait()) == 0
    assert still_running(pids) == []
