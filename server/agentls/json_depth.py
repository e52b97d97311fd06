"""JSON messages nested too deep: a bounded parse, and what a message says at its top without recursion.

Python's JSON parser recurses once per level and gives up near 1000 levels, wherever
its stack happens to start, with nothing but an error: a request whose params nested
10,000 deep lost its id, and its client waited for an answer forever. Here a body may
nest exactly :data:`MAX_DEPTH` levels (the message object itself is the first). A deeper
one raises :class:`TooDeep`, which carries the top-level members that :func:`top_level`
read without recursion (a count, not a stack): ``jsonrpc``, ``id`` and ``method`` are at
the top, so the request can still be answered with its id.

The same scan finds the id of an MCP server's answer that cannot be read (not JSON, too
long, too deep: :mod:`agentls.mcp.stdio`), so its call ends with an error at once. What
makes an id usable (:func:`valid_id`) is here too, for the same readers and the Python client.

Used by the early loader (:mod:`agentls.fronts.lsp.boot`, which must not import
:mod:`agentls.ai`: hence the standard library only, and its own strict parse rather than
``parse_strict_json``), the LSP reading layer, the ACP line filter and the MCP stdio reader.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 512
"""How deep the objects and arrays of a message may nest, the message object counting as 1."""

_STRING_OR_BRACKET = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^\s{}\[\],:"]+')
_OPENING = frozenset(b"[{")
_CLOSING = frozenset(b"]}")
_UNREADABLE = object()


def is_integer(value: Any) -> bool:
    """A JSON integer (``true`` and ``false`` are ``bool``, which Python counts as ``int``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def valid_id(value: Any) -> bool:
    """A usable JSON-RPC request id: a string or an integer."""
    return isinstance(value, str) or is_integer(value)


def depth_of(text: bytes | bytearray) -> int:
    """How deep the first object or array of the JSON ``text`` nests (0 for none): a count, not a stack."""
    return _extent(text, 0)[0]


def _extent(text: bytes | bytearray, start: int) -> tuple[int, int]:
    """How deep the object or array at ``start`` nests, and where it ends (or the end of the text)."""
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text, start):
        char = text[match.start()]
        if char in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSING:
            depth -= 1
            if depth == 0:
                return deepest, match.end()
    return deepest, len(text)


@dataclass
class TopLevel:
    """The members of a JSON object as a scan of its first level read them."""

    keys: set[str] = field(default_factory=set)
    """Every member's name."""
    fields: dict[str, Any] = field(default_factory=dict)
    """The members whose values are not objects or arrays (``id``, ``method``, ...), where readable."""
    nested: dict[str, int] = field(default_factory=dict)
    """The other members and how deep each nests (its own object or array is 1)."""

    @property
    def kind(self) -> str:
        """What its top level makes it: ``"notification"``, ``"response"``, else ``"request"``."""
        if isinstance(self.fields.get("method"), str) and "id" not in self.keys:
            return "notification"
        if "method" not in self.keys and ("result" in self.keys or "error" in self.keys):
            return "response"
        return "request"


def top_level(text: bytes | bytearray) -> TopLevel:
    """The members of the JSON object ``text`` holds (none if it holds no object), in one pass.

    A nested value is measured, not parsed, so however deep it goes the scan costs a pass
    over the text. What is not JSON is passed over: a member whose value cannot be read is
    known by its name only, and the scan goes on, so a line cut short or broken somewhere
    still tells the members around the break. A repeated name counts as its last value.
    """
    top = TopLevel()
    first = _TOKEN.search(text)
    if first is None or first.group() != b"{":
        return top
    at = first.end()
    key: str | None = None
    expecting_key = True
    while (match := _TOKEN.search(text, at)) is not None:
        token, at = match.group(), match.end()
        if token in (b"{", b"["):
            depth, at = _extent(text, match.start())
            if key is not None:
                top.nested[key] = depth
            key = None
        elif token == b"}":
            break
        elif token == b",":
            key, expecting_key = None, True
        elif token in (b":", b"]"):
            continue
        elif expecting_key:
            name = _value(token) if token.startswith(b'"') else None
            key = name if isinstance(name, str) else None
            if key is not None:
                top.keys.add(key)
                top.fields.pop(key, None)
                top.nested.pop(key, None)
            expecting_key = False
        elif key is not None:
            value = _value(token)
            if value is not _UNREADABLE:
                top.fields[key] = value
            key = None
    return top


def _value(token: bytes) -> Any:
    try:
        return json.loads(token)
    except ValueError:
        return _UNREADABLE


class TooDeep(ValueError):
    """A body nesting deeper than :data:`MAX_DEPTH`; what its top level holds, as far as it could be read."""

    def __init__(self, body: bytes | bytearray) -> None:
        super().__init__(f"the message nests deeper than {MAX_DEPTH} levels")
        self.top = top_level(body)

    @property
    def fields(self) -> dict[str, Any]:
        """The top-level members whose values are not objects or arrays (``id``, ``method``, ...)."""
        return self.top.fields

    @property
    def kind(self) -> str:
        """What its top level makes it: ``"notification"``, ``"response"``, else ``"request"``."""
        return self.top.kind

    @property
    def params_only(self) -> bool:
        """Only ``params`` nests too deep, and ``method`` is a string: the request's params are invalid."""
        too_deep = {name for name, depth in self.top.nested.items() if depth >= MAX_DEPTH}
        return too_deep == {"params"} and isinstance(self.fields.get("method"), str)


def parse_body(body: bytes) -> Any:
    """The JSON of a message body, strictly (no ``NaN``); :class:`ValueError`, :class:`TooDeep` if too deep.

    Counting brackets is cheap, so only a body with more than :data:`MAX_DEPTH` of them
    (counting those inside strings) is scanned for its depth.
    """
    try:
        message = json.loads(body, parse_constant=_not_a_value)
    except RecursionError:
        raise TooDeep(body) from None
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and depth_of(body) > MAX_DEPTH:
        raise TooDeep(body)
    return message


def _not_a_value(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
