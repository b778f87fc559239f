from __future__ import annotations

import pytest

from iii_directory.errors import DirectoryError, invalid_input, not_found
from iii_directory.models import Request, Response, draft07_schema, parse_request


class Probe(Request):
    id: str
    count: int = 1


class Row(Response):
    omit_when_none = frozenset({"raw"})
    type: str | None = None
    raw: str | None = None


def test_not_found_message_shape() -> None:
    err = not_found("D110", "skill", 'a"b', suggestions=["x", "y"],
                    next_steps=[("directory::skills::list", "browse skill ids")])
    assert err.code == "D110"
    assert err.message == (
        'D110 not_found: skill "a\\"b" does not exist. Did you mean: x, y. '
        "Next: call directory::skills::list to browse skill ids."
    )


def test_invalid_input_and_plain() -> None:
    assert invalid_input("D113", "too big.").message == "D113 invalid_input: too big."
    assert DirectoryError.plain("id must be non-empty").code == "invocation_failed"
    assert DirectoryError.plain("D320 registry_error: down").code == "D320"


def test_request_validation_names_the_field() -> None:
    with pytest.raises(DirectoryError) as info:
        parse_request(Probe, {"id": 3})
    assert info.value.message == 'invalid request: field "id": expected a string'
    with pytest.raises(DirectoryError) as info:
        parse_request(Probe, {})
    assert info.value.message == 'invalid request: field "id": is required'
    parsed = parse_request(Probe, {"id": "a", "_caller_worker_id": "w"})
    assert parsed.id == "a" and parsed.count == 1


def test_response_omits_only_listed_fields() -> None:
    assert Row().model_dump(mode="json") == {"type": None}
    assert Row(raw="x").model_dump(mode="json") == {"type": None, "raw": "x"}


def test_schema_is_draft07_and_open() -> None:
    schema = draft07_schema(Probe)
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["required"] == ["id"]
    assert "additionalProperties" not in schema
    assert "title" not in schema and "title" not in schema["properties"]["id"]
