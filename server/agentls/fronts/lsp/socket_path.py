"""Where the per-user server listens, and the checks that keep its socket the user's own.

Shared by the server (:mod:`agentls.fronts.lsp.listen`) and the stdio bridge
(:mod:`agentls.bridge`), which imports nothing else of the server: the standard library only.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

SOCKET_ENV = "AGENTLS_SOCKET"
SOCKET_NAME = "serve.sock"


class SocketRefused(Exception):
    """The socket or its folder may not be used (someone else's, open to others, taken)."""


def default_socket_path() -> Path:
    """``$AGENTLS_SOCKET``, else ``$XDG_RUNTIME_DIR/agentls/serve.sock``, else ``DATA_DIR/run/serve.sock``."""
    explicit = os.environ.get(SOCKET_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "agentls" / SOCKET_NAME
    from agentls.data_dir import default_data_dir

    return default_data_dir() / "run" / SOCKET_NAME


def socket_path(address: str | None) -> Path:
    """The path of ``--listen``'s address: ``unix:PATH``, or ``unix`` (or nothing) for the default."""
    if address in (None, "", "unix"):
        return default_socket_path()
    assert address is not None
    if not address.startswith("unix:") or not address[5:]:
        raise SocketRefused(f"--listen takes unix:PATH or unix (the default path), not {address!r}")
    return Path(address[5:]).expanduser().absolute()


def own_folder(path: Path) -> None:
    """Make the socket's folder (``0700``) or check the one there: the user's, closed to others."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise SocketRefused(f"{folder} belongs to another user (uid {info.st_uid}): not using its socket")
    if info.st_mode & 0o022:
        raise SocketRefused(
            f"{folder} is writable by other users (mode {stat.S_IMODE(info.st_mode):o}): another user "
            "could replace the socket; use a folder of your own (mode 0700)"
        )


def check_socket(path: Path) -> bool:
    """Whether a socket of the user's is at ``path`` (``False``: nothing there); refused when what is
    there is another user's, or not a socket."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISSOCK(info.st_mode):
        raise SocketRefused(f"{path} is not a socket")
    if info.st_uid != os.getuid():
        raise SocketRefused(f"the socket {path} belongs to another user (uid {info.st_uid})")
    return True


def connect(path: Path) -> socket.socket | None:
    """A connection to the server on ``path``; ``None`` when nothing answers there."""
    if not check_socket(path):
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        connection.close()
        return None
    return connection
