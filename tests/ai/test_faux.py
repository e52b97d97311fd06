"""The faux provider streams scripted responses the way pi-ai's does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agentls.ai import (
    AbortController,
    AssistantMessage,
    Context,
    StreamOptions,
    TextContent,
    ToolCall,
    user_message,
)
from agentls.ai.providers.faux import FauxProvider, FauxScript, FauxScriptError, ThrowMarker, TokenSize


def context() -> Context:
    return Context(system_prompt="sys", messages=[user_message("hello")])


async def collect(
    provider: FauxProvider, options: StreamOptions | None = None
) -> tuple[list, AssistantMessage]:
    model = provider.get_model()
    assert model is not None
    stream = provider.stream(model, context(), options)
    events = [event async for event in stream]
    return events, await stream.result()


async def test_text_streams_in_chunks_of_the_token_size() -> None:
    faux = FauxProvider(
        [AssistantMessage(content=[TextContent(text="abcdefghij")])], token_size=TokenSize(1, 1)
    )
    events, final = await collect(faux)
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [e.delta for e in events if e.type == "text_delta"] == ["abcd", "efgh", "ij"]
    assert events[0].partial.content == [] and events[0].partial.stop_reason == "pending"
    assert final.model == "faux-1" and final.stop_reason == "stop"
    assert final.usage.output == 3


async def test_tool_call_arguments_stream_as_compact_json() -> None:
    call = ToolCall(id="c1", name="read", arguments={"path": "a.txt", "n": 2})
    faux = FauxProvider([AssistantMessage(content=[call], stop_reason="toolUse")], token_size=TokenSize(1, 1))
    stream = faux.stream(faux.models[0], context(), None)
    events, arguments_while_streaming = [], []
    async for event in stream:
        events.append(event)
        if event.type == "toolcall_start":
            # Blocks are shared by the partials (as in pi), so look at them as they arrive.
            arguments_while_streaming.append(dict(event.partial.content[0].arguments))
    final = await stream.result()
    deltas = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert deltas == '{"path":"a.txt","n":2}'
    assert arguments_while_streaming[0] == {}
    assert events[-1].type == "done" and events[-1].reason == "toolUse"
    assert final.content[0].arguments == {"path": "a.txt", "n": 2}


async def test_out_of_responses_is_an_error_without_start() -> None:
    events, final = await collect(FauxProvider([]))
    assert [e.type for e in events] == ["error"]
    assert final.stop_reason == "error" and final.error_message == "No more faux responses queued"


async def test_throw_marker_makes_the_stream_function_raise() -> None:
    faux = FauxProvider([ThrowMarker("boom")])
    with pytest.raises(RuntimeError, match="boom"):
        faux.stream(faux.models[0], context(), None)


async def test_abort_mid_stream_keeps_the_partial_text() -> None:
    controller = AbortController()
    faux = FauxProvider(
        [AssistantMessage(content=[TextContent(text="x" * 40)])],
        token_size=TokenSize(1, 1),
        tokens_per_second=200,
    )
    stream = faux.stream(faux.models[0], context(), StreamOptions(signal=controller.signal))
    events = []
    async for event in stream:
        events.append(event)
        if event.type == "text_delta":
            controller.abort()
    final = await stream.result()
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert final.stop_reason == "aborted" and final.error_message == "Request was aborted"
    assert final.content[0].text == "xxxx"


async def test_already_aborted_signal_gives_an_aborted_message_at_once() -> None:
    controller = AbortController()
    controller.abort()
    events, final = await collect(
        FauxProvider([AssistantMessage(content=[TextContent(text="hi")])]),
        StreamOptions(signal=controller.signal),
    )
    assert [e.type for e in events] == ["error"]
    assert final.stop_reason == "aborted" and final.content == []


async def test_tokens_per_second_paces_the_stream() -> None:
    faux = FauxProvider(
        [AssistantMessage(content=[TextContent(text="y" * 40)])],
        token_size=TokenSize(1, 1),
        tokens_per_second=100,
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    await collect(faux)
    # Ten one-token chunks at 100 tokens/s: at least 0.1 s of simulated streaming.
    assert loop.time() - started >= 0.09


async def test_callable_steps_see_the_request() -> None:
    seen: list[str] = []

    def answer(ctx: Context, options: StreamOptions | None, state: object, model: object) -> AssistantMessage:
        seen.append(ctx.system_prompt or "")
        return AssistantMessage(content=[TextContent(text="ok")])

    _, final = await collect(FauxProvider([answer]))
    assert seen == ["sys"] and final.content[0].text == "ok"


def test_script_file_in_the_scenario_format(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps(
            {
                "responses": [
                    {"content": "hi"},
                    {
                        "content": [{"type": "toolCall", "id": "c", "name": "x", "arguments": {}}],
                        "stopReason": "toolUse",
                    },
                    {"throw": "bad"},
                ],
                "tokenSize": {"min": 2, "max": 2},
                "tokensPerSecond": 50,
            }
        )
    )
    script = FauxScript.from_file(path)
    assert (
        len(script.responses) == 3 and script.token_size == TokenSize(2, 2) and script.tokens_per_second == 50
    )
    assert isinstance(script.responses[2], ThrowMarker)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ('{"responses": 3}', "'responses' must be a list"),
        ('[{"content": 5}]', "'content'"),
    ],
)
def test_bad_script_files_fail_with_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(FauxScriptError, match=message):
        FauxScript.from_file(path)


def test_missing_script_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(FauxScriptError, match="cannot read faux script"):
        FauxScript.from_file(tmp_path / "missing.json")
