"""A small binding of Linux's Landlock and the confinement of one ``bash`` call (the sandbox).

Run in the call's keeper (:mod:`agentls.tools.keeper`) before it starts ``bash``: what
:func:`confine` sets up holds for the keeper and every process the command starts, and none
of them can lift it (Landlock domains only ever narrow; ``no_new_privs`` is set). This module
imports only the standard library: the keeper loads it by path and must start fast.

What :func:`confine` does, from a plan (:func:`agentls.tools.sandbox.Sandbox.plan` makes it):

- Files: a Landlock ruleset that handles every file-system right the kernel knows; reading
  and running files is allowed everywhere, writing (creating, removing, renaming, truncating,
  making links, devices, sockets or fifos) only beneath ``writable`` and in the few device
  files every shell uses (``/dev/null``, ``/dev/zero``, ``/dev/full``, ``/dev/tty``).
- Folders kept read-only inside a writable one (``readOnly``, the workspace's ``.git``):
  Landlock cannot take back a right from a sub-folder, so they are bind-mounted read-only
  over themselves in a mount namespace of the call's own (made with a user namespace when
  the process may not make one alone). A kernel that refuses both is reported: the call does
  not run.
- Network (``network: false``): Landlock's network rules with no port allowed, so no TCP
  ``connect`` or ``bind`` at all (loopback included), and with ABI 6 or newer no connection to
  an abstract unix socket made outside the sandbox; and a seccomp filter (:func:`_no_sockets`)
  that fails every ``socket()`` but a unix one with ``EACCES`` (so no UDP, raw, netlink or
  other socket either) and ``io_uring_setup`` (whose requests could make sockets past it).
  Not covered: unix sockets that are files (a socket file can still be connected to), and
  32-bit ARM programs on aarch64 (the filter knows x86_64, its i386 and x32 calls, and aarch64).

The system-call numbers are the generic ones (x86_64 and aarch64 share them).
"""

from __future__ import annotations

import ctypes
import os

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_TRUNCATE = 1 << 14
FS_IOCTL_DEV = 1 << 15
FS_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
"""The rights a rule on a file (not a folder) may hold."""
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0

FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
"""Every file-system right of an ABI version (5 and later: up to ``IOCTL_DEV``)."""
MIN_ABI_FILES = 3
"""Renames across folders (ABI 2) and ``truncate`` (ABI 3) handled: Linux 6.2."""
MIN_ABI_NETWORK = 4
"""TCP ``bind`` and ``connect`` rules: Linux 6.7."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
_MOUNT_FLAGS = {  # statvfs's f_flag bit -> the mount flag to keep on a remount (a user namespace must)
    2: 2,  # nosuid
    4: 4,  # nodev
    8: 8,  # noexec
    1024: 1024,  # noatime
    2048: 2048,  # nodiratime
    4096: 1 << 21,  # relatime
}

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EACCES = 13
AF_UNIX = 1
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_I386 = 0x40000003
SYS_IO_URING_SETUP = 425
SOCKET_CALLS = {AUDIT_ARCH_X86_64: 41, AUDIT_ARCH_AARCH64: 198}
"""``socket(2)``'s number on each 64-bit architecture this filter knows."""
I386_SOCKETCALL, I386_SOCKET = 102, 359
X32_BIT = 0x40000000

PROBE_ENV = "AGENTLS_SANDBOX_PROBE"
"""Set to ``unsupported`` to make :func:`abi` report no Landlock (for tests of the refusal)."""


class ConfineError(OSError):
    """The sandbox could not be set up: the command must not run."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]  # fmt: skip


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _failed(what: str) -> ConfineError:
    errno = ctypes.get_errno()
    return ConfineError(errno, f"{what}: {os.strerror(errno)}")


def abi() -> int:
    """The Landlock ABI version the kernel offers; 0 when it has none (or :data:`PROBE_ENV` says so)."""
    if os.environ.get(PROBE_ENV) == "unsupported":
        return 0
    try:
        version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    except (OSError, AttributeError):  # no libc syscall(): not Linux
        return 0
    return max(int(version), 0)


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # nothing there to write into
    try:
        if not os.path.isdir(path):
            access &= FILE_RIGHTS
        attr = _PathBeneathAttr(access, fd)
        if libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(attr), 0) != 0:
            raise _failed(f"landlock rule for {path}")
    finally:
        os.close(fd)


def _landlock(writable: list[str], network: bool, version: int) -> None:
    libc = _libc()
    fs = FS_RIGHTS_BY_ABI.get(version, (1 << 16) - 1)
    attr = _RulesetAttr(fs, 0 if network else NET_BIND_TCP | NET_CONNECT_TCP, 0)
    size = 8
    if not network:
        size = 16
        if version >= 6:
            attr.scoped, size = SCOPE_ABSTRACT_UNIX_SOCKET, 24
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise _failed("landlock_create_ruleset")
    try:
        _add_rule(libc, ruleset, "/", FS_READ | (FS_IOCTL_DEV & fs))
        for device in DEVICES:
            _add_rule(libc, ruleset, device, (FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV) & fs)
        for path in writable:
            _add_rule(libc, ruleset, path, fs)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _failed("prctl(PR_SET_NO_NEW_PRIVS)")
        if not network:
            _no_sockets(libc)
        if libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise _failed("landlock_restrict_self")
    finally:
        os.close(ruleset)


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


_LOAD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
"""Classic BPF: load a word of ``seccomp_data`` (``nr`` at 0, ``arch`` at 4, the first argument's
low word at 16), jump if equal / greater or equal, return."""


def _assemble(program: list[tuple[int, int, str | None, str | None] | str]) -> list[_SockFilter]:
    """``(code, k, jump_true, jump_false)`` instructions (jumps to labels, ``None``: the next one);
    a string is a label for the instruction after it."""
    labels: dict[str, int] = {}
    instructions: list[tuple[int, int, str | None, str | None]] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(at: int, label: str | None) -> int:
        return 0 if label is None else labels[label] - at - 1

    return [
        _SockFilter(code, offset(i, jt), offset(i, jf), k) for i, (code, k, jt, jf) in enumerate(instructions)
    ]


def socket_filter(arch: int) -> list[_SockFilter]:
    """The seccomp program of ``network: false`` for a kernel of architecture ``arch``."""
    native = SOCKET_CALLS[arch]
    program: list[tuple[int, int, str | None, str | None] | str] = [
        (_LOAD, 4, None, None),
        (_JEQ, arch, None, "other arch"),
        (_LOAD, 0, None, None),
        (_JGE, X32_BIT, "deny", None),  # x86_64's x32 calls: none of them is needed here
        (_JEQ, SYS_IO_URING_SETUP, "deny", None),
        (_JEQ, native, "domain", "allow"),
        "other arch",
        (_JEQ, AUDIT_ARCH_I386, None, "allow"),  # 32-bit programs on x86_64: socketcall cannot be read
        (_LOAD, 0, None, None),
        (_JEQ, I386_SOCKETCALL, "deny", None),
        (_JEQ, SYS_IO_URING_SETUP, "deny", None),
        (_JEQ, I386_SOCKET, "domain", "allow"),
        "domain",
        (_LOAD, 16, None, None),
        (_JEQ, AF_UNIX, "allow", "deny"),
        "allow",
        (_RET, SECCOMP_RET_ALLOW, None, None),
        "deny",
        (_RET, SECCOMP_RET_ERRNO | EACCES, None, None),
    ]
    return _assemble(program)


def _no_sockets(libc: ctypes.CDLL) -> None:
    """Install :func:`socket_filter` for this machine (after ``no_new_privs``)."""
    machine = os.uname().machine
    arch = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}.get(machine)
    if arch is None:
        raise ConfineError(0, f"no seccomp filter for the {machine} architecture")
    program = socket_filter(arch)
    array = (_SockFilter * len(program))(*program)
    fprog = _SockFprog(len(program), ctypes.cast(array, ctypes.POINTER(_SockFilter)))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise _failed("the seccomp filter of network: false")


def _own_mount_namespace(libc: ctypes.CDLL) -> None:
    """A mount namespace of this process's own (through a user namespace when it may not alone)."""
    if libc.unshare(CLONE_NEWNS) == 0:
        return
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise _failed("a mount namespace to keep folders read-only (unshare)")
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as file:
                file.write(text)
        except OSError as error:
            what = f"a user namespace to keep folders read-only ({name}): {error.strerror or error}"
            raise ConfineError(error.errno or 0, what) from None


def _read_only(paths: list[str]) -> None:
    """Bind-mount each of ``paths`` read-only over itself, in a mount namespace of this process's own."""
    libc = _libc()
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    _own_mount_namespace(libc)
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise _failed("making the mounts private")
    for path in paths:
        raw = os.fsencode(path)
        if libc.mount(raw, raw, None, MS_BIND | MS_REC, None) != 0:
            raise _failed(f"bind-mounting {path}")
        kept = sum(flag for bit, flag in _MOUNT_FLAGS.items() if os.statvfs(path).f_flag & bit)
        if libc.mount(None, raw, None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept, None) != 0:
            raise _failed(f"making {path} read-only")


LAUNCHER = __file__
"""``python -I -S LAUNCHER PLAN COMMAND ARGS...`` runs COMMAND confined as PLAN says (:func:`main`)."""


def confine(plan: dict[str, object]) -> None:
    """Confine this process and what it starts as ``plan`` says (``ConfineError`` if it cannot).

    ``plan``: ``{"writable": [path], "readOnly": [path], "network": bool}``, absolute paths.
    """
    version = abi()
    network = bool(plan.get("network"))
    needed = MIN_ABI_FILES if network else MIN_ABI_NETWORK
    if version < needed:
        raise ConfineError(0, f"Landlock ABI {needed} is needed, the kernel offers {version or 'none'}")
    read_only = [p for p in plan.get("readOnly", []) if os.path.lexists(p)]  # type: ignore[attr-defined]
    if read_only:
        _read_only(read_only)
    _landlock(list(plan.get("writable", [])), network, version)  # type: ignore[call-overload]


def main(argv: list[str]) -> int:
    """``landlock.py PLAN COMMAND ARGS...``: confine this process, then become COMMAND (a stdio MCP
    server); when it cannot be confined, say so on stderr and exit 126 without running it."""
    import json
    import sys

    try:
        confine(json.loads(argv[0]))
    except OSError as error:
        sys.stderr.write(f"agentls: the sandbox could not be set up: {error.strerror or error}\n")
        return 126
    try:
        os.execvp(argv[1], argv[1:])
    except OSError as error:
        sys.stderr.write(f"agentls: cannot run {argv[1]}: {error.strerror or error}\n")
        return 127


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
