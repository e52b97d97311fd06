"""The environment that the shells of ``bash`` and ``agent/bash`` start with.

This process's environment, less the providers' API keys: a command the model writes
(``env``, ``printenv``, a script that posts its environment somewhere) would otherwise
hand them to the model, to the session file and to whatever the command talks to.
Left out are the variables that hold a key (``apiKeyEnv`` of every provider, built in
or in the user's ``models.json``), and any variable whose value is a credential in use
(:func:`agentls.ai.secrets.is_registered`). The variables the user lists to keep (the
``passKeys`` initialization option) stay. MCP servers get their own environment
(:mod:`agentls.mcp`), not this one.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentls.ai.providers.catalog import (
    CatalogError,
    ModelsFile,
    builtin_catalog,
    load_models_file,
    merge_catalogs,
)
from agentls.ai.secrets import is_registered


def key_variables(user: ModelsFile | None = None) -> frozenset[str]:
    """The environment variables that providers read API keys from: the built-in ones and ``user``'s."""
    if user is None:
        return _builtin_key_variables()
    merged = merge_catalogs(builtin_catalog(), user).values()
    return frozenset(entry.api_key_env for entry in merged if entry.api_key_env)


@functools.cache
def _builtin_key_variables() -> frozenset[str]:
    return frozenset(entry.api_key_env for entry in builtin_catalog().providers.values() if entry.api_key_env)


@dataclass(frozen=True)
class ToolEnvironment:
    """What the tools' shells get: this process's environment without ``hidden`` (unless in ``keep``)."""

    hidden: frozenset[str] = field(default_factory=_builtin_key_variables)
    keep: frozenset[str] = frozenset()

    @classmethod
    def of(cls, models_file: Path | None, keep: Iterable[str] | None) -> ToolEnvironment:
        """The variables of the built-in providers and of ``models_file``'s hidden, ``keep`` kept.

        A models file that cannot be read hides the built-in ones only: the session that uses
        it reports what is wrong with it.
        """
        user = None
        if models_file is not None:
            with contextlib.suppress(CatalogError):
                user = load_models_file(models_file)
        return cls(key_variables(user), frozenset(keep or ()))

    def build(self) -> dict[str, str]:
        """The environment for one command, read now (a key registered since is left out too)."""
        return {
            name: value
            for name, value in os.environ.items()
            if name in self.keep or not (name in self.hidden or is_registered(value))
        }
