"""Request bodies whose messages' JSON is kept between requests (``agentls.ai.providers.body_bytes``).

A provider that has sent a conversation before must send, turn after turn, the body a
provider that never saw it sends; a payload hook's changes are sent whatever was kept.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from agentls.ai import Context, user_message
from agentls.ai.providers.body_bytes import BodyEncoder
from agentls.ai.types import StreamOptions

from tests.ai.providers.helpers import (
    READ_TOOL,
    a_end,
    a_reply,
    a_start,
    a_text,
    anthropic_provider,
    final,
    o_chunk,
    o_usage,
    openai_provider,
)
from tests.ai.providers.mock_http import MockServer, Reply, openai_sse


def o_reply(text: str) -> Reply:
    chunks = [o_chunk({"role": "assistant", "content": text}), o_chunk(finish_reason="stop"), o_usage()]
    return Reply(body=openai_sse(chunks))


PROVIDERS: dict[str, tuple[Callable[[str], Any], Callable[[str], Reply]]] = {
    "anthropic": (anthropic_provider, lambda text: a_reply(a_start(), a_text(0, text), a_end())),
    "openai": (openai_provider, o_reply),
}


async def _bodies(kind: str, turns: int, reuse: bool, options: StreamOptions | None = None) -> list[Any]:
    """The bodies sent for a conversation of ``turns`` prompts, by one provider or a new one each turn."""
    make, reply = PROVIDERS[kind]
    async with MockServer([reply(f"answer {n} ünïcode") for n in range(turns)]) as server:
        provider = make(server.url)
        context = Context(system_prompt="You are terse.", messages=[], tools=[READ_TOOL])
        for n in range(turns):
            context.messages.append(user_message(f"question {n}"))
            if not reuse:
                provider = make(server.url)
            context.messages.append(await final(provider.stream(provider.models[0], context, options)))
        return [request.json() for request in server.requests]


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_a_provider_that_sent_the_conversation_before_sends_what_a_new_one_sends(kind: str) -> None:
    kept = await _bodies(kind, 4, reuse=True)
    fresh = await _bodies(kind, 4, reuse=False)
    assert kept == fresh
    assert len(kept[-1]["messages"]) >= 7
    assert [m["role"] for m in kept[-1]["messages"]][-2:] == ["assistant", "user"]


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_what_a_payload_hook_changes_in_place_is_sent(kind: str) -> None:
    calls = 0

    def on_payload(body: dict[str, Any], model: Any) -> None:
        nonlocal calls
        calls += 1
        body["messages"][0]["mark"] = calls  # in place: the message every request sends first

    bodies = await _bodies(kind, 3, reuse=True, options=StreamOptions(on_payload=on_payload))
    assert [body["messages"][0]["mark"] for body in bodies] == [1, 2, 3]


def test_a_body_that_holds_the_slot_text_itself_is_encoded_whole() -> None:
    encoder = BodyEncoder()
    message = {"role": "user", "content": "hi"}
    for system in ("plain", "\x00agentls: the messages go here\x00"):
        body = {"model": "m", "system": system, "messages": [message], "tools": [{"name": system}]}
        assert json.loads(encoder.encode(body)) == body


def test_kept_messages_and_new_ones_and_a_lone_surrogate_all_come_out_as_json() -> None:
    encoder = BodyEncoder()
    kept = {"role": "user", "content": "ünï"}
    bodies = [
        {"model": "m", "messages": [kept]},
        {"model": "m", "messages": [kept, {"role": "assistant", "content": "bad \ud800 text"}]},
        {"model": "m", "messages": [kept, {"role": "assistant", "content": "ok"}], "stream": True},
        {"model": "m", "messages": []},
    ]
    for body in bodies:
        assert json.loads(encoder.encode(body)) == body
