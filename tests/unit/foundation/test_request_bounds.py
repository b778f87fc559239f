"""Every string a request carries is bounded in the published schema (issue 36, item 2): a
field that reaches a URL, a header, a command line or a file name has a `maxLength`, so an
over-long value is refused as a request-shape error naming the field, before any handler runs."""

from __future__ import annotations

from typing import Any

import pytest

from iii_directory.errors import DirectoryError
from iii_directory.functions import build_table
from iii_directory.models import parse_request
from iii_directory.request_bounds import CURSOR_CHARS, REGISTRY_TEXT_CHARS

TABLE = build_table()

UNBOUNDED = {
    # file content: bounded in bytes by the write rule (D113, 256 KiB), not in characters
    "directory::agents::create .content", "directory::agents::update .content",
    "directory::skills::create .content", "directory::skills::update .content",
    "directory::system-prompts::create .content", "directory::system-prompts::update .content",
    "directory::kits::apply .decisions{}.content",
    # the pre-generate hook never refuses a request; its text reaches no URL, path or command
    "directory::pre-generate .session_id", "directory::pre-generate .turn_id",
    "directory::pre-generate .generate.system_prompt", "directory::pre-generate .generate.tools[].name",
    "directory::pre-generate .generate.tools[].description",
    # bounded by their own surfaces (the search request's size limits; the console page's asset path)
    "directory::search_functions .capabilities[]", "iii-directory::ui-content .path",
}


def string_fields(schema: Any, path: str, defs: dict[str, Any]) -> list[tuple[str, int | None]]:
    """(path, maxLength) of every string a request schema accepts, following `$ref`s."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        return string_fields(defs.get(schema["$ref"].rsplit("/", 1)[-1]), path, defs)
    found: list[tuple[str, int | None]] = []
    if schema.get("type") == "string":
        found.append((path, schema.get("maxLength")))
    for branch in schema.get("anyOf", ()):
        if isinstance(branch, dict) and branch.get("type") == "string":
            found.append((path, branch.get("maxLength", schema.get("maxLength"))))
        else:
            found.extend(string_fields(branch, path, defs))
    for name, prop in (schema.get("properties") or {}).items():
        found.extend(string_fields(prop, f"{path}.{name}", defs))
    found.extend(string_fields(schema.get("items"), f"{path}[]", defs))
    found.extend(string_fields(schema.get("additionalProperties"), f"{path}{{}}", defs))
    return found


def test_every_request_string_is_bounded_in_the_published_schema() -> None:
    unbounded = set()
    for function_id, spec in TABLE.functions.items():
        schema = spec.registration().get("request_format") or {}
        defs = schema.get("definitions") or schema.get("$defs") or {}
        for path, limit in string_fields(schema, "", defs):
            assert limit is None or 1 <= limit <= 4096, (function_id, path, limit)
            if limit is None:
                unbounded.add(f"{function_id} {path}")
    assert unbounded <= UNBOUNDED, sorted(unbounded - UNBOUNDED)


@pytest.mark.parametrize(("function_id", "field", "others"), [
    ("directory::registry::workers::list", "search", {}),
    ("directory::registry::workers::list", "cursor", {}),
    ("directory::registry::workers::info", "name", {}),
    ("directory::registry::workers::info", "version", {"name": "x"}),
    ("directory::registry::workers::info", "tag", {"name": "x"}),
    ("directory::skills::download", "worker", {}),
    ("directory::skills::download", "version", {"worker": "x"}),
    ("directory::skills::download_from_registry", "worker", {}),
    ("directory::skills::download_from_registry", "tag", {"worker": "x"}),
    ("directory::__on_worker_added", "worker", {}),
])
def test_registry_fields_past_the_bound_are_refused_naming_the_field(
        function_id: str, field: str, others: dict[str, Any]) -> None:
    request = TABLE.functions[function_id].request
    limit = CURSOR_CHARS if field == "cursor" else REGISTRY_TEXT_CHARS
    parse_request(request, {**others, field: "a" * limit})
    with pytest.raises(DirectoryError) as info:
        parse_request(request, {**others, field: "a" * (limit + 1)})
    assert info.value.to_wire() == {
        "code": "invocation_failed",
        "message": f'invalid request: field "{field}": longer than {limit} characters',
    }
