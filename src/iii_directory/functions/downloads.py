"""`directory::skills::download*` and the auto-download (docs/rules/surfaces.md §9).

* `directory::skills::download` accepts either source; `download_from_registry` and
  `download_from_repo` are the explicit forms, converted to the first and validated the same way.
  After a successful explicit download one `{op: "download", namespace, source}` event is fanned
  out per kind written (skills, system prompts, agent profiles).
* `directory::__on_worker_added` (internal) is bound to the `worker` trigger type with
  `{"operations": ["add"], "stages": ["done"]}` while `auto_download` is on; it downloads the
  added worker's bundle at tag `latest`.
* The boot reconcile (background, `RECONCILE_DELAY_S` after start, only when `auto_download` was
  on at boot): the engine namespace `iii` first, then every container of `compose::status`;
  names that are invalid, overridden by a `local_skills_folder` directory, or already marked
  complete are skipped.
Auto-downloads share one per-worker in-flight guard, fire no on-change events, treat a registry
404 as a benign no-op, only log other failures, and invalidate the installed-workers cache
after anything was written.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import ConfigDict, Field

from ..content.markers import has_marker
from ..content.roots import local_skills_root, skills_root
from ..content.visibility import InstalledWorkers, compose_route, parse_installed
from ..context import Context
from ..errors import DirectoryError
from ..lazy import LazyModule
from ..models import Request, Response
from ..request_bounds import (
    FILE_NAME_CHARS,
    GIT_REF_CHARS,
    REGISTRY_TEXT_CHARS,
    URL_CHARS,
)
from ..sources.registry_records import worker_name_problem
from ..table import BindingSpec, FunctionSpec, Surface, tool_label

if TYPE_CHECKING:
    from ..config import Settings
    from ..runtime import Runtime
    from ..sources import downloads
    from ..sources.bundle import DownloadResult
else:  # imported by the first download, not to register (src/iii_directory/lazy.py)
    downloads = LazyModule("iii_directory.sources.downloads")

log = logging.getLogger(__name__)

WORKER_ADDED = "directory::__on_worker_added"
WORKER_TRIGGER = "worker"
WORKER_BINDING_CONFIG: dict[str, Any] = {"operations": ["add"], "stages": ["done"]}
ENGINE_NAMESPACE = "iii"


# --- models ---------------------------------------------------------------------------------


class DownloadInput(Request):
    branch: str | None = Field(
        default=None,
        max_length=GIT_REF_CHARS,
        description='Source A: branch to clone. Defaults to `"main"`. Pass `"master"` (or any '
        "other branch name) for repos whose default branch is not `main`.",
    )
    repo: str | None = Field(
        default=None, max_length=URL_CHARS, description="Source A: GitHub repo URL. Pair with `skill`."
    )
    skill: str | None = Field(
        default=None,
        max_length=FILE_NAME_CHARS,
        description="Source A: subfolder under `skills/` inside the repo. Doubles as the "
        "destination namespace inside `skills_folder`.",
    )
    tag: str | None = Field(
        default=None,
        max_length=REGISTRY_TEXT_CHARS,
        description="Registry tag to pull (default `latest`); mutually exclusive with `version`.",
    )
    version: str | None = Field(
        default=None,
        max_length=REGISTRY_TEXT_CHARS,
        description="Source B: explicit semver to pull. Mutually exclusive with `tag`.",
    )
    worker: str | None = Field(
        default=None,
        max_length=REGISTRY_TEXT_CHARS,
        description="Source B: workers registry name. Pair with exactly one of `version` / `tag`.",
    )


class RegistryDownloadInput(Request):
    model_config = ConfigDict(json_schema_extra={"description": (
        "Input for `directory::skills::download_from_registry`. The required `worker` "
        "field is what makes this function's source unambiguous at the schema level."
    )})

    tag: str | None = Field(
        default=None,
        max_length=REGISTRY_TEXT_CHARS,
        description='Registry tag to pull (e.g. `"latest"`). Mutually exclusive with `version`. '
        'Defaults to `"latest"` when neither is provided.',
    )
    version: str | None = Field(
        default=None, max_length=REGISTRY_TEXT_CHARS,
        description="Explicit semver to pull. Mutually exclusive with `tag`.",
    )
    worker: str = Field(max_length=REGISTRY_TEXT_CHARS,
                        description='Worker name in the registry (e.g. `"shell"`).')


class RepoDownloadInput(Request):
    model_config = ConfigDict(json_schema_extra={"description": (
        "Input for `directory::skills::download_from_repo`. The required `repo` + `skill` "
        "fields make this function's source unambiguous at the schema level."
    )})

    branch: str | None = Field(default=None, max_length=GIT_REF_CHARS,
                               description='Branch to clone. Defaults to `"main"`.')
    repo: str = Field(max_length=URL_CHARS,
                      description="GitHub repo URL (validated: https / ssh / git@ only).")
    skill: str = Field(
        max_length=FILE_NAME_CHARS,
        description="Subfolder under `skills/` inside the repo. Doubles as the destination "
        "namespace inside `skills_folder`."
    )


class SkippedAgent(Response):
    id: str
    owned_by: str = Field(description="The owning kit, `<handle>/<name>`.")


class DownloadOutput(Response):
    agents_skipped: list[SkippedAgent] = Field(
        description="Agent profiles the bundle ships but an installed kit owns: left as the kit "
        "wrote them (kit profiles take precedence)."
    )
    agents_written: list[str]
    namespace: str
    skills_written: list[str]
    source: Any
    system_prompts_written: list[str]


class WorkerAddedEvent(Request):
    model_config = ConfigDict(json_schema_extra={"description": (
        "`worker` trigger payload for `directory::__on_worker_added`. Only `worker` is "
        "read; declared as a struct so the function publishes a typed schema."
    )})

    worker: str | None = Field(default=None, max_length=REGISTRY_TEXT_CHARS)


class WorkerAddedAck(Response):
    ok: bool


# --- explicit downloads -----------------------------------------------------------------------


def _output(result: DownloadResult) -> DownloadOutput:
    return DownloadOutput.model_validate(result.response())


async def _run(ctx: Context, source: downloads.RepoSource | downloads.RegistrySource) -> DownloadOutput:
    if isinstance(source, downloads.RepoSource):
        result = await downloads.download_repo(ctx.directory, ctx.settings, source.repo, source.skill,
                                     source.branch)
    else:
        result = await downloads.download_registry(ctx.directory, ctx.settings, source.worker,
                                         source.version, source.tag)
    for trigger_type, payload in result.events():
        ctx.emit(trigger_type, payload)
    return _output(result)


async def download(ctx: Context, req: DownloadInput) -> DownloadOutput:
    source = downloads.validate_download_request(
        repo=req.repo, skill=req.skill, branch=req.branch,
        worker=req.worker, version=req.version, tag=req.tag,
    )
    return await _run(ctx, source)


async def download_from_registry(ctx: Context, req: RegistryDownloadInput) -> DownloadOutput:
    """Converted to the flexible form and validated the same way (§9.1)."""
    source = downloads.validate_download_request(worker=req.worker, version=req.version, tag=req.tag)
    return await _run(ctx, source)


async def download_from_repo(ctx: Context, req: RepoDownloadInput) -> DownloadOutput:
    """Converted to the flexible form and validated the same way (§9.1)."""
    source = downloads.validate_download_request(repo=req.repo, skill=req.skill, branch=req.branch)
    return await _run(ctx, source)


# --- auto-download ----------------------------------------------------------------------------


class AutoDownloader:
    """Worker-add downloads and the boot reconcile, with one in-flight guard per worker."""

    RECONCILE_DELAY_S = 2.0
    COMPOSE_TIMEOUT_S = 10.0
    COMPOSE_ATTEMPTS = 6
    BACKOFF_STEP_S = 2.0

    def __init__(self, directory: Runtime) -> None:
        self.directory = directory
        self.in_flight: set[str] = set()
        self.task: asyncio.Task[None] | None = None

    @property
    def enabled(self) -> bool:
        """`auto_download` as it was at boot (a topology field)."""
        return self.directory.boot_settings.auto_download

    async def auto_download(self, worker: str) -> bool:
        """Download `worker`'s bundle at tag `latest`; True when it was installed. Never
        raises: a 404 is benign, other failures are logged."""
        problem = worker_name_problem(worker)
        if problem:
            log.warning("auto-download skipped: %s", problem)
            return False
        if worker in self.in_flight:
            log.info("auto-download of %s already in flight; skipped", worker)
            return False
        self.in_flight.add(worker)
        try:
            result = await downloads.download_registry(self.directory, self.directory.settings, worker,
                                             tag="latest")
        except DirectoryError as exc:
            if exc.code == "D310":
                log.info("auto-download: %s has no published skills bundle", worker)
            else:
                log.warning("auto-download of %s failed: %s", worker, exc.message)
            return False
        except Exception:  # noqa: BLE001 - an auto-download never breaks its caller
            log.exception("auto-download of %s failed", worker)
            return False
        finally:
            self.in_flight.discard(worker)
        log.info("auto-downloaded %s: %d skill file(s), %d system prompt(s), %d profile(s)",
                 worker, len(result.skills_written), len(result.system_prompts_written),
                 len(result.agents_written))
        self.directory.service(InstalledWorkers).invalidate()
        return True

    async def _containers(self) -> list[str]:
        """Container names from `compose::status` (retried with a growing back-off)."""
        payload, namespace = compose_route()
        for attempt in range(1, self.COMPOSE_ATTEMPTS + 1):
            try:
                answer = await self.directory.engine.call(
                    "compose::status", payload, timeout=self.COMPOSE_TIMEOUT_S,
                    namespace=namespace,
                )
            except Exception as exc:  # noqa: BLE001
                log.info("reconcile: compose::status attempt %d failed: %s", attempt, exc)
            else:
                names = parse_installed(answer)
                if names is not None:
                    self.directory.service(InstalledWorkers).remember(names)
                    return sorted(names)
                log.info("reconcile: compose::status answered an unknown shape")
            if attempt < self.COMPOSE_ATTEMPTS:
                await anyio.sleep(self.BACKOFF_STEP_S * attempt)
        return []

    async def reconcile(self, settings: Settings | None = None) -> list[str]:
        """Download every missing bundle — the engine namespace `iii` first (before asking
        Compose, so a slow Compose never delays it), then the compose containers by name;
        returns the names that were installed."""
        settings = settings or self.directory.settings
        installed: list[str] = []

        async def consider(name: str) -> None:
            if worker_name_problem(name):
                return
            if (local_skills_root(settings) / name).is_dir():
                return
            if has_marker(skills_root(settings), name):
                return
            if await self.auto_download(name):
                installed.append(name)

        await consider(ENGINE_NAMESPACE)
        for name in await self._containers():
            if name != ENGINE_NAMESPACE:
                await consider(name)
        if installed:
            self.directory.service(InstalledWorkers).invalidate()
        return installed

    async def _reconcile_later(self) -> None:
        try:
            await anyio.sleep(self.RECONCILE_DELAY_S)
            installed = await self.reconcile()
            log.info("boot reconcile done; installed %s", installed or "nothing")
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("boot reconcile failed")

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(
                self._reconcile_later(), name="iii-directory boot reconcile"
            )

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass


async def on_worker_added(ctx: Context, req: WorkerAddedEvent) -> WorkerAddedAck:
    worker = (req.worker or "").strip()
    downloader = ctx.directory.service(AutoDownloader)
    if not worker:
        log.debug("worker-added event without a worker name; skipped")
    elif not downloader.enabled:
        log.info("worker-added event for %s ignored: auto_download is off", worker)
    else:
        await downloader.auto_download(worker)
    return WorkerAddedAck(ok=True)


async def start_reconcile(directory: Runtime) -> None:
    """Start hook: schedule the boot reconcile when `auto_download` was on at boot."""
    downloader = directory.service(AutoDownloader)
    if downloader.enabled and not directory.engine.standalone:
        downloader.start()


async def stop_reconcile(directory: Runtime) -> None:
    await directory.service(AutoDownloader).stop()


# --- table ------------------------------------------------------------------------------------

SURFACE = Surface(
    functions=(
        FunctionSpec(
            id="directory::skills::download",
            description="Download skills into skills_folder from exactly one source: {repo, skill, "
            "branch?} clones a GitHub skill folder; {worker, version?|tag?} pulls from the workers "
            "registry. Prefer the explicit download_from_registry / download_from_repo.",
            request=DownloadInput,
            response=DownloadOutput,
            handler=download,
            metadata=tool_label("Download skills"),
        ),
        FunctionSpec(
            id="directory::skills::download_from_registry",
            description="Download one worker's directory bundle from the workers registry into "
            "skills_folder. `worker` is required; pass `version` (exact semver) or `tag` (default "
            '"latest"), not both. Files are overwritten file-by-file.',
            request=RegistryDownloadInput,
            response=DownloadOutput,
            handler=download_from_registry,
            metadata=tool_label("Download skills (registry)"),
        ),
        FunctionSpec(
            id="directory::skills::download_from_repo",
            description="Download one skill folder from a GitHub repo into skills_folder: `repo` "
            "(https/ssh/git@ URL) and `skill` (subfolder under `skills/`, also the destination "
            'namespace) are required; `branch` defaults to "main".',
            request=RepoDownloadInput,
            response=DownloadOutput,
            handler=download_from_repo,
            metadata=tool_label("Download skills (repo)"),
        ),
        FunctionSpec(
            id=WORKER_ADDED,
            description="Internal: auto-download skills on worker add event.",
            request=WorkerAddedEvent,
            response=WorkerAddedAck,
            handler=on_worker_added,
            metadata={"internal": True},
        ),
    ),
    bindings=(
        BindingSpec(
            key="downloads.worker-added",
            trigger_type=WORKER_TRIGGER,
            function_id=WORKER_ADDED,
            config=lambda _settings: dict(WORKER_BINDING_CONFIG),
            enabled=lambda settings: settings.auto_download,
        ),
    ),
    on_start=(start_reconcile,),
    on_stop=(stop_reconcile,),
)
