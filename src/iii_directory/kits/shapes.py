"""Registry shapes of kits (docs/rules/kits.md §1.6), decoded leniently.

Every field is optional with a default and unknown fields are ignored; a JSON `null` counts as
absent. When re-served (a plan's `agent` / `skill`, `directory::kits::get`'s `detail`), fields
that are absent are left out.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from ..models import Response


class Lenient(Response):
    """Base of registry shapes: unknown keys ignored, `null` → default, absent optionals
    omitted on output."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.omit_when_none = frozenset(
            name for name, info in cls.model_fields.items()
            if not info.is_required() and info.default is None
        )

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data


class Author(Lenient):
    handle: str | None = None
    name: str | None = None
    verified: bool = False


class Deprecation(Lenient):
    message: str | None = None
    replaced_by: str | None = None


class KitCounts(Lenient):
    agents: int = Field(0, ge=0)
    skills: int = Field(0, ge=0)
    workers: int = Field(0, ge=0)


class KitWorker(Lenient):
    name: str = ""
    range: str = ""
    resolved: str | None = None  # the version the range resolves to today
    type: str | None = None
    description: str | None = None


# Parsed frontmatter of a kit's `agents/<id>.md`.
class AgentEntry(Lenient):
    id: str | None = None
    path: str | None = None
    sha256: str | None = None
    size_bytes: int | None = Field(None, ge=0)
    name: str | None = None
    description: str | None = None
    logo: str | None = None
    icon: str | None = None
    color: str | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    extends: str | None = None
    hidden: bool | None = None
    skills: list[str] = Field(default_factory=list)
    functions: list[str] = Field(default_factory=list)


class SkillEntry(Lenient):
    id: str | None = None
    path: str | None = None
    sha256: str | None = None
    size_bytes: int | None = Field(None, ge=0)
    title: str | None = None
    description: str | None = None
    type: str | None = None
    used_by: list[str] = Field(default_factory=list)


class KitDetail(Lenient):
    id: str = ""
    author: Author | None = None
    name: str | None = None
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    version: str = ""
    repo: str | None = None
    license: str | None = None
    notes: str | None = None
    published_at: str | None = None
    release_tags: dict[str, str] = Field(default_factory=dict)
    counts: KitCounts | None = None
    deprecation: Deprecation | None = None
    experimental: bool | None = None
    workers: list[KitWorker] = Field(default_factory=list)
    agents: list[AgentEntry] = Field(default_factory=list)
    skills: list[SkillEntry] = Field(default_factory=list)
    total_downloads: int | None = Field(None, ge=0)

    def agent_at(self, source: str) -> AgentEntry | None:
        return next((a for a in self.agents if a.path == source), None)

    def skill_at(self, source: str) -> SkillEntry | None:
        return next((s for s in self.skills if s.path == source), None)


class KitFile(Lenient):
    path: str = ""
    kind: str | None = None
    sha256: str | None = None
    size_bytes: int | None = Field(None, ge=0)
    content: str = ""


class KitFiles(Lenient):
    version: str = ""
    files: list[KitFile] = Field(default_factory=list)
    workers: list[Any] = Field(default_factory=list)


class KitFunction(Lenient):
    id: str | None = None
    used_by: list[str] = Field(default_factory=list)
    status: str | None = None
    worker: str | None = None
    worker_version: str | None = None
    description: str | None = None


class VersionEntry(Lenient):
    version: str = ""
    published_at: str | None = None
    license: str | None = None
    tags: list[str] = Field(default_factory=list)


class KitVersions(Lenient):
    release_tags: dict[str, str] = Field(default_factory=dict)
    versions: list[VersionEntry] = Field(default_factory=list)


class UpdateAnswer(Lenient):
    kit: str = ""
    current: str | None = None
    available: str | None = None
    latest: str | None = None
    major: bool = False
    deprecation: Deprecation | None = None
    not_found: bool = False
