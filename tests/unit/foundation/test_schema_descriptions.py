"""Published descriptions: a model docstring is published flowed onto one line per paragraph
(as the reference worker publishes its doc comments); developer notes never reach a schema."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from iii_directory.functions import build_table
from iii_directory.models import Empty, Ok, Response, draft07_schema


class Wrapped(Response):
    """First line of a paragraph
    continues here.

    Second paragraph."""

    name: str = Field(description="one\nline")


def descriptions(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("description"), str):
            found.append(node["description"])
        for key, child in node.items():
            if key != "description":
                found += descriptions(child)
    elif isinstance(node, list):
        for child in node:
            found += descriptions(child)
    return found


def test_docstrings_are_flowed_and_paragraph_breaks_kept() -> None:
    schema = draft07_schema(Wrapped, mode="serialization")
    assert schema["description"] == "First line of a paragraph continues here.\n\nSecond paragraph."
    assert schema["properties"]["name"]["description"] == "one line"


def test_base_models_publish_no_description() -> None:
    assert "description" not in draft07_schema(Empty)
    assert "description" not in draft07_schema(Ok, mode="serialization")


def test_no_published_description_carries_a_wrapped_line() -> None:
    for spec in build_table().functions.values():
        for schema in (spec.request_schema(), spec.response_schema()):
            for text in descriptions(schema):
                assert "\n" not in text.replace("\n\n", ""), (spec.id, text)


def test_skill_write_outputs_describe_their_own_id() -> None:
    table = build_table().functions
    create = table["directory::skills::create"].response_schema()
    update = table["directory::skills::update"].response_schema()
    assert create is not None and update is not None
    assert create["properties"]["id"]["description"] == (
        "The created skill's id (normalized form of the input id)."
    )
    assert update["properties"]["id"]["description"] == (
        "The id that was updated (normalized form of the input id)."
    )
