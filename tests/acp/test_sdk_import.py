"""The ACP SDK as ``agentls acp`` imports it (:mod:`agentls.fronts.acp.sdk`), in a fresh process:
what the import defers still validates when used, and pydantic is left as it was."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import PROJECT_ROOT
from tests.test_cli_run import TIMEOUT, environment

CHECK = """
import json
import pydantic
from pydantic import TypeAdapter
import agentls.fronts.acp.sdk
from acp.agent import connection

adapter = connection._CREATE_ELICITATION_RESPONSE_ADAPTER
built_at_import = adapter.pydantic_complete
action = adapter.validate_python({"action": "cancel"}).action
try:
    adapter.validate_python("not an answer")
    refused = False
except pydantic.ValidationError:
    refused = True
later = TypeAdapter(list[int])
print(json.dumps({
    "built at import": built_at_import,
    "built once used": adapter.pydantic_complete,
    "action": action,
    "refused": refused,
    "later built at once": later.pydantic_complete,
    "later": later.validate_python(["1", 2]),
}))
"""


def test_the_sdks_adapters_build_on_first_use_and_validate_and_later_ones_build_at_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=PROJECT_ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "built at import": False,  # agentls never elicits: the SDK's adapter for it is not built
        "built once used": True,
        "action": "cancel",
        "refused": True,
        "later built at once": True,
        "later": [1, 2],
    }
