"""Shared fixtures: where the project and the shared conformance material live."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    """``shared/`` of the workplace: ``$AGENTLS_SHARED`` or the folder beside the project."""
    return Path(os.environ.get("AGENTLS_SHARED", PROJECT_ROOT.parent / "shared")).resolve()


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    path = shared_dir() / "conformance"
    if not (path / "compare.py").is_file():
        pytest.fail(f"the conformance harness is missing: expected {path}/compare.py (set AGENTLS_SHARED)")
    return path


@pytest.fixture(autouse=True)
def _no_agentls_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Servers started by tests see only what the test configures: not the developer's sessions, keys or
    provider addresses."""
    for name in (
        "AGENTLS_FAUX_SCRIPT",
        "AGENTLS_DATA_DIR",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A short folder of the test's own (mode 0700) for a per-user server's socket: a Unix
    socket's path must be short, and the server refuses a folder open to others."""
    folder = Path(tempfile.mkdtemp(prefix="als-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
