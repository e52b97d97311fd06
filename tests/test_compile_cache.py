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


def agentls_run(tmp_path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    script = write_faux_script(tmp_path / "faux.json", [{"content": "Hello from the faux model."}])
    options = ["--faux-script", str(script), "--data-dir", str(tmp_path / "data"), "--cwd", str(tmp_path)]
    return subprocess.run(
        [sys.executable, "-m", "agentls", "run", "hi", *options],
        cwd=PROJECT_ROOT,
        env={**environment(), "AGENTLS_COMPILE_CACHE": str(cache)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_a_run_keeps_what_it_compiled_and_the_next_run_reuses_it(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "compiled.marshal"
    first = agentls_run(tmp_path, path)
    assert first.returncode == 0, first.stderr
    assert "Hello from the faux model." in first.stdout
    codes = marshal.loads(path.read_bytes())
    assert all(isinstance(code, CodeType) for code in codes.values())
    assert any(mode == "exec" and text.startswith("def __create_fn__(") for mode, text in codes)
    assert any(mode == "eval" for mode, _ in codes)  # typing's forward references (pydantic's annotations)

    kept = path.read_bytes()
    second = agentls_run(tmp_path, path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert path.read_bytes() == kept  # everything came from the cache: nothing new to write


def test_a_damaged_or_unwritable_cache_does_not_stop_a_run(tmp_path: Path) -> None:
    damaged = tmp_path / "compiled.marshal"
    damaged.write_bytes(b"\xe3not marshal data")
    done = agentls_run(tmp_path, damaged)
    assert done.returncode == 0, done.stderr
    assert len(marshal.loads(damaged.read_bytes())) > 100  # started afresh

    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")
    done = agentls_run(tmp_path, not_a_folder / "compiled.marshal")
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
            env={**environment(), "AGENTLS_COMPILE_CACHE": str(tmp_path / "compiled.marshal")},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    plain = made("plain")
    assert made("cached") == plain  # compiled, and saved at exit
    saved = marshal.loads((tmp_path / "compiled.marshal").read_bytes())
    assert any(text.startswith("def __create_fn__(") for _, text in saved)
    assert made("cached") == plain  # read back from the file


def test_by_default_the_cache_is_kept_with_the_package_like_its_pyc_files(tmp_path: Path) -> None:
    import agentls

    done = subprocess.run(
        [sys.executable, "-m", "agentls", "acp"],
        cwd=PROJECT_ROOT,
        env={**environment(), "XDG_CACHE_HOME": str(tmp_path)},  # a fresh HOME does not lose it
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    name = f"compiled-texts.{sys.implementation.cache_tag}.marshal"
    kept = Path(agentls.__file__).parent / "__pycache__" / name
    assert any(text.startswith("def __create_fn__(") for _, text in marshal.loads(kept.read_bytes()))
    assert not (tmp_path / "agentls").exists()


def test_serve_compiles_its_first_imports_through_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "compiled.marshal"
    done = subprocess.run(
        [sys.executable, "-m", "agentls", "serve"],
        cwd=PROJECT_ROOT,
        env={**environment(), "AGENTLS_COMPILE_CACHE": str(cache)},
        stdin=subprocess.DEVNULL,  # the end of input: the server stops
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    # an annotation of the protocol's models, which serve imports to answer initialize early
    assert ("eval", "ThinkingLevelName | None") in marshal.loads(cache.read_bytes())
