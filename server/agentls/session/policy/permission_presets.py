"""Permission presets: named sets of permission modes a front offers its user (ACP's session modes).

A preset is worked out from the session's own modes (the server's ``permissions`` option
with the session's over it), so going back to ``acceptEdits`` gives exactly what the session
started with. ``plan`` and ``bypass`` set every tool, MCP tools that join later too (the
``*`` mode). A tool the user denied for the rest of the session ("reject always") stays
denied under every preset. The policy hook reads the session's modes at each call, so a
change applies from the next tool call on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from agentls.protocol import PermissionMode, PermissionPresetInfo, PermissionPresetName
from agentls.session.errors import SessionError

Modes = dict[str, PermissionMode]

READ_ONLY_TOOLS = ("read", "ls", "find", "grep", "diagnostics")


@dataclass(frozen=True)
class PermissionPreset:
    id: PermissionPresetName
    name: str
    description: str
    modes: Callable[[Mapping[str, PermissionMode]], Modes]
    """The preset's modes, given the session's own."""


def _read_only(own: Mapping[str, PermissionMode]) -> Modes:
    return {**dict.fromkeys(own, "deny"), "*": "deny", **dict.fromkeys(READ_ONLY_TOOLS, "allow")}


PRESETS: dict[PermissionPresetName, PermissionPreset] = {
    preset.id: preset
    for preset in (
        PermissionPreset(
            "ask",
            "Ask before edits",
            "Writes, edits and commands ask first",
            lambda own: {**own, "write": "ask", "edit": "ask"},
        ),
        PermissionPreset(
            "acceptEdits", "Accept edits", "Writes and edits run; commands ask (agentls's default)", dict
        ),
        PermissionPreset(
            "plan",
            "Read-only",
            "Only reading and searching: writes, edits, commands and MCP tools are refused",
            _read_only,
        ),
        PermissionPreset(
            "bypass",
            "Bypass permissions",
            "Every tool runs without asking",
            lambda own: {**dict.fromkeys(own, "allow"), "*": "allow"},
        ),
    )
}
DEFAULT_PRESET: PermissionPresetName = "acceptEdits"
"""The session's own modes, unchanged."""

PRESET_INFOS = [
    PermissionPresetInfo(id=preset.id, name=preset.name, description=preset.description)
    for preset in PRESETS.values()
]
"""The presets as ``agent/getState`` lists them, in the order a one-key switch cycles."""


class SessionPermissions:
    """A session's permission modes as its policy hook reads them: its own under a preset, with the
    tools denied for the session over both."""

    def __init__(self, modes: Modes) -> None:
        self._modes = modes
        """The hook's dictionary: changed in place."""
        self._own = dict(modes)
        self._denied: set[str] = set()
        self.preset: PermissionPresetName = DEFAULT_PRESET

    def use_preset(self, preset_id: str) -> None:
        """From the next tool call on."""
        preset = PRESETS.get(preset_id)  # type: ignore[call-overload]
        if preset is None:
            raise SessionError(
                "invalidParams", f"Unknown mode {preset_id!r}; the modes are {', '.join(PRESETS)}"
            )
        self.preset = preset.id
        self._apply()

    def deny_for_session(self, tool_names: Iterable[str]) -> None:
        """These tools are denied until the session ends, whatever the preset or a remembered rule."""
        self._denied.update(tool_names)
        self._apply()

    def _apply(self) -> None:
        modes = PRESETS[self.preset].modes(self._own)
        modes.update(dict.fromkeys(self._denied, "deny"))
        self._modes.clear()
        self._modes.update(modes)
