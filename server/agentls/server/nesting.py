"""A message body's JSON, nested at most :data:`MAX_DEPTH` levels, and what a deeper one says at its top.

Python's JSON parser recurses once per level and gives up near 1000 levels, wherever
its stack happens to start, with nothing but an error: a request whose params nested
10,000 deep lost its id, and its client waited for an answer forever. Here a body may
nest exactly :data:`MAX_DEPTH` levels (the message object itself is the first). A deeper
one raises :class:`TooDeep`, which carries the top-level members a scan read without
recursion (a count, not a stack): ``jsonrpc``, ``id`` and ``method`` are at the top, so
the request can still be answered with its id.

Used by the early loader (:mod:`agentls.server.boot`, which must not import
:mod:`agentls.ai`: hence its own strict parse rather than ``parse_strict_json``), the
LSP reading layer and the ACP line filter.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 512
"""How deep the objects and arrays of a message may nest, the message object counting as 1."""

_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class TooDeep(ValueError):
    """A body nesting deeper than :data:`MAX_DEPTH`; what its top level holds, as far as it could be read."""

    def __init__(self, text: str) -> None:
        super().__init__(f"the message nests deeper than {MAX_DEPTH} levels")
        self.fields: dict[str, Any] = {}
        """The top-level members whose values are not objects or arrays (``id``, ``method``, ...)."""
        self.nested: dict[str, int] = {}
        """The other top-level members and how deep each nests (its own object or array is 1)."""
        _read_top_level(text, self.fields, self.nested)

    @property
    def kind(self) -> str:
        """What its top level makes it: ``"notification"``, ``"response"``, else ``"request"``."""
        members = self.fields.keys() | self.nested.keys()
        if isinstance(self.fields.get("method"), str) and "id" not in members:
            return "notification"
        if "method" not in members and ("result" in members or "error" in members):
            return "response"
        return "request"

    @property
    def params_only(self) -> bool:
        """Only ``params`` nests too deep, and ``method`` is a string: the request's params are invalid."""
        too_deep = {name for name, depth in self.nested.items() if depth >= MAX_DEPTH}
        return too_deep == {"params"} and isinstance(self.fields.get("method"), str)


def parse_body(body: bytes) -> Any:
    """The JSON of a message body, strictly (no ``NaN``); :class:`ValueError`, :class:`TooDeep` if too deep.

    Counting brackets is cheap, so only a body with more than :data:`MAX_DEPTH` of them
    (counting those inside strings) is scanned for its depth.
    """
    try:
        message = json.loads(body, parse_constant=_not_a_value)
    except RecursionError:
        raise TooDeep(body.decode("utf-8", "replace")) from None
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH:
        text = body.decode("utf-8", "replace")
        if _extent(text, _after_space(text, 0))[0] > MAX_DEPTH:
            raise TooDeep(text)
    return message


def _after_space(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # it matches the empty string too


def _not_a_value(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _extent(text: str, start: int) -> tuple[int, int]:
    """How deep the object or array at ``start`` nests, and where it ends (or the end of the text)."""
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text, start):
        char = text[match.start()]
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return deepest, match.end()
    return deepest, len(text)


def _read_top_level(text: str, fields: dict[str, Any], nested: dict[str, int]) -> None:
    """Fill ``fields`` and ``nested`` from the top-level object of ``text`` (if it is an object).

    Reading stops at the first thing that is not JSON, keeping what came before.
    """
    at = _after_space(text, 0)
    if not text.startswith("{", at):
        return
    at += 1
    try:
        while True:
            at = _after_space(text, at)
            if not text.startswith('"', at):
                break
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _after_space(text, at)
            if not text.startswith(":", at):
                break
            at = _after_space(text, at + 1)
            fields.pop(key, None)
            nested.pop(key, None)
            if text.startswith(("{", "["), at):
                nested[key], at = _extent(text, at)
            else:
                fields[key], at = _DECODER.raw_decode(text, at)
            at = _after_space(text, at)
            if not text.startswith(",", at):
                break
            at += 1
    except ValueError:  # the rest is not JSON: what was read is what is known
        pass
