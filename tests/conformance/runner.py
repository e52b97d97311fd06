"""Conformance runner: plays a scenario of ``shared/conformance`` against agentls's kernel.

    .venv/bin/python tests/conformance/runner.py SCENARIO.json > raw-trace.jsonl

It is the Python twin of ``shared/conformance/reference/run.mjs``: it translates
the declarative scenario into tools, hooks and actions for :class:`agentls.agent.Agent`,
the low-level :func:`agent_loop` / :func:`agent_loop_continue` and the faux
provider, and prints each record as it is emitted (serialised at once, so later
mutation of partial messages cannot leak into earlier records). The scenario
format and the trace records are described in ``shared/conformance/README.md``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.agent import (
    AfterToolCallResult,
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentState,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    TurnUpdate,
    agent_loop,
    agent_loop_continue,
    default_convert_to_llm,
)
from agentls.ai import (
    AbortController,
    AgentMessage,
    Context,
    EventStream,
    Model,
    StreamOptions,
    TextContent,
    UserMessage,
    dumps_compact,
    parse_message,
    sleep_or_abort,
    to_wire,
)
from agentls.ai.providers.faux import FauxProvider, FauxScript

GLOBAL_TIMEOUT_S = 20.0
SYNC_ACTIONS = {"steer", "followUp", "abort", "snapshot"}


# --- helpers -------------------------------------------------------------------------------


def text_blocks(value: Any) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [TextContent(text=value)]
    return copy.deepcopy(value)


def render_template(template: str, args: Any) -> str:
    """``{{args}}``: compact JSON of all arguments; ``{{name}}``: one argument."""

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "args":
            return dumps_compact(args)
        if not isinstance(args, dict) or key not in args:
            return "undefined"
        value = args[key]
        return value if isinstance(value, str) else dumps_compact(value)

    return re.sub(r"\{\{([^{}]+)\}\}", replace, template)


def complete_message(spec: dict[str, Any]) -> AgentMessage:
    """Fill in what a scenario message may omit, then build the message."""
    data = copy.deepcopy(spec)
    data.setdefault("timestamp", 0)
    if data.get("role") == "assistant":
        data.setdefault("api", "faux")
        data.setdefault("provider", "faux")
        data.setdefault("model", "faux-1")
        data.setdefault("stopReason", "stop")
    if data.get("role") == "toolResult":
        data.setdefault("isError", False)
    return parse_message(data)


def message_from_spec(spec: dict[str, Any]) -> AgentMessage:
    if spec.get("message"):
        return complete_message(spec["message"])
    return UserMessage(content=[TextContent(text=spec["text"])])


def given(spec: dict[str, Any], key: str, default: Any) -> Any:
    """JavaScript's ``spec[key] ?? default``."""
    value = spec.get(key)
    return default if value is None else value


def js_slice_from(items: list[Any], start: int) -> list[Any]:
    """JavaScript's ``items.slice(start)``; note ``slice(-0)`` keeps everything."""
    if start < 0:
        start = max(len(items) + start, 0)
    return items[start:]


def js_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def match_fields(match: dict[str, Any] | None, fields: dict[str, Any]) -> bool:
    if not match:
        return True
    return all(key in fields and js_equal(fields[key], value) for key, value in match.items())


def record_fields(rec: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {"type": rec.get("type")}
    message = rec.get("message")
    if isinstance(message, dict):
        for key, name in (("role", "role"), ("stopReason", "stopReason")):
            if key in message:
                fields[name] = message[key]
    event = rec.get("assistantMessageEvent")
    if isinstance(event, dict):
        fields["updateType"] = event.get("type")
        if "contentIndex" in event:
            fields["contentIndex"] = event["contentIndex"]
    for key in ("toolCallId", "toolName", "isError", "hook", "call", "action", "label"):
        if key in rec:
            fields[key] = rec[key]
    return fields


# --- the runner ----------------------------------------------------------------------------


@dataclass
class Trigger:
    on: dict[str, Any]
    nth: int
    actions: list[dict[str, Any]]
    seen: int = 0
    fired: bool = False


@dataclass
class LowLevel:
    controller: AbortController | None = None
    steering: list[AgentMessage] = field(default_factory=list)
    follow_ups: list[AgentMessage] = field(default_factory=list)


class Runner:
    def __init__(self, scenario: dict[str, Any]) -> None:
        self.scenario = scenario
        self.lines: list[str] = []
        self.agent_spec: dict[str, Any] = scenario.get("agent") or {}
        self.hooks: dict[str, Any] = self.agent_spec.get("hooks") or {}
        self.triggers = [
            Trigger(t.get("on") or {}, t.get("nth", 1), t.get("actions") or [])
            for t in scenario.get("triggers") or []
        ]
        self.hook_counts: dict[str, int] = {}
        self.background: set[asyncio.Future[Any]] = set()
        self.low_level = LowLevel()
        self.model_calls = 0

        model_id = self.agent_spec.get("model", "faux-1")
        model_ids = list(self.agent_spec.get("models") or [model_id])
        if model_id not in model_ids:
            model_ids.insert(0, model_id)
        self.faux = FauxProvider.from_script(
            FauxScript.from_json(scenario.get("model") or {}), models=model_ids
        )
        self.tools = [self.make_tool(spec) for spec in self.agent_spec.get("tools") or []]
        self.convert_mode = self.hooks.get("convertToLlm", "default")
        if self.convert_mode not in ("default", "customRoles"):
            raise ValueError(f"scenario error: convertToLlm {self.convert_mode}")
        self.agent = self.make_agent()

    # --- recording ---------------------------------------------------------------------

    def write(self, rec: Any) -> list[dict[str, Any]]:
        """Serialise ``rec`` now and return the actions of the triggers it fires."""
        data = to_wire(rec)
        self.lines.append(json.dumps(data, ensure_ascii=False))
        if not self.triggers:
            return []
        fields = record_fields(data)
        actions: list[dict[str, Any]] = []
        for trigger in self.triggers:
            if trigger.fired or not match_fields(trigger.on, fields):
                continue
            trigger.seen += 1
            if trigger.seen == trigger.nth:
                trigger.fired = True
                actions.extend(trigger.actions)
        return actions

    async def record(self, rec: Any) -> None:
        """Record, then run the fired trigger actions before returning (awaited like a pi listener)."""
        for action in self.write(rec):
            await self.run_action(action)

    def record_now(self, rec: Any) -> None:
        """Record from synchronous code: synchronous actions run at once, others in the background."""
        for action in self.write(rec):
            if action.get("do") in SYNC_ACTIONS:
                self.run_sync_action(action)
            else:
                self.track(asyncio.ensure_future(self.run_action(action)))

    def track(self, future: asyncio.Future[Any]) -> None:
        self.background.add(future)
        future.add_done_callback(self.background.discard)

    async def action_error(self, action: str, error: BaseException) -> None:
        await self.record({"type": "action_error", "action": action, "message": str(error)})

    # --- model, tools, hooks -----------------------------------------------------------

    def get_model(self, model_id: str) -> Model:
        model = self.faux.get_model(model_id)
        if model is None:
            raise ValueError(f"scenario error: unknown model id {model_id}")
        return model

    def stream_fn(self, model: Model, context: Context, options: StreamOptions | None) -> Any:
        self.model_calls += 1
        self.record_now(
            {
                "type": "model_call",
                "call": self.model_calls,
                "model": model.id,
                "reasoning": options.reasoning if options else None,
                "systemPrompt": context.system_prompt or "",
                "messages": context.messages,
                "tools": [tool.name for tool in context.tools or []],
            }
        )
        return self.faux.stream(model, context, options)

    def make_tool(self, spec: dict[str, Any]) -> AgentTool:
        behaviour: dict[str, Any] = spec.get("behaviour") or {}

        async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
            loop = asyncio.get_running_loop()
            for update in behaviour.get("updates") or []:

                def fire(update: dict[str, Any] = update) -> None:
                    if on_update is not None:
                        on_update(
                            AgentToolResult(
                                content=text_blocks(render_template(update["text"], params)),
                                details=given(update, "details", {}),
                            )
                        )

                loop.call_later((update.get("atMs") or 0) / 1000, fire)
            delay = given(behaviour.get("delayMsByCallId") or {}, tool_call_id, behaviour.get("delayMs"))
            if delay is None and "delayMs" in behaviour:
                delay = 0  # a null delay is still a setTimeout: it waits for the next timer turn
            abort_message = given(behaviour, "abortMessage", "Tool aborted")
            honor_abort = bool(behaviour.get("honorAbort"))
            if delay is not None:
                if not await sleep_or_abort(delay / 1000, signal if honor_abort else None):
                    raise RuntimeError(abort_message)
            elif honor_abort and signal is not None and signal.aborted:
                raise RuntimeError(abort_message)
            if "throw" in behaviour:
                raise RuntimeError(render_template(behaviour["throw"], params))
            if "content" in behaviour:
                content = text_blocks(behaviour["content"])
            else:
                content = text_blocks(render_template(given(behaviour, "text", "ok"), params))
            result = AgentToolResult(
                content=content,
                details=copy.deepcopy(behaviour["details"]) if "details" in behaviour else {},
            )
            if "terminate" in behaviour:
                result.terminate = behaviour["terminate"]
            return result

        return AgentTool(
            name=spec["name"],
            label=given(spec, "label", spec["name"]),
            description=given(spec, "description", ""),
            parameters=given(spec, "parameters", {"type": "object", "properties": {}}),
            execute=execute,
            execution_mode=spec.get("executionMode"),
        )

    def next_call(self, hook: str) -> int:
        self.hook_counts[hook] = self.hook_counts.get(hook, 0) + 1
        return self.hook_counts[hook]

    def find_rule(self, rules: list[dict[str, Any]], tool_call: Any) -> dict[str, Any] | None:
        fields = {"toolName": tool_call.name, "toolCallId": tool_call.id}
        return next((r for r in rules if match_fields(r.get("match"), fields)), None)

    async def before_tool_call(self, ctx: Any, signal: Any = None) -> BeforeToolCallResult | None:
        call = self.next_call("beforeToolCall")
        await self.record(
            {
                "type": "hook",
                "hook": "beforeToolCall",
                "call": call,
                "toolCallId": ctx.tool_call.id,
                "toolName": ctx.tool_call.name,
                "args": ctx.args,
            }
        )
        rule = self.find_rule(self.hooks["beforeToolCall"], ctx.tool_call)
        if rule is None:
            return None
        if rule.get("delayMs") is not None:
            await asyncio.sleep(rule["delayMs"] / 1000)
        if not rule.get("block"):
            return None
        return BeforeToolCallResult(block=True, reason=rule.get("reason"), terminate=rule.get("terminate"))

    async def after_tool_call(self, ctx: Any, signal: Any = None) -> AfterToolCallResult | None:
        call = self.next_call("afterToolCall")
        await self.record(
            {
                "type": "hook",
                "hook": "afterToolCall",
                "call": call,
                "toolCallId": ctx.tool_call.id,
                "toolName": ctx.tool_call.name,
                "args": ctx.args,
                "isError": ctx.is_error,
                "content": ctx.result.content,
            }
        )
        rule = self.find_rule(self.hooks["afterToolCall"], ctx.tool_call)
        if rule is None:
            return None
        if rule.get("delayMs") is not None:
            await asyncio.sleep(rule["delayMs"] / 1000)
        if "throw" in rule:
            raise RuntimeError(rule["throw"])
        return AfterToolCallResult(
            content=text_blocks(rule.get("content")),
            is_error=rule.get("isError"),
            terminate=rule.get("terminate"),
            details=copy.deepcopy(rule.get("details")),
        )

    async def should_stop_after_turn(self, ctx: Any, signal: Any = None) -> bool:
        call = self.next_call("shouldStopAfterTurn")
        stop = call in (self.hooks["shouldStopAfterTurn"].get("stopOnCalls") or [])
        await self.record(
            {
                "type": "hook",
                "hook": "shouldStopAfterTurn",
                "call": call,
                "stopReason": getattr(ctx.message, "stop_reason", None),
                "toolResults": len(ctx.tool_results),
                "newMessages": len(ctx.new_messages),
                "stop": stop,
            }
        )
        return stop

    async def prepare_next_turn(self, *_args: Any) -> TurnUpdate | None:
        call = self.next_call("prepareNextTurn")
        rule = next(
            (r for r in self.hooks["prepareNextTurn"].get("rules") or [] if r.get("call") == call), None
        )
        await self.record({"type": "hook", "hook": "prepareNextTurn", "call": call})
        if rule is None:
            return None
        if rule.get("delayMs") is not None:
            await asyncio.sleep(rule["delayMs"] / 1000)
        return TurnUpdate(
            model=self.get_model(rule["model"]) if "model" in rule else None,
            thinking_level=rule.get("thinkingLevel"),
        )

    async def transform_context(self, messages: list[AgentMessage], signal: Any = None) -> list[AgentMessage]:
        call = self.next_call("transformContext")
        spec = self.hooks["transformContext"]
        out = js_slice_from(messages, -(spec["keepLast"] or 0)) if "keepLast" in spec else messages
        await self.record(
            {"type": "hook", "hook": "transformContext", "call": call, "in": len(messages), "out": len(out)}
        )
        return out

    @staticmethod
    def custom_roles_convert(messages: list[AgentMessage]) -> list[Any]:
        out: list[Any] = []
        for message in messages:
            if message.role == "custom":
                content = message.content  # type: ignore[union-attr]
                blocks = [{"type": "text", "text": content}] if isinstance(content, str) else to_wire(content)
                out.append(
                    UserMessage.model_validate({"content": blocks, "timestamp": message.timestamp or 0})
                )
            elif message.role in ("user", "assistant", "toolResult"):
                out.append(message)
        return out

    def hook(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any] | None:
        return fn if name in self.hooks else None

    def convert_to_llm(self) -> Callable[[list[AgentMessage]], list[Any]]:
        return self.custom_roles_convert if self.convert_mode == "customRoles" else default_convert_to_llm

    def make_agent(self) -> Agent:
        spec = self.agent_spec
        agent = Agent(
            initial_state=AgentState(
                system_prompt=spec.get("systemPrompt", ""),
                model=self.get_model(spec.get("model", "faux-1")),
                thinking_level=spec.get("thinkingLevel", "off"),
                tools=self.tools,
                messages=[complete_message(m) for m in spec.get("messages") or []],
            ),
            stream_fn=self.stream_fn,
            convert_to_llm=self.convert_to_llm(),
            transform_context=self.hook("transformContext", self.transform_context),
            before_tool_call=self.hook("beforeToolCall", self.before_tool_call),
            after_tool_call=self.hook("afterToolCall", self.after_tool_call),
            should_stop_after_turn=self.hook("shouldStopAfterTurn", self.should_stop_after_turn),
            prepare_next_turn=self.hook("prepareNextTurn", self.prepare_next_turn),
            tool_execution=spec.get("toolExecution", "parallel"),
            steering_mode=spec.get("steeringMode", "one-at-a-time"),
            follow_up_mode=spec.get("followUpMode", "one-at-a-time"),
        )

        async def listener(event: Any, signal: Any) -> None:
            await self.record(event)

        agent.subscribe(listener)
        return agent

    def snapshot(self, label: str | None) -> dict[str, Any]:
        state = self.agent.state
        return {
            "type": "snapshot",
            "label": label,
            "isStreaming": state.is_streaming,
            "streamingMessageRole": state.streaming_message.role if state.streaming_message else None,
            "pendingToolCalls": len(state.pending_tool_calls),
            "errorMessage": state.error_message,
            "model": state.model.id,
            "thinkingLevel": state.thinking_level,
            "hasQueuedMessages": self.agent.has_queued_messages(),
            "steeringQueue": len(self.agent.queued_steering),
            "followUpQueue": len(self.agent.queued_follow_ups),
            "messages": state.messages,
        }

    # --- low-level entry points ----------------------------------------------------------

    def loop_config(self) -> AgentLoopConfig:
        spec = self.agent_spec
        level = spec.get("thinkingLevel", "off")

        def drain(queue: list[AgentMessage], mode: str | None) -> list[AgentMessage]:
            if (mode or "one-at-a-time") == "all":
                drained = list(queue)
                queue.clear()
                return drained
            return [queue.pop(0)] if queue else []

        async def steering() -> list[AgentMessage]:
            return drain(self.low_level.steering, spec.get("steeringMode"))

        async def follow_ups() -> list[AgentMessage]:
            return drain(self.low_level.follow_ups, spec.get("followUpMode"))

        return AgentLoopConfig(
            model=self.get_model(spec.get("model", "faux-1")),
            reasoning=None if level == "off" else level,
            convert_to_llm=self.convert_to_llm(),
            tool_execution=spec.get("toolExecution", "parallel"),
            get_steering_messages=steering,
            get_follow_up_messages=follow_ups,
            transform_context=self.hook("transformContext", self.transform_context),
            before_tool_call=self.hook("beforeToolCall", self.before_tool_call),
            after_tool_call=self.hook("afterToolCall", self.after_tool_call),
            should_stop_after_turn=self.hook("shouldStopAfterTurn", self.should_stop_after_turn),
            prepare_next_turn=self.hook("prepareNextTurn", self.prepare_next_turn),
        )

    def low_level_context(self, spec: dict[str, Any] | None) -> AgentContext:
        spec = spec or {}
        names = spec.get("tools")
        by_name = {tool.name: tool for tool in self.tools}
        return AgentContext(
            system_prompt=spec.get("systemPrompt", self.agent_spec.get("systemPrompt", "")),
            messages=[complete_message(m) for m in spec.get("messages") or []],
            tools=self.tools if names is None else [by_name[n] for n in names],
        )

    def start_low_level(self, action: dict[str, Any]) -> Awaitable[None]:
        """Start a low-level loop now (raising as pi's entry points do); the result is recorded later."""
        name = action["do"]
        context = self.low_level_context(action.get("context"))
        controller = AbortController()
        self.low_level.controller = controller
        if name == "agentLoop":
            prompts = [
                message_from_spec({"text": p}) if isinstance(p, str) else complete_message(p)
                for p in action.get("prompts") or []
            ]
            stream = agent_loop(prompts, context, self.loop_config(), controller.signal, self.stream_fn)
        else:
            stream = agent_loop_continue(context, self.loop_config(), controller.signal, self.stream_fn)

        async def finish() -> None:
            messages = await stream.result()
            await self.record(
                {
                    "type": "loop_result",
                    "entry": name,
                    "messages": messages,
                    "contextMessages": context.messages,
                }
            )

        return finish()

    # --- actions -------------------------------------------------------------------------

    async def settle(self, name: str, run: Awaitable[Any]) -> None:
        try:
            await run
        except Exception as error:
            await self.action_error(name, error)

    async def start_run(
        self, action: dict[str, Any], start: Callable[[], Awaitable[Any]], events_before_next: int
    ) -> None:
        """Start a run synchronously (as JavaScript does), then await it or leave it in the background.

        A JavaScript caller that does not await gets control back after a fixed number of
        microtask ticks, by which time the run has emitted ``events_before_next`` events:
        one for an Agent run (``agent_start``; its listener chain takes several ticks per
        event), two for a low-level loop (``agent_start`` and ``turn_start``). The kernel
        yields once after every event, so yielding that many times gives the same order.
        """
        name = action["do"]
        try:
            run = start()
        except Exception as error:
            await self.action_error(name, error)
            return
        if action.get("await") is False:
            self.track(asyncio.ensure_future(self.settle(name, run)))
            for _ in range(events_before_next):
                await asyncio.sleep(0)
        else:
            await self.settle(name, run)

    def run_sync_action(self, action: dict[str, Any]) -> None:
        name = action["do"]
        if name == "steer":
            message = message_from_spec(action)
            (self.low_level.steering.append if action.get("lowLevel") else self.agent.steer)(message)
        elif name == "followUp":
            message = message_from_spec(action)
            (self.low_level.follow_ups.append if action.get("lowLevel") else self.agent.follow_up)(message)
        elif name == "abort":
            if action.get("lowLevel"):
                if self.low_level.controller is not None:
                    self.low_level.controller.abort()
            else:
                self.agent.abort()
        elif name == "snapshot":
            self.record_now(self.snapshot(action.get("label")))
        else:
            raise ValueError(f"scenario error: {name} is not a synchronous action")

    async def run_action(self, action: dict[str, Any]) -> None:
        name = action.get("do")
        if name in SYNC_ACTIONS - {"snapshot"}:
            self.run_sync_action(action)
        elif name == "snapshot":
            await self.record(self.snapshot(action.get("label")))
        elif name == "prompt":
            if "messages" in action:
                prompt_input: Any = [complete_message(m) for m in action["messages"]]
            elif "message" in action:
                prompt_input = complete_message(action["message"])
            else:
                prompt_input = action["text"]
            await self.start_run(action, lambda: self.agent.prompt(prompt_input), events_before_next=1)
        elif name == "continue":
            await self.start_run(action, self.agent.continue_, events_before_next=1)
        elif name in ("agentLoop", "agentLoopContinue"):
            await self.start_run(action, lambda: self.start_low_level(action), events_before_next=2)
        elif name == "reset":
            try:
                self.agent.reset()
            except Exception as error:
                await self.action_error(name, error)
        elif name == "waitForIdle":
            await self.agent.wait_for_idle()
            while self.background:
                await asyncio.gather(*list(self.background), return_exceptions=True)
        elif name == "sleep":
            await asyncio.sleep((action.get("ms") or 0) / 1000)
        elif name == "setSteeringMode":
            self.agent.steering_mode = action["mode"]
        elif name == "setFollowUpMode":
            self.agent.follow_up_mode = action["mode"]
        elif name == "clearQueues":
            self.agent.clear_all_queues()
        else:
            raise ValueError(f"scenario error: unknown action {name}")

    async def run(self) -> None:
        for action in self.scenario.get("actions") or []:
            await self.run_action(action)
        await self.agent.wait_for_idle()
        while self.background:
            await asyncio.gather(*list(self.background), return_exceptions=True)


def _record_low_level_pushes(runner: Runner) -> None:
    """Record low-level loop events when the loop pushes them into its (plain) event stream."""
    original_push = EventStream.push

    def push(self: EventStream[Any, Any], event: Any) -> None:
        if type(self) is EventStream and not self.done:
            runner.record_now(event)
        original_push(self, event)

    EventStream.push = push  # type: ignore[method-assign]


async def main(scenario: dict[str, Any]) -> int:
    runner = Runner(scenario)
    _record_low_level_pushes(runner)
    code = 0
    try:
        await asyncio.wait_for(runner.run(), GLOBAL_TIMEOUT_S)
    except TimeoutError:
        runner.lines.append(json.dumps({"type": "runner_timeout"}))
        code = 3
    except Exception as error:
        import traceback

        runner.lines.append(
            json.dumps({"type": "runner_error", "message": f"{error}\n{traceback.format_exc()}"})
        )
        code = 1
    sys.stdout.write("".join(f"{line}\n" for line in runner.lines))
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: runner.py SCENARIO.json\n")
        sys.exit(2)
    sys.exit(asyncio.run(main(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")))))
