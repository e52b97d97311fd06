"""The text of the documents the client has open, kept in step with ``textDocument/did*``.

``didOpen`` gives a document's text and version, ``didChange`` its changes (whole texts,
or ranges in the position encoding agreed at ``initialize``: the server advertises
incremental synchronisation) and the new version, ``didClose`` ends it. Documents are
keyed by their URI with its percent-escapes decoded, as editors spell the same file's URI
differently (``%3A`` or ``:``).

Ill-formed params are refused with a message (the server logs it and goes on); a change
of a document that is not open is refused the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from agentls.json_depth import is_integer
from agentls.tools.editor_connection import PositionEncoding, offset_at


@dataclass(slots=True)
class TextDocument:
    uri: str
    """As the client sent it in ``didOpen``."""
    text: str
    version: int | None


class DocumentError(ValueError):
    """A ``textDocument/did*`` notification the store cannot take."""


class TextDocuments:
    """The open documents of one client."""

    def __init__(self) -> None:
        self.encoding: PositionEncoding = "utf-16"
        self._documents: dict[str, TextDocument] = {}

    def get(self, uri: str) -> TextDocument | None:
        return self._documents.get(unquote(uri))

    def all(self) -> list[TextDocument]:
        return list(self._documents.values())

    def did_open(self, params: Any) -> str:
        """Open (or reopen) a document; its URI."""
        item = _member(params, "textDocument", dict)
        uri, text = _member(item, "uri", str), _member(item, "text", str)
        version = _member(item, "version", int)
        self._documents[unquote(uri)] = TextDocument(uri, text, version)
        return uri

    def did_change(self, params: Any) -> str:
        """Apply a ``didChange``'s changes in order; the document's URI."""
        identifier = _member(params, "textDocument", dict)
        uri, version = _member(identifier, "uri", str), _member(identifier, "version", int)
        changes = _member(params, "contentChanges", list)
        document = self.get(uri)
        if document is None:
            raise DocumentError(f"{uri} is not open")
        text = document.text
        for change in changes:
            text = self._changed(text, change)
        document.text, document.version = text, version
        return uri

    def did_close(self, params: Any) -> str:
        uri = _member(_member(params, "textDocument", dict), "uri", str)
        self._documents.pop(unquote(uri), None)
        return uri

    def _changed(self, text: str, change: Any) -> str:
        new_text = _member(change, "text", str)
        if change.get("range") is None:
            return new_text
        range_ = _member(change, "range", dict)
        start = self._offset(text, _member(range_, "start", dict))
        end = self._offset(text, _member(range_, "end", dict))
        return text[:start] + new_text + text[max(start, end) :]

    def _offset(self, text: str, position: dict[str, Any]) -> int:
        line, character = _member(position, "line", int), _member(position, "character", int)
        if line < 0 or character < 0:
            raise DocumentError(f"a position must not be negative: {position}")
        offset = offset_at(text, line, character, self.encoding)
        return len(text) if offset is None else offset  # past the last line: the end


def uri_to_path(uri: str) -> str | None:
    """The file system path of a ``file:`` URI (``None`` for other schemes)."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    path = unquote(parts.path)
    if parts.netloc and parts.netloc != "localhost":
        path = f"//{parts.netloc}{path}"  # a UNC path
    return os.path.normpath(path) if path else None


def _member(value: Any, key: str, kind: type) -> Any:
    if not isinstance(value, dict):
        raise DocumentError(f"expected an object with {key!r}, got {type(value).__name__}")
    found = value.get(key)
    usable = is_integer(found) if kind is int else isinstance(found, kind)
    if not usable:
        raise DocumentError(
            f"{key!r} must be {'an' if kind is int else 'a'} {_names[kind]}, got {found!r:.80}"
        )
    return found


_names = {int: "integer", str: "string", dict: "object", list: "list"}
