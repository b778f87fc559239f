"""Skill ids and names as request fields (pydantic types for the request models; the rules
themselves are in `content.ids`, which imports no pydantic)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .ids import MAX_ID_CHARS, MAX_SEGMENT_CHARS

SkillIdText = Annotated[str, Field(json_schema_extra={"maxLength": MAX_ID_CHARS})]
NameText = Annotated[str, Field(json_schema_extra={"maxLength": MAX_SEGMENT_CHARS})]
"""Skill ids and names (prompts, agent profiles) in requests: their `maxLength` is published,
not enforced by the model, so a longer one gets the id rule's own message (`content.ids`)."""
