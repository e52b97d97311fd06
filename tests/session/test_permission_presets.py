"""Permission presets over a session's own modes, as the policy hook reads them."""

from __future__ import annotations

import pytest
from agentls.protocol import PermissionMode
from agentls.session.errors import SessionError
from agentls.session.permission_presets import PRESETS, SessionPermissions
from agentls.session.permissions import set_mode

OWN: dict[str, PermissionMode] = {"bash": "deny", "mcp__docs__*": "allow"}


def modes_of(modes: dict[str, PermissionMode], *tools: str) -> list[PermissionMode | None]:
    return [set_mode(modes, tool) for tool in tools]


def test_each_preset_over_the_sessions_own_modes() -> None:
    modes = dict(OWN)
    permissions = SessionPermissions(modes)
    assert permissions.preset == "acceptEdits" and list(PRESETS) == ["ask", "acceptEdits", "plan", "bypass"]
    tools = ("read", "write", "bash", "mcp__docs__search", "mcp__other__run")
    permissions.use_preset("plan")
    assert modes_of(modes, *tools) == ["allow", "deny", "deny", "deny", "deny"]
    permissions.use_preset("bypass")
    assert modes_of(modes, *tools) == ["allow"] * 5
    permissions.use_preset("ask")
    assert modes_of(modes, *tools) == [None, "ask", "deny", "allow", None]
    permissions.use_preset("acceptEdits")
    assert modes == OWN, "the session's own modes, changed in place (the hook holds this dictionary)"


def test_a_tool_denied_for_the_session_stays_denied_under_every_preset() -> None:
    modes: dict[str, PermissionMode] = {}
    permissions = SessionPermissions(modes)
    permissions.deny_for_session(["edit"])
    for preset in PRESETS:
        permissions.use_preset(preset)
        assert set_mode(modes, "edit") == "deny", preset


def test_an_unknown_preset_is_refused_and_changes_nothing() -> None:
    modes = dict(OWN)
    permissions = SessionPermissions(modes)
    with pytest.raises(SessionError) as refused:
        permissions.use_preset("yolo")
    assert refused.value.kind == "invalidParams"
    assert refused.value.message == "Unknown mode 'yolo'; the modes are ask, acceptEdits, plan, bypass"
    assert permissions.preset == "acceptEdits" and modes == OWN
