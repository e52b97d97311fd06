"""What every provider does to a conversation before converting it (pi-ai's ``transform-messages.js``).

- Images go to models that take them; for the others each run of images becomes one
  placeholder text.
- Assistant messages of another model lose what only that model understands: thinking
  becomes plain text (redacted thinking is dropped), signatures are dropped, tool call
  ids are normalised for the target API and their results follow the new ids.
- Assistant messages that ended in an error or an abort are not replayed.
- A tool call left without a result gets a synthetic error result, as APIs require one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agentls.ai.providers.wire_forms import WireForms, WirePrefix
from agentls.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired UTF-16 surrogates, which APIs reject as invalid JSON text.

    ASCII text (most of a coding transcript) has none: checked in C, it skips the regex,
    which was a large part of building a request over a long transcript.
    """
    return text if text.isascii() else _LONE_SURROGATE.sub("", text)


def _has_image(content: str | list[TextContent | ImageContent]) -> bool:
    return not isinstance(content, str) and any(isinstance(block, ImageContent) for block in content)


def _replace_images(
    content: list[TextContent | ImageContent], placeholder: str
) -> list[TextContent | ImageContent]:
    result: list[TextContent | ImageContent] = []
    previous_was_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_placeholder:
                result.append(TextContent(text=placeholder))
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = block.text == placeholder
    return result


def _downgrade_images(messages: list[Message], model: Model) -> list[Message]:
    if "image" in model.input:
        return messages
    result: list[Message] = []
    for message in messages:
        # A message without images stays the same object, whose wire form providers keep.
        if isinstance(message, UserMessage | ToolResultMessage) and _has_image(message.content):
            placeholder = (
                USER_IMAGE_PLACEHOLDER if isinstance(message, UserMessage) else TOOL_IMAGE_PLACEHOLDER
            )
            message = message.model_copy(update={"content": _replace_images(message.content, placeholder)})  # type: ignore[arg-type]
        result.append(message)
    return result


def _for_target(
    message: AssistantMessage, model: Model, normalize_tool_call_id: Callable[[str], str] | None
) -> tuple[AssistantMessage, dict[str, str]]:
    """The message as ``model`` reads it, and the tool call ids it renamed (old -> new)."""
    renamed: dict[str, str] = {}
    same_model = message.model == model.id and message.provider == model.provider and message.api == model.api
    if same_model and not any(isinstance(block, ThinkingContent) for block in message.content):
        return message, renamed  # the model's own text and tool calls: nothing to change
    content: list[TextContent | ThinkingContent | ToolCall] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted:
                if same_model:  # opaque: only the model that wrote it can read it
                    content.append(block)
            elif same_model and block.thinking_signature:
                content.append(block)
            elif block.thinking.strip():
                content.append(block if same_model else TextContent(text=block.thinking))
        elif isinstance(block, TextContent):
            content.append(block if same_model else TextContent(text=block.text))
        else:
            call = block
            if not same_model and call.thought_signature:
                call = call.model_copy(update={"thought_signature": None})
            if not same_model and normalize_tool_call_id is not None:
                new_id = normalize_tool_call_id(call.id)
                if new_id != call.id:
                    renamed[call.id] = new_id
                    call = call.model_copy(update={"id": new_id})
            content.append(call)
    if len(content) == len(message.content) and all(
        a is b for a, b in zip(content, message.content, strict=True)
    ):
        return message, renamed  # unchanged: the same object, whose wire form providers keep
    return message.model_copy(update={"content": content}), renamed


def transform_messages(
    messages: list[Message],
    model: Model,
    normalize_tool_call_id: Callable[[str], str] | None = None,
    forms: WireForms | None = None,
) -> list[Message]:
    """The conversation as ``model`` should see it (see the module docstring).

    ``forms`` keeps what each message became between requests (a provider's
    :attr:`~agentls.ai.providers.wire_forms.MessageForms.target`), and where the last
    request ended: a request whose messages begin with the last one's (the next turn)
    converts only the messages after them, going on from the state it ended in.
    """
    forms = forms or WireForms()
    settings = (model.provider, model.api, model.id, normalize_tool_call_id)
    forms.start(settings[:3])
    ids = list(map(id, messages))
    last = forms.resume
    if isinstance(last, WirePrefix) and last.matches(settings, ids):
        last_renamed, last_pending, last_answered = last.state
        begin, renamed, result = len(last.ids), dict(last_renamed), list(last.forms)
        pending, answered = list(last_pending), set(last_answered)
    else:
        begin, renamed, result, pending, answered = 0, {}, [], [], set()
    transformed: list[Message] = []

    def for_target(message: Message) -> tuple[AssistantMessage, dict[str, str]]:
        return _for_target(message, model, normalize_tool_call_id)  # type: ignore[arg-type]

    def renamed_result(message: Message) -> Message:
        return message.model_copy(update={"tool_call_id": renamed[message.tool_call_id]})  # type: ignore[union-attr]

    for message in _downgrade_images(messages[begin:], model):
        if isinstance(message, AssistantMessage):
            message, renames = forms.get(message, for_target)
            if renames:
                renamed.update(renames)
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in renamed:
            message = forms.get(message, renamed_result)
        transformed.append(message)
    forms.done()

    def answer_pending(into: list[Message]) -> None:
        for call in pending:
            if call.id not in answered:
                into.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                    )
                )
        pending.clear()
        answered.clear()

    for message in transformed:
        if isinstance(message, AssistantMessage):
            if pending:
                answer_pending(result)
            if message.stop_reason in ("error", "aborted"):
                continue
            calls = [b for b in message.content if isinstance(b, ToolCall)]
            if calls:
                pending[:] = calls
            result.append(message)
        elif isinstance(message, ToolResultMessage):
            answered.add(message.tool_call_id)
            result.append(message)
        else:
            if pending:
                answer_pending(result)
            result.append(message)
    # the output before the synthetic results of calls left unanswered at the end, and what
    # the loop knew there (renames, calls waiting for their results)
    forms.resume = WirePrefix(
        settings, list(messages), ids, list(result), (dict(renamed), list(pending), set(answered))
    )
    answer_pending(result)
    return result
