"""Typed settings of the worker (docs/rules/surfaces.md §2, docs/rules/search.md §13).

`Settings` holds every field of the `iii-directory` configuration entry with its default.
Fields are classed as *topology* (a change needs a restart), *tunable* (applied live) or
*per call* (read on every use). Folder strings are stored as configured and resolved on every
use by `resolve_path` (docs/rules/surfaces.md §2.2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .config_base import (  # noqa: F401  (re-exported: the model's users import them from here)
    CONFIG_ID,
    InvalidSettings,
    compose_default,
    config_id,
    home_dir,
    project_root,
    registry_base,
    resolve_path,
    web_base,
)
from .models import DRAFT_07, describe_validation_error

CONFIG_NAME = "iii-directory"
CONFIG_DESCRIPTION = (
    "Skills/prompts folders, workers-registry URL, download timeouts, and "
    "skill-visibility filters for the iii-directory worker."
)

TOPOLOGY_MARK = "(topology)"
"""A field whose description ends with this mark is a *topology* field: a change to it needs a
restart (`TOPOLOGY_FIELDS`, derived from the model below)."""

SearchMode = Literal["lexical", "hybrid", "judge"]
JudgeQuestion = Literal["noul", "choice", "tournament"]


class ComposeDefault:
    """A folder default that follows `III_COMPOSE_DIR`: calling it answers
    `compose_default(rel)`. The model uses it as a default factory, and the plain settings table
    (`data/settings.json`) records its `rel`, so both compute the same default. (Here, not in
    `config_base`: a class costs its creation on every `call`, which reads only the table.)"""

    __slots__ = ("rel",)

    def __init__(self, rel: str) -> None:
        self.rel = rel

    def __call__(self) -> str:
        return compose_default(self.rel)

    def __repr__(self) -> str:
        return f"ComposeDefault({self.rel!r})"


class Settings(BaseModel):
    """The live configuration. Unknown keys are ignored; invalid values are rejected."""

    model_config = ConfigDict(extra="ignore", frozen=True, validate_default=True)

    skills_folder: str = Field(
        default_factory=ComposeDefault("skills"),
        description="Writable root of skills and system prompts; every download writes here. (topology)",
    )
    local_skills_folder: str = Field(
        default_factory=ComposeDefault("skills/iii"),
        description="Project-scoped override root; whole-namespace local-wins. (topology)",
    )
    agents_folder: str = Field(
        default_factory=ComposeDefault("agents"),
        description="Writable root of direct <id>.md agent profiles. (topology)",
    )
    global_agents_folder: str = Field(
        default="~/.iii/agents",
        description="User-global agent profiles; shadowed per id by agents_folder.",
    )
    agents_skills_folder: str = Field(
        default=".agents/skills",
        description="Read-only project agent-skills root (shallow <dir>/SKILL.md scan). (topology)",
    )
    global_agents_skills_folder: str = Field(
        default="~/.agents/skills", description="Read-only user-global agent-skills root."
    )
    auto_download: bool = Field(
        default=True,
        description="Subscribe to worker-add events and reconcile skill bundles at boot. (topology)",
    )
    registry_url: str = Field(
        default="https://api.workers.iii.dev", description="Workers registry API base URL."
    )
    registry_web_url: str | None = Field(
        default=None,
        description="Registry web base for links; null derives it from registry_url.",
    )
    download_timeout_ms: int = Field(
        default=60000, ge=1, description="Timeout of one git clone or one HTTP request (ms)."
    )
    registry_cache_ttl_ms: int = Field(
        default=60000, ge=0, description="Registry response cache TTL (ms); 0 disables caching."
    )
    filter_unregistered: bool = Field(
        default=True, description="Hide skills whose namespace is not an installed worker."
    )
    inject_hint: bool = Field(
        default=False, description="Bind the directory::pre-generate discovery hint hook."
    )
    hint_min_workers: int = Field(
        default=2, ge=0, description="Minimum surface width for the hint (0 = any surface)."
    )
    registry_search: bool = Field(
        default=True, description="Include installable registry workers in function search."
    )
    function_search_mode: SearchMode = Field(
        default="judge", description="Function search mode: lexical, hybrid or judge."
    )
    function_search_judge_timeout_ms: int = Field(
        default=3000, ge=1, le=30000, description="Judge budget per public call (ms)."
    )
    function_search_judge_min_relevance: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Judge relevance floor for functions."
    )
    function_search_judge_side_lane_min_relevance: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Judge relevance floor for skills and triggers."
    )
    function_search_judge_question: JudgeQuestion = Field(
        default="choice", description="Judge question style: noul, choice or tournament."
    )
    function_search_judge_choice_min_probability: float = Field(
        default=0.1, ge=0.0, le=1.0, description="Minimum probability of non-best choice options."
    )
    function_search_model_path: str | None = Field(
        default=None, description="Embedding model directory override; null = packaged model. (topology)"
    )
    function_search_model_download: bool = Field(
        default=True, description="Accepted for compatibility; this worker never downloads models. (topology)"
    )
    function_search_reranker_path: str | None = Field(
        default=None, description="Optional cross-encoder reranker directory; null = off. (topology)"
    )
    function_search_text_cache_mib: int = Field(
        default=16, ge=1, le=4096,
        description="MiB that search's memos of request text (queries, terms, words) may hold together.",
    )

    @field_validator("registry_url")
    @classmethod
    def _registry_base(cls, value: str) -> str:
        return registry_base(value)

    @property
    def web_url(self) -> str:
        """`registry_web_url`, or `registry_url` with a leading `api.` host label dropped
        (`config_base.web_base`)."""
        return web_base(self.registry_url, self.registry_web_url)

    def path(self, field: str) -> Path:
        """Resolve a folder field now (docs/rules/surfaces.md §2.2)."""
        return resolve_path(getattr(self, field))

    def topology_changes(self, other: Settings) -> list[str]:
        """Topology fields whose values differ between `self` and `other`."""
        return [f for f in TOPOLOGY_FIELDS if getattr(self, f) != getattr(other, f)]


TOPOLOGY_FIELDS: tuple[str, ...] = tuple(
    name for name, info in Settings.model_fields.items() if (info.description or "").endswith(TOPOLOGY_MARK)
)
"""The topology fields, in the model's order: those whose description carries `TOPOLOGY_MARK`."""


def load_settings(value: Any) -> Settings:
    """Build settings from a configuration value (`None` = defaults)."""
    if value is None:
        return Settings()
    if not isinstance(value, dict):
        raise InvalidSettings("configuration value must be an object")
    try:
        return Settings.model_validate(value)
    except ValidationError as exc:
        raise InvalidSettings(
            describe_validation_error(exc).replace("invalid request", "invalid configuration")
        ) from None


def config_schema() -> dict[str, Any]:
    """Draft-07 schema of every field, with an `example` equal to the defaults; open to
    unknown keys."""
    schema = Settings.model_json_schema(mode="serialization")
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.pop("required", None)
    schema["$schema"] = DRAFT_07
    schema["example"] = Settings().model_dump(mode="json")
    return schema
