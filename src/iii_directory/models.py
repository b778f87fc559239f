"""Request/response model bases and the JSON Schemas published from them.

Rules (docs/rules/protocol.md §8, docs/rules/surfaces.md §1.2):
* a request is a JSON object; `null` or an absent body counts as `{}`; unknown keys (such as the
  engine's `_caller_worker_id`) are ignored; a wrong JSON type or a missing required field is an
  error naming the field: `invalid request: field "id": expected a string`;
* response fields typed "string or null" are always present (serialised as `null`); fields listed
  in a model's `omit_when_none` are left out when `None`;
* schemas are JSON Schema draft-07 and never forbid unknown keys.
"""

from __future__ import annotations

import copy
import re
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_serializer
from pydantic_core import PydanticCustomError  # noqa: F401  (re-exported for handlers)

from .errors import DirectoryError
from .request_bounds import ID_CHARS, LABEL_CHARS

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _blank_to_none(value: str | None) -> str | None:
    if value is None:
        return None
    stripped = value.strip()
    return stripped or None


OptionalText = Annotated[str | None, AfterValidator(_blank_to_none)]
"""An optional string input: trimmed; blank counts as absent (docs/rules/surfaces.md §1.2)."""
DigestText = Annotated[Annotated[str, Field(max_length=LABEL_CHARS)] | None, AfterValidator(_blank_to_none)]
"""An optional digest such as `expected_sha256` (bounded like every short token)."""
FunctionIdText = Annotated[str, Field(max_length=ID_CHARS)]
"""An engine function id given in a request (bounded like every id, docs/input-bounds.md)."""


class Request(BaseModel):
    """Base of every request model: strict JSON types, unknown keys ignored."""

    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True, defer_build=True)


class PlainResponse(BaseModel):
    """Base of a response model that leaves no field out: every field is always serialised (as
    `null` when `None`). Its dump runs no Python code per instance, where a `Response` runs its
    `_omit` serialiser for every one (a search answer nests a dozen or more)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class Response(PlainResponse):
    """Base of every other response model.

    Fields named in `omit_when_none` are dropped from the output when they are `None`;
    every other field is always serialised (as `null` when `None`).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)
    omit_when_none: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        """Fields in `omit_when_none` are published as optional, not nullable: their `null`
        branch and `default: null` are dropped (they are absent, never `null`, on the wire)."""
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        properties = target.get("properties", {})
        for name, field in cls.model_fields.items():
            if name not in cls.omit_when_none:
                continue
            prop = properties.get(field.serialization_alias or field.alias or name)
            if not isinstance(prop, dict):
                continue
            branches = [b for b in prop.get("anyOf", ()) if b != {"type": "null"}]
            if "anyOf" in prop and len(branches) == 1:
                del prop["anyOf"]
                prop.update({k: v for k, v in branches[0].items() if k not in prop})
            if prop.get("default", 0) is None:
                del prop["default"]
        return schema

    @model_serializer(mode="wrap")
    def _omit(self, handler: Any):  # type: ignore[no-untyped-def]
        # No return annotation on purpose: pydantic then publishes the model's own fields as the
        # serialization schema (an `Any` return would publish an empty schema).
        data = handler(self)
        if self.omit_when_none and isinstance(data, dict):
            for name in self.omit_when_none:
                if name in data and data[name] is None:
                    del data[name]
        return data


# A request with no fields.
class Empty(Request):
    pass


# `{"ok": true}` — the acknowledgement of internal handlers (`ok` published as required).
class Ok(Response):
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    ok: bool = True


_TYPE_WORDS = {
    "string_type": "expected a string",
    "int_type": "expected an integer",
    "float_type": "expected a number",
    "bool_type": "expected a boolean",
    "list_type": "expected an array",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "missing": "is required",
}


def describe_validation_error(exc: ValidationError) -> str:
    """One readable sentence naming the first bad field."""
    first = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in first.get("loc", ()) if p != "__root__")
    kind = first.get("type", "")
    words = _TYPE_WORDS.get(kind, first.get("msg", "is invalid"))
    if kind == "string_too_long":
        words = f"longer than {first.get('ctx', {}).get('max_length')} characters"
    if not loc:
        return f"invalid request: {words}"
    return f'invalid request: field "{loc}": {words}'


def parse_request(model: type[Request], data: Any) -> Request:
    """Validate a wire payload against `model`; raise a DirectoryError on a bad shape."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DirectoryError.plain("invalid request: expected a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DirectoryError.plain(describe_validation_error(exc)) from None


def dump_response(value: Any) -> Any:
    """Serialise a handler's return value to plain JSON data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def _flow(text: str) -> str:
    """A docstring as one line per paragraph: single line breaks become spaces, blank lines
    stay paragraph breaks (`\\n\\n`) — how the reference worker publishes its doc comments."""
    paragraphs = re.split(r"\n[ \t]*\n", text.strip())
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def _tidy(node: Any) -> None:
    """Drop `title` and `additionalProperties: false`, flow every `description` (recursive;
    the keys of a `properties` map are field names, not schema keywords)."""
    if isinstance(node, dict):
        node.pop("title", None)
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
        if isinstance(node.get("description"), str):
            node["description"] = _flow(node["description"])
        for key, child in node.items():
            if key == "properties" and isinstance(child, dict):
                for prop in child.values():
                    _tidy(prop)
            else:
                _tidy(child)
    elif isinstance(node, list):
        for child in node:
            _tidy(child)


def draft07_schema(model: type[BaseModel], *, mode: str = "validation") -> dict[str, Any]:
    """The draft-07 JSON Schema of `model`: `$defs` become `definitions`, no titles,
    no `additionalProperties: false`, descriptions flowed (see `_flow`), and `$schema` set.

    A model's docstring is its published description (pydantic's rule): write it for the
    schema's reader, and keep notes for developers in comments."""
    schema = model.model_json_schema(ref_template="#/definitions/{model}", mode=mode)  # type: ignore[arg-type]
    schema = copy.deepcopy(schema)
    defs = schema.pop("$defs", None)
    if defs:
        schema["definitions"] = defs
    _tidy(schema)
    return {"$schema": DRAFT_07, **schema}
