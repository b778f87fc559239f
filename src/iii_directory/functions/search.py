"""Surface `search`: `directory::search_functions`, `directory::on-functions-change` and its
`engine::functions-available` binding, plus the start hook (catalog boot snapshot, background
model loading). The pipeline itself lives in `iii_directory.search`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from ..context import Context
from ..runtime import Runtime
from ..errors import DirectoryError
from ..lazy import LazyModule
from ..models import PlainResponse, Request, Response
from ..request_bounds import LABEL_CHARS
from ..encoder import preload
from ..search.request_limits import capabilities_schema
from ..table import BindingSpec, FunctionSpec, Surface

if TYPE_CHECKING:
    from ..search import catalog, service
    from ..sources import registry
else:  # the search stack loads with the start hook or the first call, not to register (lazy.py)
    catalog = LazyModule("iii_directory.search.catalog")
    service = LazyModule("iii_directory.search.service")
    registry = LazyModule("iii_directory.sources.registry")

log = logging.getLogger(__name__)

SEARCH_ID = "directory::search_functions"
ON_FUNCTIONS_CHANGE_ID = "directory::on-functions-change"
FUNCTIONS_AVAILABLE = "engine::functions-available"

SEARCH_DESCRIPTION = (
    "Search available functions for the unmet external capabilities of a step (usually one to "
    "six, at most eighteen per call); returns compact function-id candidates grouped by worker, "
    "plus matching installed skill documents under `skills` and registered trigger bindings "
    "under `triggers`."
)

CAPABILITIES_DESCRIPTION = (
    "Non-empty capability searches derived from the goal and current execution state, usually "
    "one to six and at most eighteen per call (searched in batches of six). For one search at "
    "each decision point, include all unmet external capabilities once. Exclude intrinsic "
    "reasoning, summarization, planning, or formatting, and do not repeat needs already "
    "represented or satisfied. Requests to summarize provided text or content are ignored. "
    "Write every entry in English, translating non-English user requests while preserving "
    "proper names, URLs, and function IDs."
)

SLIM_DESCRIPTION = "First description sentence, capped at 160 bytes."

CONFIDENCE_DESCRIPTION = (
    "`high`: the search is confident this function serves a requested capability. `low`: the "
    "best the catalog has for a capability it may not serve; read the description and skip it "
    "if it does not fit. `high` candidates come first."
)


class SearchFunctionsRequest(Request):
    capabilities: list[str] = Field(
        description=CAPABILITIES_DESCRIPTION,
        json_schema_extra=capabilities_schema(),
    )


class FunctionCandidate(PlainResponse):
    function_id: str
    description: str = Field(description=SLIM_DESCRIPTION)


class InstalledCandidate(FunctionCandidate):
    """An installed candidate: a `FunctionCandidate` with how sure the search is of it."""

    confidence: Literal["high", "low"] = Field(description=CONFIDENCE_DESCRIPTION)


class SearchWorker(PlainResponse):
    namespace: str
    functions: list[InstalledCandidate]


class InstallCall(PlainResponse):
    """A ready-made `compose::add` target and payload. Under agent-trigger exposure, the caller
    still supplies the wrapper's user-facing `description`."""

    function: str
    payload: Any


class InstallableWorker(PlainResponse):
    """A registry worker that is NOT installed but carries functions matching the requested
    capabilities. `name` is the registry slug `compose::add` installs."""

    name: str
    version: str
    description: str
    functions: list[FunctionCandidate] = Field(
        description="Compact candidates only. If the remaining task needs these functions, "
                    "reuse their IDs and fetch the required contracts through "
                    "`engine::functions::info`.")
    install: InstallCall = Field(
        description="The `compose::add` target and payload; agent-trigger callers add "
                    "`description`.")


class SkillCandidate(PlainResponse):
    id: str = Field(description="Pass to `directory::skills::get { id }` to read the document.")
    title: str
    description: str = Field(description=SLIM_DESCRIPTION)


class TriggerCandidate(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"worker_name"})

    id: str
    trigger_type: str
    function_id: str = Field(
        description="The function the trigger runs; inspect it with `engine::functions::info`.")
    worker_name: str | None = None
    config: Any = Field(description="The binding's configuration (cron expression, hook "
                                    "filters, …).")


class SearchFunctionsResponse(Response):
    omit_when_none: ClassVar[frozenset[str]] = frozenset({"installable", "skills", "triggers"})

    guidance: str
    workers: list[SearchWorker]
    installable: list[InstallableWorker] | None = Field(
        default=None,
        description="Matching workers from the private registry. Their functions are NOT "
                    "callable until the worker is installed.")
    skills: list[SkillCandidate] | None = Field(
        default=None,
        description="Installed skill documents matching the capabilities. Read one with "
                    "`directory::skills::get { id }` before acting on it.")
    triggers: list[TriggerCandidate] | None = Field(
        default=None,
        description="Registered trigger bindings matching the capabilities: what already fires, "
                    "schedules, or hooks a function for them.")
    search_mode: Literal["lexical", "hybrid", "judge"] = Field(
        description="The search mode that actually produced these results: `judge`, `hybrid` "
                    "or `lexical`. It can be lower than the configured mode when a batch fell "
                    "back (judge worker absent or failing, or no local model).")
    latency_ms: float = Field(json_schema_extra={"format": "double"})


class OnFunctionsChangeEvent(Request):
    event: str | None = Field(default=None, max_length=LABEL_CHARS)


class AckResponse(Response):
    ok: bool


async def search_functions(ctx: Context, req: SearchFunctionsRequest) -> SearchFunctionsResponse:
    """One search; its answer (or failure) opens the directory's first-answer gate, so the
    start-up chores it held back (`first_answer.py`) run after it, not beside it. A served
    call starts the model load itself when it comes before the start hooks reach the search
    surface's (`start_model`): a lone first call then waits for the warm index instead of
    answering lexical because no load had begun."""
    searcher = ctx.directory.service(service.SearchService)
    if not ctx.standalone:
        searcher.start_model()
    try:
        result = await searcher.search(ctx, req.capabilities)
        return SearchFunctionsResponse.model_validate(result)
    finally:
        ctx.directory.first_answer.open()


async def on_functions_change(ctx: Context, req: OnFunctionsChangeEvent) -> AckResponse:
    """Re-fetch the catalog; on failure the previous catalog stays active."""
    searcher = ctx.directory.service(service.SearchService)
    try:
        await searcher.refresh()
    except catalog.CatalogFetchError as exc:
        raise DirectoryError("catalog_fetch_failed", f"catalog_fetch_failed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the refresh task itself failed
        log.exception("catalog refresh failed")
        raise DirectoryError("catalog_refresh_task_failed",
                             f"catalog_refresh_task_failed: {exc}") from None
    return AckResponse(ok=True)


async def start_search(directory: Runtime) -> None:
    """Start loading the embedding model in the background (unless the configured mode is
    `lexical`), then take the boot snapshot of the catalog while it loads: the session build
    runs in native code without the GIL, so the two overlap and the first hybrid answer comes
    as soon as the encoder and the on-disk vector cache are open. With `registry_search` on,
    the registry client is warmed (httpx imported, TLS context built) in the background too."""
    searcher = directory.service(service.SearchService)
    if directory.settings.function_search_mode == "lexical":
        preload.discard()  # a speculative `serve` preload (encoder/preload.py) is not needed
    searcher.start_model()
    if directory.settings.registry_search:  # the first search's registry calls find it ready
        searcher.spawn(_warm_registry(directory))
    await searcher.boot()


async def _warm_registry(directory: Runtime) -> None:
    try:
        await directory.service(registry.RegistryClient).warm()
    except Exception as exc:  # noqa: BLE001 - the first request does the same work again
        log.debug("registry client warm-up failed: %s", exc)


async def stop_search(directory: Runtime) -> None:
    await directory.service(service.SearchService).stop()


SURFACE = Surface(
    functions=(
        FunctionSpec(
            id=SEARCH_ID,
            description=SEARCH_DESCRIPTION,
            request=SearchFunctionsRequest,
            response=SearchFunctionsResponse,
            handler=search_functions,
            metadata={},
        ),
        FunctionSpec(
            id=ON_FUNCTIONS_CHANGE_ID,
            description="Internal: refresh the search catalog after the engine function set "
                        "changes.",
            request=OnFunctionsChangeEvent,
            response=AckResponse,
            handler=on_functions_change,
            metadata={"internal": True, "trace_hidden": True},
        ),
    ),
    bindings=(
        BindingSpec(
            key="functions-available",
            trigger_type=FUNCTIONS_AVAILABLE,
            function_id=ON_FUNCTIONS_CHANGE_ID,
            config=lambda _settings: {},
        ),
    ),
    on_start=(start_search,),
    on_stop=(stop_search,),
)
