"""Disk access checked on what is opened: symlinks out refused, links inside followed, swaps raced.

The workspace's boundary check used to resolve a path and then open it by name, so a
process in the workspace swapping a symlink in between could lead a read or a write
outside. These tests swap links for real (between the check and the use, and in a
thread racing the tools) and look at what the tools returned and what the disk holds.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections import Counter
from pathlib import Path

import pytest
from agentls.tools import DiskWorkspace, ToolInputError
from agentls.tools.edit import write_tool
from agentls.tools.files import (
    NotRegularFile,
    SymlinkEscape,
    list_folder,
    open_file,
    stat_file,
    write_text_atomic,
)
from agentls.tools.search import grep_tool

SECRET = "the outside secret\n"
INSIDE = "inside text\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    return (tmp_path / "root").resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder.resolve()


def swap_link(link: Path, target: Path) -> None:
    """Point ``link`` at ``target`` atomically (a new link renamed over it), as a racing process would."""
    temp = link.with_name(link.name + ".swap")
    os.symlink(target, temp)
    os.replace(temp, link)


def contents(folder: Path) -> dict[str, str]:
    """The text of every file in ``folder``, by name: what a write that escaped would have changed."""
    return {path.name: path.read_text() for path in folder.iterdir()}


def read(path: Path, root: Path) -> bytes:
    with open_file(path, root=str(root)) as file:
        return file.read()


# --- the walk of one path ----------------------------------------------------------------


def test_links_out_are_refused_at_any_component(root: Path, outside: Path) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    (root / "up").symlink_to("..")
    for path in (root / "link.txt", root / "linkdir" / "secret.txt", root / "up" / "outside" / "secret.txt"):
        with pytest.raises(SymlinkEscape) as raised:
            read(path, root)
        assert raised.value.target.startswith(str(outside.parent))
        with pytest.raises(SymlinkEscape):
            stat_file(path, root=str(root))
    with pytest.raises(SymlinkEscape):
        list_folder(root / "linkdir", root=str(root))
    with pytest.raises(SymlinkEscape):
        write_text_atomic(root / "link.txt", "overwritten", root=str(root))
    with pytest.raises(SymlinkEscape):
        write_text_atomic(root / "linkdir" / "new.txt", "planted", root=str(root))
    assert contents(outside) == {"secret.txt": SECRET}


def test_links_inside_are_followed(root: Path) -> None:
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "deep" / "f.txt").write_text(INSIDE)
    (root / "alias").symlink_to("real")  # relative
    (root / "abs.txt").symlink_to(root / "real" / "deep" / "f.txt")  # absolute
    (root / "real" / "deep" / "back").symlink_to("../..")  # back to the root, still inside
    (root / "chain.txt").symlink_to("abs.txt")
    for path in (
        root / "alias" / "deep" / "f.txt",
        root / "abs.txt",
        root / "chain.txt",
        root / "real" / "deep" / "back" / "alias" / "deep" / "f.txt",
    ):
        assert read(path, root) == INSIDE.encode()
        assert stat.S_ISREG(stat_file(path, root=str(root)).st_mode)
    assert [entry.name for entry in list_folder(root / "alias", root=str(root))] == ["deep"]
    write_text_atomic(root / "chain.txt", "new\n", root=str(root))
    assert (root / "chain.txt").is_symlink() and (root / "abs.txt").is_symlink()
    assert (root / "real" / "deep" / "f.txt").read_text() == "new\n"


def test_folder_entries_tell_links_files_and_folders(root: Path, outside: Path) -> None:
    (root / "d").mkdir()
    (root / "f.txt").write_text("x")
    (root / "to_d").symlink_to("d")
    (root / "out").symlink_to(outside / "secret.txt")
    entries = {entry.name: entry for entry in list_folder(root, root=str(root))}
    assert sorted(entries) == ["d", "f.txt", "out", "to_d"]
    assert (entries["d"].is_dir, entries["d"].is_file, entries["d"].is_link) == (True, False, False)
    assert (entries["f.txt"].is_dir, entries["f.txt"].is_file) == (False, True)
    assert (entries["to_d"].is_dir, entries["to_d"].is_link) == (True, True)
    assert (entries["out"].is_file, entries["out"].is_link) == (True, True)  # listed; reading it is refused


def test_writes_create_folders_keep_modes_and_errors_stay_os_errors(root: Path) -> None:
    write_text_atomic(root / "a" / "b" / "c.txt", "hello", root=str(root))
    assert (root / "a" / "b" / "c.txt").read_text() == "hello"
    os.chmod(root / "a" / "b" / "c.txt", 0o751)
    write_text_atomic(root / "a" / "b" / "c.txt", "again", root=str(root))
    assert stat.S_IMODE((root / "a" / "b" / "c.txt").stat().st_mode) == 0o751
    assert sorted(p.name for p in (root / "a" / "b").iterdir()) == ["c.txt"]  # no temporary file left
    with pytest.raises(NotADirectoryError):
        write_text_atomic(root / "a" / "b" / "c.txt" / "d.txt", "x", root=str(root))
    with pytest.raises(FileNotFoundError):
        read(root / "missing.txt", root)
    with pytest.raises(FileNotFoundError):
        stat_file(root / "no" / "such.txt", root=str(root))
    with pytest.raises(IsADirectoryError):
        read(root / "a", root)
    (root / "loop").symlink_to("loop")
    with pytest.raises(OSError, match="symbolic links"):
        read(root / "loop", root)


def test_a_dangling_link_inside_is_created_through_by_a_write(root: Path) -> None:
    (root / "later.txt").symlink_to("sub/target.txt")
    with pytest.raises(FileNotFoundError):
        read(root / "later.txt", root)
    write_text_atomic(root / "later.txt", "made", root=str(root))
    assert (root / "sub" / "target.txt").read_text() == "made" and (root / "later.txt").is_symlink()


def test_without_a_root_everything_is_followed(root: Path, outside: Path) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    with open_file(root / "link.txt") as file:
        assert file.read() == SECRET.encode()
    write_text_atomic(root / "link.txt", "allowed\n")
    assert (outside / "secret.txt").read_text() == "allowed\n"


def test_fifos_and_devices_are_refused_without_being_opened(root: Path) -> None:
    os.mkfifo(root / "pipe")  # opening it to read would wait for a writer forever
    (root / "to-pipe").symlink_to("pipe")
    for name in ("pipe", "to-pipe"):
        with pytest.raises(NotRegularFile) as raised:
            open_file(root / name, root=str(root))
        assert raised.value.kind == "FIFO (named pipe)"
    with pytest.raises(NotRegularFile, match="character device"):
        open_file("/dev/null")
    with pytest.raises(IsADirectoryError):
        open_file(root, root=str(root))
    with pytest.raises(NotRegularFile):
        write_text_atomic(root / "pipe", "over it\n", root=str(root))
    assert stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)  # left as it was
    assert [p.name for p in root.iterdir() if p.name.endswith(".tmp")] == []


def test_the_protected_folder_is_refused_whatever_the_spelling(root: Path, tmp_path: Path) -> None:
    data = root / "data"
    data.mkdir()
    (root / "data-link").symlink_to(data)
    for allow_outside in (False, True):
        workspace = DiskWorkspace(root, allow_outside=allow_outside)
        workspace.protect(data)
        assert workspace.protected == (data,)
        for path in ("data", "data/mcp.json", "./x/../data/AGENTS.md", str(data / "sessions"), "data-link/a"):
            with pytest.raises(ToolInputError, match="agentls's data folder"):
                workspace.resolve(path)
        assert workspace.resolve("database.txt") == root / "database.txt"  # a name that only starts alike


# --- the workspace: the check is made on what is opened ------------------------------------


class LosingTheRace(DiskWorkspace):
    """A workspace whose every boundary check is at once followed by a swap of ``link`` to ``target``.

    This is the race of a process in the workspace, won by it every time: the check of
    :meth:`resolve` saw the link pointing inside, the file system work that follows
    meets it pointing out.
    """

    def __init__(self, root: Path, link: Path, target: Path) -> None:
        super().__init__(root)
        self.link, self.target = link, target

    def resolve(self, path: str | Path) -> Path:
        resolved = super().resolve(path)
        swap_link(self.link, self.target)
        return resolved


async def test_a_link_swapped_right_after_the_check_is_refused_where_it_is_used(
    root: Path, outside: Path
) -> None:
    (root / "inside.txt").write_text(INSIDE)
    link = root / "link.txt"
    ws = LosingTheRace(root, link, outside / "secret.txt")
    uses = {
        "read": lambda: ws.read_bytes("link.txt"),
        "stat": lambda: ws.stat("link.txt"),
        "exists": lambda: ws.exists("link.txt"),
        "write": lambda: ws.write_text("link.txt", "overwritten"),
    }
    for name, use in uses.items():
        swap_link(link, root / "inside.txt")
        with pytest.raises(ToolInputError, match=r"resolves through a symlink to .*outside.*secret\.txt"):
            await use()
        assert link.readlink() == outside / "secret.txt", name  # the swap did happen after the check
    (root / "folder").mkdir()
    ws.target = outside
    swap_link(link, root / "folder")
    with pytest.raises(ToolInputError, match="outside the workspace"):
        ws.list_folder("link.txt")
    assert contents(outside) == {"secret.txt": SECRET}
    assert (root / "inside.txt").read_text() == INSIDE


async def test_allow_outside_still_allows_everything(root: Path, outside: Path) -> None:
    (root / "link").symlink_to(outside)
    ws = DiskWorkspace(root, allow_outside=True)
    assert await ws.read_bytes("link/secret.txt") == SECRET.encode()
    assert [entry.name for entry in ws.list_folder("link")] == ["secret.txt"]
    await ws.write_text("link/new.txt", "written outside")
    assert (outside / "new.txt").read_text() == "written outside"


# --- a race: a thread swapping a link while the tools use it -------------------------------


class Swapper:
    """A thread pointing ``link`` at ``inside`` and ``outside`` in turn, as fast as it can, until stopped."""

    def __init__(self, link: Path, inside: Path, outside: Path, most: int = 50_000) -> None:
        self.link, self.targets, self.most = link, (inside, outside), most
        self.swaps = 0
        self.started = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.started.set()
        while not self.stop.is_set() and self.swaps < self.most:
            swap_link(self.link, self.targets[self.swaps % 2])
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self.thread.start()
        self.started.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


async def test_reads_and_writes_racing_a_swapped_link_never_reach_the_outside_file(
    root: Path, outside: Path
) -> None:
    (root / "inside.txt").write_text(INSIDE)
    link = root / "link.txt"
    link.symlink_to("inside.txt")
    ws = DiskWorkspace(root)
    outcomes: Counter[str] = Counter()
    with Swapper(link, root / "inside.txt", outside / "secret.txt") as swapper:
        for index in range(300):
            try:
                data = await ws.read_bytes("link.txt")
                outcomes["outside" if SECRET.encode() in data else "inside"] += 1
            except ToolInputError:
                outcomes["refused"] += 1
            try:
                await ws.write_text("link.txt", f"{INSIDE}written {index}\n")
                outcomes["written"] += 1
            except ToolInputError:
                outcomes["write refused"] += 1
    assert swapper.swaps > 0
    assert outcomes["outside"] == 0, outcomes
    assert outcomes["inside"] + outcomes["refused"] == 300
    assert contents(outside) == {"secret.txt": SECRET}
    assert (root / "inside.txt").read_text().startswith(INSIDE)


async def test_write_and_grep_tools_racing_a_swapped_folder_link_stay_inside(
    root: Path, outside: Path
) -> None:
    (root / "real").mkdir()
    (root / "real" / "secret.txt").write_text("an inside needle\n")
    (outside / "secret.txt").write_text(f"{SECRET}needle\n")
    link = root / "dir"
    link.symlink_to("real")
    ws = DiskWorkspace(root)
    write, grep = write_tool(ws), grep_tool(ws, rg=None)
    texts: list[str] = []
    with Swapper(link, root / "real", outside):
        for index in range(150):
            for tool, args in (
                (grep, {"pattern": "needle"}),
                (grep, {"pattern": "needle", "path": "dir/secret.txt"}),
                (write, {"path": "dir/new.txt", "content": f"written {index}\n"}),
            ):
                try:
                    result = await tool.execute("c", args, None, None)
                    texts.append(str(result.content))
                except ToolInputError as error:
                    texts.append(str(error))
    assert not [text for text in texts if "outside secret" in text]
    assert any("an inside needle" in text for text in texts)
    assert contents(outside) == {"secret.txt": f"{SECRET}needle\n"}


async def test_racing_reads_run_concurrently_in_worker_threads(root: Path, outside: Path) -> None:
    """Many tool calls at once (as a model's parallel calls run), each in its own worker thread."""
    (root / "inside.txt").write_text(INSIDE)
    link = root / "link.txt"
    link.symlink_to("inside.txt")
    ws = DiskWorkspace(root)

    async def attempt() -> bytes | None:
        try:
            return await ws.read_bytes("link.txt")
        except ToolInputError:
            return None

    with Swapper(link, root / "inside.txt", outside / "secret.txt"):
        results = await asyncio.gather(*(attempt() for _ in range(300)))
    assert all(result in (None, INSIDE.encode()) for result in results)
