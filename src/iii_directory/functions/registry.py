"""`directory::registry::workers::{list,info}`: the workers-registry proxy (docs/rules/surfaces.md §10.1–§10.2).

Both answer through `sources.registry.RegistryClient` (TTL cache, whole-request deadline, coded
errors). `list` forwards `search` / `cursor` only when present; `info` merges the worker envelope
and the skills tree into a card that keeps public function and trigger names with descriptions
only (schemas, metadata, internal and search-excluded functions dropped; `readme` on request).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from ..context import Context
from ..runtime import Runtime
from ..models import OptionalText, Request, Response
from ..request_bounds import CURSOR_CHARS, REGISTRY_TEXT_CHARS
from ..sources.registry import RegistryClient
from ..table import FunctionSpec, Surface

# --- shared envelope --------------------------------------------------------------------------


class Dependency(Response):
    model_config = ConfigDict(json_schema_extra={"description": (
        "Worker dependency entry. Mirrors the `Dependency` schema in `openapi.yaml`."
    )})

    name: str
    version: str


class WorkerAuthor(Response):
    model_config = ConfigDict(json_schema_extra={"description": (
        "Author block for a published worker. Field names match the `WorkerAuthor` schema "
        "in `openapi.yaml` (`pfp`, `verified`)."
    )})

    name: str | None = None
    pfp: str | None = Field(
        default=None, description="Profile picture URL. `null` when the author hasn't uploaded one."
    )
    verified: bool = False


class Worker(Response):
    model_config = ConfigDict(json_schema_extra={"description": (
        "Shared worker envelope used by both `directory::registry::workers::list` rows "
        "and the `worker` field of `directory::registry::workers::info`. Field names "
        "match the OpenAPI `WorkerListItem` schema. The shared core fields (`name`, "
        "`description`, `version`) line up with the engine's `engine::workers::list` row "
        "shape so callers learn one envelope across local + registry surfaces."
    )})

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"image"})

    author: WorkerAuthor | None = None
    config: Any = Field(
        default_factory=dict,
        description="Free-form runtime configuration block from the publish payload.",
    )
    dependencies: list[Dependency] = Field(default_factory=list)
    description: str | None = None
    image: str | None = Field(
        default=None, description="Container image tag, populated only for `type=image` workers."
    )
    name: str
    repo: str | None = None
    supported_targets: list[str] = Field(default_factory=list)
    total_downloads: int = Field(default=0, ge=0)
    type: str | None = Field(
        default=None, description="Worker kind — `binary`, `image`, or `engine`."
    )
    version: str | None = Field(
        default=None,
        description="Latest published version (worker-list) or the resolved version (worker-info, "
        "when called with `version` / `tag`).",
    )


# --- list -------------------------------------------------------------------------------------


class WorkerListInput(Request):
    model_config = ConfigDict(json_schema_extra={"description": (
        "`directory::registry::workers::list` input. Mirrors the engine's "
        "`engine::workers::list` search input so callers can switch between local and "
        "registry surfaces without re-learning the API. Adds `cursor` for paging because "
        "the registry is paged (server-authored page size — the client cannot override "
        "it)."
    )})

    cursor: OptionalText = Field(
        default=None,
        max_length=CURSOR_CHARS,
        description="Cursor from a previous call's `pagination.next_cursor`; omit for the first "
        "page.",
    )
    search: OptionalText = Field(
        default=None,
        max_length=REGISTRY_TEXT_CHARS,
        description="Optional free-text query, fuzzy-matched by the registry; omitted means "
        "ordered by downloads.",
    )


class Pagination(Response):
    model_config = ConfigDict(json_schema_extra={"description": (
        "Pagination envelope returned alongside a worker-list page. Mirrors the OpenAPI "
        "`Pagination` schema."
    )})

    has_more: bool = False
    next_cursor: str | None = Field(
        default=None, description="Opaque cursor for the next page. `null` on the last page."
    )
    page_size: int = Field(
        default=0, ge=0, description="Server-authored page size. The client cannot override this."
    )


class WorkerListOutput(Response):
    pagination: Pagination
    workers: list[Worker]


async def list_workers(ctx: Context, req: WorkerListInput) -> WorkerListOutput:
    client = ctx.directory.service(RegistryClient)
    page = await client.list_workers(ctx.settings, search=req.search, cursor=req.cursor)
    return WorkerListOutput.model_validate(page)


# --- info -------------------------------------------------------------------------------------


class WorkerInfoInput(Request):
    model_config = ConfigDict(json_schema_extra={"description": (
        "`directory::registry::workers::info` input. Pass either `version` or `tag`; if "
        "neither is provided we fall back to `tag: \"latest\"`."
    )})

    name: str = Field(max_length=REGISTRY_TEXT_CHARS,
                      description='Worker name in the registry (e.g. `"resend"`).')
    readme: bool = Field(
        default=False,
        description="Include the README markdown (10–25 KB for most workers). Off by default: "
        "the card is for judging fit before `compose::add`; the README is for setup prose and "
        "examples.",
    )
    tag: OptionalText = Field(default=None, max_length=REGISTRY_TEXT_CHARS)
    version: OptionalText = Field(
        default=None,
        max_length=REGISTRY_TEXT_CHARS,
        description='Mutually exclusive with `tag`. If neither is provided we fall back to `tag: '
        '"latest"`.',
    )


class ApiReferenceFunction(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset(
        {"metadata", "request_schema", "response_schema"}
    )

    description: str | None = None
    metadata: Any = None
    name: str
    request_schema: Any = None
    response_schema: Any = None


class ApiReferenceTrigger(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset(
        {"invocation_schema", "metadata", "return_schema"}
    )

    description: str | None = None
    invocation_schema: Any = None
    metadata: Any = None
    name: str
    return_schema: Any = None


class ApiReference(Response):
    functions: list[ApiReferenceFunction] = Field(default_factory=list)
    triggers: list[ApiReferenceTrigger] = Field(default_factory=list)


class SkillsTreeSkill(Response):
    path: str


class SkillsTree(Response):
    skills: list[SkillsTreeSkill] = Field(default_factory=list)


class WorkerInfoOutput(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"readme"})

    api_reference: ApiReference
    readme: str | None = None
    skills_tree: SkillsTree
    worker: Worker = Field(
        description="Same shape as `directory::registry::workers::list` rows (and the engine's "
        "`engine::workers::list` rows for the shared core fields)."
    )


async def worker_info(ctx: Context, req: WorkerInfoInput) -> WorkerInfoOutput:
    client = ctx.directory.service(RegistryClient)
    card = await client.worker_info(ctx.settings, req.name.strip(), version=req.version,
                                    tag=req.tag, readme=req.readme)
    return WorkerInfoOutput.model_validate(card)


# --- table ------------------------------------------------------------------------------------

async def close_registry_client(directory: Runtime) -> None:
    """Close the pooled registry connections on shutdown."""
    await directory.service(RegistryClient).aclose()


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id="directory::registry::workers::list",
            description="List workers from the public registry, optionally filtered by fuzzy "
            "`search` (default order: downloads). Cursor-paginated: pass back "
            "`pagination.next_cursor` as `cursor`.",
            request=WorkerListInput,
            response=WorkerListOutput,
            handler=list_workers,
            metadata={},
        ),
        FunctionSpec(
            id="directory::registry::workers::info",
            description="Preview one registry worker before installing: envelope (version, kind, "
            "dependencies, config), its public function and trigger names with descriptions, and "
            "skill file paths. Schemas are omitted — install, then read contracts with "
            "engine::functions::info. Pass `readme: true` for the README prose; `version` or `tag` "
            '(default tag "latest").',
            request=WorkerInfoInput,
            response=WorkerInfoOutput,
            handler=worker_info,
            metadata={},
        ),
    ),
    on_stop=(close_registry_client,),
)
