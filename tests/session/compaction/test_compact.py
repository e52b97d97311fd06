"""What a compaction summarises (Pi's ``prepareCompaction``) and the summary it makes (``compact``)."""

from __future__ import annotations

from agentls.ai import AssistantMessage, TextContent
from agentls.session.compaction.compact import compact, prepare_compaction
from agentls.session.compaction.summary import SUMMARIZATION_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT
from agentls.session.compaction.tokens import estimate_context_tokens

from tests.session.compaction.helpers import answer, call, result, transcript, user
from tests.session.compaction.test_summary import Recorded, said


def test_the_span_before_the_cut_is_summarised() -> None:
    messages = [user(40, "a"), call("read", path="a.py"), result(40), answer(40), user(40, "b"), answer(10)]
    history = transcript(*messages)
    preparation = prepare_compaction(history, 50)
    assert preparation is not None
    assert preparation.first_kept_entry_id == "e4" and not preparation.is_split_turn
    assert preparation.messages_to_summarize == messages[:4] and preparation.turn_prefix_messages == []
    assert preparation.previous_summary is None
    assert preparation.tokens_before == estimate_context_tokens(messages).tokens
    assert preparation.file_ops.file_lists() == (["a.py"], [])


def test_nothing_to_summarise_and_a_fresh_compaction_give_none() -> None:
    assert prepare_compaction(transcript(), 50) is None
    assert prepare_compaction(transcript(user(10), answer(10)), 50) is None  # all of it fits the budget
    assert prepare_compaction(transcript(user(100), answer(100), ("s", "e1")), 50) is None


def test_a_second_compaction_starts_at_the_first_ones_kept_messages() -> None:
    messages = [user(40, "a"), answer(40), user(40, "b"), call("edit", path="b.py"), result(40)]
    later = [answer(40), user(40, "c"), answer(10)]
    history = transcript(*messages, ("## Goal\nfirst", "e2"), *later)
    preparation = prepare_compaction(history, 50)
    assert preparation is not None
    assert preparation.previous_summary == "## Goal\nfirst"
    # from the kept messages of the first (entry 2) to the new cut, the first summary left out
    assert preparation.messages_to_summarize == [*messages[2:], later[0]]
    assert preparation.first_kept_entry_id == "e7"
    # the files of the first compaction are carried over
    assert preparation.file_ops.file_lists() == (["old.txt"], ["b.py", "changed.txt"])


def test_a_split_turn_summarises_its_beginning_apart() -> None:
    messages = [user(5, "a"), answer(5), user(5, "b"), call("read", path="x"), result(30), call("ls", "c2")]
    messages += [result(30, "c2"), answer(5)]
    preparation = prepare_compaction(transcript(*messages), 40)
    assert preparation is not None and preparation.is_split_turn
    assert preparation.messages_to_summarize == messages[:2]
    assert preparation.turn_prefix_messages == messages[2:5]
    assert preparation.first_kept_entry_id == "e5"


async def test_the_summary_gets_the_file_lists() -> None:
    messages = [user(40, "a"), call("read", path="a.py"), result(40), call("write", path="b.py"), result(40)]
    messages += [user(40, "b"), answer(10)]
    preparation = prepare_compaction(transcript(*messages), 50)
    assert preparation is not None
    model = Recorded(said("## Goal\nG"))
    compacted = await compact(preparation, model.summarizer(), 1000, "the files")
    assert compacted.summary == (
        "## Goal\nG\n\n<read-files>\na.py\n</read-files>\n\n<modified-files>\nb.py\n</modified-files>"
    )
    assert compacted.first_kept_entry_id == "e5" and compacted.tokens_before == preparation.tokens_before
    assert (compacted.compaction.read_files, compacted.compaction.modified_files) == (("a.py",), ("b.py",))
    prompt = model.requests[0][0].messages[0].content[0].text  # type: ignore[union-attr]
    assert prompt.endswith(SUMMARIZATION_PROMPT + "\n\nAdditional focus: the files")


async def test_a_split_turn_merges_both_summaries_and_their_usage() -> None:
    messages = [user(5, "a"), answer(5), user(5, "b"), call("ls"), result(30), call("ls", "c2")]
    messages += [result(30, "c2"), answer(5)]
    preparation = prepare_compaction(transcript(*messages), 40)
    assert preparation is not None
    model = Recorded(said("history"), said("prefix"))
    compacted = await compact(preparation, model.summarizer(), 1000)
    assert compacted.summary == "history\n\n---\n\n**Turn Context (split turn):**\n\nprefix"
    history_request, prefix_request = (context.messages[0].content[0].text for context, _ in model.requests)  # type: ignore[union-attr]
    assert history_request.startswith("<conversation>\n[User]: aaaaaaaaaaaaaaaaaaaa")
    assert prefix_request.startswith("<conversation>\n[User]: bbbb")
    assert prefix_request.endswith(TURN_PREFIX_SUMMARIZATION_PROMPT)
    usage = compacted.compaction.usage
    assert usage is not None and usage.output == 2 + 2  # both answers' output


async def test_a_split_turn_without_history_says_so() -> None:
    messages = [user(5, "b"), call("ls"), result(30), call("ls", "c2"), result(30, "c2"), answer(5)]
    preparation = prepare_compaction(transcript(*messages), 40)
    assert preparation is not None and preparation.messages_to_summarize == []
    model = Recorded(AssistantMessage(content=[TextContent(text="prefix")]))
    compacted = await compact(preparation, model.summarizer(), 1000)
    assert compacted.summary == "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nprefix"
    assert len(model.requests) == 1
