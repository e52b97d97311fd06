"""Where agentls keeps its data (sessions, rules, logs) unless told otherwise.

A module of its own so that the command line can name a log's path without importing the
session layer (which loads the whole server).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def default_data_dir() -> Path:
    """``$AGENTLS_DATA_DIR`` if set, else the platform's user data folder for agentls."""
    value = os.environ.get("AGENTLS_DATA_DIR")
    if value:
        return Path(value).expanduser()
    # appauthor=False: on Windows the default would be ...\agentls\agentls.
    return Path(platformdirs.user_data_dir("agentls", appauthor=False))
