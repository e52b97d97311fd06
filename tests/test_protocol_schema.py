"""``protocol.schema.json`` is generated from the wire models and must not drift from them."""

from __future__ import annotations

import json

from agentls.protocol_methods import NOTIFICATIONS, REQUESTS, json_schema

from tests.conftest import PROJECT_ROOT


def test_schema_file_matches_the_models() -> None:
    stored = json.loads((PROJECT_ROOT / "protocol.schema.json").read_text(encoding="utf-8"))
    assert stored == json.loads(json.dumps(json_schema())), (
        "protocol.schema.json is stale: run .venv/bin/python -m agentls.protocol_methods protocol.schema.json"
    )


def test_protocol_md_documents_every_method_and_notification() -> None:
    text = (PROJECT_ROOT / "protocol.md").read_text(encoding="utf-8")
    missing = [name for name in [*REQUESTS, *NOTIFICATIONS] if f"`{name}`" not in text]
    assert not missing, f"protocol.md does not document {missing}"
