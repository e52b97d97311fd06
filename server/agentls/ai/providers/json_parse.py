"""Tolerant JSON parsing for streamed provider data (pi-ai's ``utils/json-parse.js``).

Models stream tool-call arguments as JSON text in pieces; after each piece the
partial arguments are parsed as far as they go (:func:`parse_streaming_json`, a port
of the ``partial-json`` package pi-ai uses), and once the call is complete the whole
text is parsed. Models also write string literals with raw control characters or
invalid escapes; :func:`repair_json` fixes those before giving up.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_STRING_START = re.compile(r'"([^"\\]*+(?:\\.[^"\\]*+)*+)(\\?)("?)', re.DOTALL)
"""A string literal from its quote: the content, a lone backslash at the very end, the closing quote."""
_FINE_RUN = re.compile(r'[^\\\x00-\x1f]*+(?:\\(?:u[0-9a-fA-F]{4}|["\\/bfnrtu])[^\\\x00-\x1f]*+)*+')
"""Characters and escapes of a string literal that need no repair (possessive: it never backtracks)."""
_BLANK = " \n\r\t"


def _repair_string_content(content: str) -> str:
    parts: list[str] = []
    position = 0
    while True:
        fine = _FINE_RUN.match(content, position)
        assert fine is not None  # the pattern matches the empty string
        parts.append(content[position : fine.end()])
        position = fine.end()
        if position >= len(content):
            return "".join(parts)
        char = content[position]  # a backslash starting an invalid escape, or a control character
        parts.append("\\\\" if char == "\\" else _CONTROL_ESCAPES.get(char, f"\\u{ord(char):04x}"))
        position += 1


def repair_json(text: str) -> str:
    """Escape raw control characters inside string literals and double backslashes of invalid escapes."""
    out: list[str] = []
    position = 0
    while (quote := text.find('"', position)) != -1:
        out.append(text[position:quote])
        literal = _STRING_START.match(text, quote)
        assert literal is not None  # the pattern matches any text from a quote
        content, lone_backslash, closing = literal.groups()
        out.append('"' + _repair_string_content(content) + ("\\\\" if lone_backslash else "") + closing)
        position = literal.end()
    out.append(text[position:])
    return "".join(out)


def parse_json_with_repair(text: str) -> Any:
    """``json.loads``, retried once on the repaired text; raises ``ValueError`` when both fail.

    ``orjson`` reads the common case, several times faster; what it refuses and JSON
    readers in JavaScript take (lone surrogates, ``NaN``) goes to ``json.loads``.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired == text:
            raise
        return json.loads(repaired)


def parse_streaming_json(text: str | None) -> Any:
    """The value of possibly incomplete JSON: as much as can be read, ``{}`` when nothing can."""
    if not text or not text.strip():
        return {}
    try:
        return parse_json_with_repair(text)
    except ValueError:
        pass
    for candidate in (lambda: text, lambda: repair_json(text)):
        try:
            result = parse_partial_json(candidate())
        except ValueError:
            continue
        return {} if result is None else result
    return {}


class PartialJSONError(ValueError):
    """The text ends before the value does, where partial values are not allowed."""


class MalformedJSONError(ValueError):
    """The text is not JSON, not even the beginning of it."""


def parse_partial_json(text: str) -> Any:
    """Parse the beginning of a JSON text, completing unterminated strings, arrays and objects."""
    text = text.strip()
    if not text:
        raise PartialJSONError("empty input")
    return _PartialParser(text).parse_any()


_LITERALS: tuple[tuple[str, Any], ...] = (
    ("null", None),
    ("true", True),
    ("false", False),
    ("Infinity", math.inf),
    ("-Infinity", -math.inf),
    ("NaN", math.nan),
)


class _PartialParser:
    """A port of ``partial-json``'s parser with every kind of partial value allowed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.index = 0

    def _char(self) -> str:
        return self.text[self.index] if self.index < self.length else ""

    def _skip_blank(self) -> None:
        while self.index < self.length and self.text[self.index] in _BLANK:
            self.index += 1

    def parse_any(self) -> Any:
        self._skip_blank()
        if self.index >= self.length:
            raise PartialJSONError(f"unexpected end of input at {self.index}")
        char = self.text[self.index]
        if char == '"':
            return self.parse_string()
        if char == "{":
            return self.parse_object()
        if char == "[":
            return self.parse_array()
        remaining = self.length - self.index
        for literal, value in _LITERALS:
            whole = self.text.startswith(literal, self.index)
            cut_short = remaining < len(literal) and literal.startswith(self.text[self.index :])
            if whole or (cut_short and (literal != "-Infinity" or remaining > 1)):
                self.index += len(literal)
                return value
        return self.parse_number()

    def parse_string(self) -> str:
        start = self.index
        match = _STRING.match(self.text, start)
        if match is not None:
            self.index = match.end()
            try:
                return json.loads(match.group())
            except ValueError as error:
                raise MalformedJSONError(str(error)) from None
        self.index = self.length
        body = self.text[start:]
        trailing = len(body) - len(body.rstrip("\\"))
        if trailing % 2:
            body = body[:-1]
        try:
            return json.loads(body + '"')
        except ValueError:
            cut = self.text.rfind("\\")
            if cut < start:
                raise MalformedJSONError(f"invalid string at {start}") from None
            return json.loads(self.text[start:cut] + '"')

    def parse_object(self) -> dict[str, Any]:
        self.index += 1
        self._skip_blank()
        result: dict[str, Any] = {}
        try:
            while self._char() != "}":
                self._skip_blank()
                if self.index >= self.length:
                    return result
                key = self.parse_string()
                self._skip_blank()
                self.index += 1  # the colon
                try:
                    result[key] = self.parse_any()
                except ValueError:
                    return result
                self._skip_blank()
                if self._char() == ",":
                    self.index += 1
        except ValueError:
            return result
        self.index += 1
        return result

    def parse_array(self) -> list[Any]:
        self.index += 1
        result: list[Any] = []
        try:
            while self._char() != "]":
                result.append(self.parse_any())
                self._skip_blank()
                if self._char() == ",":
                    self.index += 1
        except ValueError:
            return result
        self.index += 1
        return result

    def parse_number(self) -> Any:
        text = self.text
        if self.index == 0:
            if text == "-":
                raise MalformedJSONError("not sure what '-' is")
            try:
                return json.loads(text)
            except ValueError as error:
                return self._number_before_exponent(0, error)
        start = self.index
        if self._char() == "-":
            self.index += 1
        while self.index < self.length and text[self.index] not in ",]}":
            self.index += 1
        try:
            return json.loads(text[start : self.index])
        except ValueError as error:
            if text[start : self.index] == "-":
                raise PartialJSONError("not sure what '-' is") from None
            return self._number_before_exponent(start, error)

    def _number_before_exponent(self, start: int, error: ValueError) -> Any:
        """``1e`` or ``1e-``: the number without its unfinished exponent."""
        cut = self.text.rfind("e")
        if cut <= start:
            raise MalformedJSONError(str(error)) from None
        try:
            return json.loads(self.text[start:cut])
        except ValueError as inner:
            raise MalformedJSONError(str(inner)) from None
