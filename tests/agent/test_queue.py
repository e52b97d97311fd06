"""The kernel's pending-message queue: items by id, and the operations a host edits them with."""

from __future__ import annotations

import pytest
from agentls.agent import PendingMessageQueue, UnknownQueueItem
from agentls.ai import Context, CustomMessage, UserMessage

from tests.agent.helpers import make_agent, text


def user(content: str) -> UserMessage:
    return UserMessage(content=content, timestamp=1)


def contents(queue: PendingMessageQueue) -> list[str]:
    return [message.content for message in queue.messages]  # type: ignore[misc]


def queue_of(*names: str) -> PendingMessageQueue:
    queue = PendingMessageQueue("one-at-a-time")
    for name in names:
        queue.enqueue(user(name), item_id=name)
    return queue


def test_items_keep_their_order_and_one_at_a_time_takes_a_whole_item() -> None:
    queue = PendingMessageQueue("one-at-a-time")
    first = queue.enqueue(user("a"))
    queue.enqueue(user("context"), user("b"), item_id="with-context")
    queue.enqueue(user("c"))
    assert first in queue and [item.id for item in queue.items][1] == "with-context"
    assert contents(queue) == ["a", "context", "b", "c"]
    assert [m.content for m in queue.drain()] == ["a"]
    assert [m.content for m in queue.drain()] == ["context", "b"]  # delivered together
    assert [m.content for m in queue.drain()] == ["c"]
    assert queue.drain() == [] and not queue.has_items()


def test_all_mode_takes_every_message_of_every_item() -> None:
    queue = PendingMessageQueue("all")
    queue.enqueue(user("a"))
    queue.enqueue(user("context"), user("b"))
    assert [m.content for m in queue.drain()] == ["a", "context", "b"]
    assert queue.items == ()


def test_remove_replace_and_move_leave_the_other_items_in_order() -> None:
    queue = queue_of("a", "b", "c", "d")
    assert queue.remove("b").messages[0].content == "b"
    assert contents(queue) == ["a", "c", "d"]
    queue.replace("c", user("context"), user("c2"))
    assert contents(queue) == ["a", "context", "c2", "d"]
    assert queue.item("c").messages[-1].content == "c2"
    queue.move("d", 0)
    assert [item.id for item in queue.items] == ["d", "a", "c"]
    queue.move("d", 1)
    assert [item.id for item in queue.items] == ["a", "d", "c"]
    queue.move("c", 0)  # with both its messages
    assert contents(queue) == ["context", "c2", "a", "d"]
    queue.move("a", 99)  # past the end: last
    assert [item.id for item in queue.items] == ["c", "d", "a"]


def test_an_unknown_item_is_refused_and_changes_nothing() -> None:
    queue = queue_of("a", "b")
    for change in (
        lambda: queue.remove("x"),
        lambda: queue.replace("x", user("y")),
        lambda: queue.move("x", 0),
        lambda: queue.item("x"),
    ):
        with pytest.raises(UnknownQueueItem, match="'x'"):
            change()
    assert [item.id for item in queue.items] == ["a", "b"]
    with pytest.raises(ValueError, match="already queued"):
        queue.enqueue(user("again"), item_id="a")
    with pytest.raises(ValueError, match="at least one message"):
        queue.enqueue()
    with pytest.raises(ValueError, match="at least one message"):
        queue.replace("a")
    assert contents(queue) == ["a", "b"]


def test_generated_ids_do_not_take_a_given_one() -> None:
    queue = PendingMessageQueue("one-at-a-time")
    queue.enqueue(user("a"), item_id="queued-1")
    assert queue.enqueue(user("b")) == "queued-2"


async def test_an_item_the_loop_has_taken_can_no_longer_be_edited() -> None:
    seen: list[Context] = []

    def answer(ctx: Context, options: object, state: object, model: object) -> object:
        seen.append(ctx)
        return text("ok")

    agent, _, _ = make_agent([answer])
    context = CustomMessage(role="editorContext", content="the open file", timestamp=1)
    agent.steering_queue.enqueue(context, user("question"), item_id="item-1")
    await agent.prompt("go")
    # the loop took the item at its first steering poll: both messages before the one answer
    assert len(seen) == 1
    assert [m.role for m in agent.state.messages] == ["user", "editorContext", "user", "assistant"]
    assert "item-1" not in agent.steering_queue and agent.queued_steering == ()
    with pytest.raises(UnknownQueueItem):
        agent.steering_queue.replace("item-1", user("edited"))
    with pytest.raises(UnknownQueueItem):
        agent.steering_queue.move("item-1", 0)
    with pytest.raises(UnknownQueueItem):
        agent.steering_queue.remove("item-1")
