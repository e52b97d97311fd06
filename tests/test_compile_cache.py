"""The code that ``dataclasses`` and ``typing`` compile from text, kept on disk between starts
(:mod:`agentls.cli.compile_cache`): through the real command line, in subprocesses."""

from __future__ import annotations

import marshal
import subprocess
import sys
from pathlib import Path
from types import CodeType

from tests.conftest import PROJECT_ROOT
from tests.server.conftest import write_faux_script
from tests.test_cli_run import TIMEOUT, environment


def agentls_run(tmp_path: Path, cache_home: Path) -> subprocess.CompletedProcess[str]:
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Hello from the faux model."}])
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    return subprocess.run(
        [sys.executable, "-m", "agentls", "run", "hi", *options],
        cwd=PROJECT_ROOT,
        env={**environment(), "XDG_CACHE_HOME": str(cache_home)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def cache_file(cache_home: Path) -> Path:
    [path] = (cache_home / "agentls").glob("compiled-*.marshal")
    return path


def test_a_run_keeps_what_it_compiled_and_the_next_run_reuses_it(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    first = agentls_run(tmp_path, cache_home)
    assert first.returncode == 0, first.stderr
    assert "Hello from the faux model." in first.stdout
    path = cache_file(cache_home)
    assert path.name.startswith(f"compiled-{sys.implementation.cache_tag}-agentls-")
    codes = marshal.loads(path.read_bytes())
    assert all(isinstance(code, CodeType) for code in codes.values())
    assert any(mode == "exec" and text.startswith("def __create_fn__(") for mode, text in codes)
    assert any(mode == "eval" for mode, _ in codes)  # typing's forward references (pydantic's annotations)

    kept = path.read_bytes()
    second = agentls_run(tmp_path, cache_home)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert path.read_bytes() == kept  # everything came from the cache: nothing new to write


def test_a_damaged_or_unwritable_cache_does_not_stop_a_run(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    (cache_home / "agentls").mkdir(parents=True)
    damaged = cache_home / "agentls" / f"compiled-{sys.implementation.cache_tag}-agentls-0.1.0.marshal"
    damaged.write_bytes(b"\xe3not marshal data")
    done = agentls_run(tmp_path, cache_home)
    assert done.returncode == 0, done.stderr
    assert isinstance(marshal.loads(cache_file(cache_home).read_bytes()), dict)  # started afresh

    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    done = agentls_run(tmp_path, not_a_folder)
    assert done.returncode == 0, done.stderr
    assert "Hello from the faux model." in done.stdout


CLASSES = """
import dataclasses, inspect, json, sys, typing
if sys.argv[1] == "cached":
    from agentls.cli import compile_cache
    compile_cache.install()

@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    tags: tuple[str, ...] = ()

@dataclasses.dataclass(order=True)
class Version:
    major: int
    minor: "int" = 0
    notes: list[str] = dataclasses.field(default_factory=list, compare=False)

class Hinted:
    value: "list[int] | None"
    other: "typing.Optional[str]"

point = Point(1)
try:
    point.x = 2
    frozen = "assigned"
except dataclasses.FrozenInstanceError as error:
    frozen = type(error).__name__
print(json.dumps({
    "repr": [repr(point), repr(Version(1))],
    "eq": [point == Point(1), point == Point(2), hash(point) == hash(Point(1))],
    "order": Version(1, 2) < Version(2),
    "frozen": frozen,
    "signatures": [str(inspect.signature(Point)), str(inspect.signature(Version))],
    "init annotations": repr(Point.__init__.__annotations__),
    "hints": repr(typing.get_type_hints(Hinted)),
    "doc": Point.__doc__,
}))
"""


def test_classes_made_through_the_cache_are_the_same_as_without_it(tmp_path: Path) -> None:
    def made(mode: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", CLASSES, mode],
            cwd=PROJECT_ROOT,
            env={**environment(), "XDG_CACHE_HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    plain = made("plain")
    assert made("cached") == plain  # compiled, and saved at exit
    saved = marshal.loads(cache_file(tmp_path).read_bytes())
    assert any(text.startswith("def __create_fn__(") for _, text in saved)
    assert made("cached") == plain  # read back from the file
