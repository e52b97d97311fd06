"""The files a summarised conversation touched, as Pi lists them after the summary."""

from __future__ import annotations

from agentls.session.compaction.file_ops import FileOperations, format_file_operations

from tests.session.compaction.helpers import call, result, user


def test_read_write_and_edit_calls_are_tracked_by_path() -> None:
    ops = FileOperations()
    for message in [
        call("read", path="b.py"),
        call("read", path="a.py"),
        call("edit", path="a.py"),
        call("write", path="new.py"),
        call("bash", command="cat c.py"),  # only the file tools count
        call("read"),  # no path
        user(),
        result(),
    ]:
        ops.add_message(message)
    assert ops.file_lists() == (["b.py"], ["a.py", "new.py"])  # a file read then edited is modified


def test_the_lists_are_appended_as_tags() -> None:
    assert format_file_operations(["b.py"], ["a.py", "new.py"]) == (
        "\n\n<read-files>\nb.py\n</read-files>\n\n<modified-files>\na.py\nnew.py\n</modified-files>"
    )
    assert format_file_operations([], ["a.py"]) == "\n\n<modified-files>\na.py\n</modified-files>"
    assert format_file_operations([], []) == ""
