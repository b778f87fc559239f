"""Surface `kits`: `directory::download-kit`, `directory::kits::*` and the trigger type
`directory::kits::on-change` (docs/rules/kits.md §8–§10).

Request models and handlers only; the flows live in `iii_directory.kits.service`.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from pydantic import Field

from ..context import Context
from ..kits.clock import FIRST_CHECK_DELAY_S, UPDATE_INTERVAL_S
from ..kits.events import KITS_ON_CHANGE
from ..models import Empty, OptionalText, Request
from ..request_bounds import ID_CHARS, LABEL_CHARS, REGISTRY_TEXT_CHARS
from ..table import FunctionSpec, Surface, TriggerTypeSpec, tool_label

InstallPath = Annotated[str, Field(max_length=ID_CHARS)]
"""An install path inside a kit (`agents/<id>.md`, `skills/…`)."""
Choice = Annotated[str, Field(max_length=LABEL_CHARS)]
WorkerName = Annotated[str, Field(max_length=REGISTRY_TEXT_CHARS)]

if TYPE_CHECKING:  # the kit flows and their result models load with the first kits call
    from ..kits.records import (
        CheckUpdatesResult,
        DiffResult,
        DiscardResult,
        FlowResult,
        GetResult,
        IgnoreResult,
        ListResult,
        PlanResult,
    )
    from ..kits.service import KitsService, Session
    from ..runtime import Runtime

RECORDS = "iii_directory.kits.records"
"""The result models (`FunctionSpec.response` names them; the kit flows build them)."""


def _session(ctx: Context) -> Session:
    from ..kits.service import Session, engine_caller

    return Session(settings=ctx.settings, call=engine_caller(ctx.call))


def _service(ctx: Context) -> KitsService:
    from ..kits.service import KitsService

    return ctx.directory.service(KitsService)


# ---------------------------------------------------------------------------------------------
# Requests

KIT_ID_TEXT = "Installed kit, `<author>/<kit>`."


class DownloadKitRequest(Request):
    kit: str = Field(
        max_length=ID_CHARS,
        description=(
            "`<author>/<kit>`, optionally `@<version|tag|range>` (default: the installed kit's "
            "`requested`, else `latest`)."
        )
    )
    apply: bool | None = Field(
        None,
        description=(
            "Apply right away when the plan has no warnings, no blocking issue and no file that "
            "needs a decision (for scripts). Otherwise the plan waits for review."
        ),
    )


class MergedDecision(Request):
    choice: Choice
    content: str | None = None


class ApplyRequest(Request):
    plan_id: str = Field(max_length=LABEL_CHARS)
    decisions: dict[InstallPath, Choice | MergedDecision] | None = Field(
        None,
        description=(
            'Per-file choices by install path: `"overwrite" | "keep" | "kit" | "mine" | "merged" | '
            '"remove"`, or `{ "choice": "merged", "content": "…" }`. Files left out take the '
            "plan's `default`."
        ),
    )
    remove_workers: list[WorkerName] | None = Field(
        None,
        description=(
            "Workers the kit no longer declares (update) or declares (removal) to remove from "
            "the compose file. Never removed otherwise."
        ),
    )


class PlanUpdateRequest(Request):
    kit: str = Field(max_length=ID_CHARS, description=KIT_ID_TEXT)
    version: OptionalText = Field(
        None, max_length=REGISTRY_TEXT_CHARS,
        description="Target version, tag or range (default: what the kit was installed with).",
    )


class KitRequest(Request):
    kit: str = Field(max_length=ID_CHARS, description=KIT_ID_TEXT)


class PlanIdRequest(Request):
    plan_id: str = Field(max_length=LABEL_CHARS)


class PlanRequest(Request):
    plan_id: str = Field(max_length=LABEL_CHARS)
    contents: bool | None = Field(
        None, description="Include file bodies (`blobs` by sha256, `ours` and `merged` by path)."
    )


class GetRequest(Request):
    kit: str = Field(max_length=ID_CHARS, description=KIT_ID_TEXT)
    registry: bool | None = Field(
        None, description="Also fetch the installed version's registry detail and README."
    )


class DiffRequest(Request):
    kit: str = Field(max_length=ID_CHARS, description=KIT_ID_TEXT)
    path: str = Field(
        max_length=ID_CHARS,
        description="Install path from `directory::kits::get` (`agents/<id>.md`, `skills/…`)."
    )


class IgnoreRequest(Request):
    kit: str = Field(max_length=ID_CHARS, description=KIT_ID_TEXT)
    version: str = Field(max_length=REGISTRY_TEXT_CHARS, description="Version to skip in update checks.")
    ignore: bool | None = Field(
        None, description="`false` takes the version back off the list (default `true`)."
    )


class CheckUpdatesRequest(Request):
    kit: OptionalText = Field(
        None, max_length=ID_CHARS,
        description="Check only this installed kit (default: every installed kit).",
    )


# ---------------------------------------------------------------------------------------------
# Handlers


async def download_kit(ctx: Context, req: DownloadKitRequest) -> FlowResult:
    return await _service(ctx).download_kit(_session(ctx), req.kit, bool(req.apply))


async def apply(ctx: Context, req: ApplyRequest) -> FlowResult:
    from ..kits.apply import GivenDecision

    decisions = None
    if req.decisions is not None:
        decisions = {
            path: GivenDecision(value) if isinstance(value, str) else GivenDecision(value.choice, value.content)
            for path, value in req.decisions.items()
        }
    return await _service(ctx).apply(_session(ctx), req.plan_id, decisions, req.remove_workers)


async def plan_update(ctx: Context, req: PlanUpdateRequest) -> FlowResult:
    return await _service(ctx).plan_update(_session(ctx), req.kit, req.version)


async def remove(ctx: Context, req: KitRequest) -> FlowResult:
    return await _service(ctx).remove(_session(ctx), req.kit)


async def discard(ctx: Context, req: PlanIdRequest) -> DiscardResult:
    return _service(ctx).discard(req.plan_id)


async def list_kits(ctx: Context, _req: Empty) -> ListResult:
    return _service(ctx).list(ctx.settings)


async def get(ctx: Context, req: GetRequest) -> GetResult:
    return await _service(ctx).get(ctx.settings, req.kit, bool(req.registry))


async def diff(ctx: Context, req: DiffRequest) -> DiffResult:
    return await _service(ctx).diff(ctx.settings, req.kit, req.path)


async def plan(ctx: Context, req: PlanRequest) -> PlanResult:
    return _service(ctx).plan(req.plan_id, bool(req.contents))


async def ignore(ctx: Context, req: IgnoreRequest) -> IgnoreResult:
    return _service(ctx).ignore(req.kit, req.version, req.ignore is not False)


async def check_updates(ctx: Context, req: CheckUpdatesRequest) -> CheckUpdatesResult:
    return await _service(ctx).check_updates(ctx.settings, req.kit)


# ---------------------------------------------------------------------------------------------
# Background


FLOWS_MODULE = "iii_directory.kits.service"
FLOWS_IMPORT_DELAY_S = 5.0
"""How long after start the kit flows are imported for the update schedule, when nothing has
imported them yet. Importing them (~0.2-0.4 s of module code, even on a worker thread it shares
the GIL) right after registration slowed a cold worker's first calls; the first scheduled check
runs 15 s after start anyway, and keeps that time."""

_deferred: weakref.WeakKeyDictionary[Any, asyncio.Task[None]] = weakref.WeakKeyDictionary()


def _flows_loaded() -> ModuleType | None:
    return sys.modules.get(FLOWS_MODULE)


def _schedule(directory: Runtime, flows: ModuleType, waited_s: float) -> None:
    service = directory.service(flows.KitsService)
    service.first_check_delay_s = max(0.0, service.first_check_delay_s - waited_s)
    service.spawn(service.scheduled_checks(), "scheduled-checks", daemon=True)


def _kits_listed() -> bool:
    """Whether the project's `kits.lock` lists a kit (the lenient reader the scheduled check uses)."""
    from ..content.kits_lock import kit_root, read_lock

    return bool(read_lock(kit_root()).kits)


def _pause(waited_s: float) -> float:
    """Until the scheduled check's next time, `waited_s` after start: the first check at
    `FIRST_CHECK_DELAY_S`, then every `UPDATE_INTERVAL_S`."""
    if waited_s < FIRST_CHECK_DELAY_S:
        return FIRST_CHECK_DELAY_S - waited_s
    return UPDATE_INTERVAL_S


async def start_update_checks(directory: Runtime) -> None:
    """Schedule the boot-time and six-hourly update check (docs/rules/kits.md §9.1): at once when the kit
    flows are loaded, else after `FLOWS_IMPORT_DELAY_S`, importing them on a worker thread. The
    check does nothing while `kits.lock` lists no kit, so until one is listed (or the flows are
    imported by a kit call) the flows are not imported: the lock is read at each of the check's
    times instead, and the flows' schedule starts with the time already waited."""
    flows = _flows_loaded()
    if flows is not None:
        _schedule(directory, flows, 0.0)
        return

    async def deferred() -> None:
        waited = FLOWS_IMPORT_DELAY_S
        await anyio.sleep(waited)
        while _flows_loaded() is None and not await anyio.to_thread.run_sync(_kits_listed):
            pause = _pause(waited)
            await anyio.sleep(pause)
            waited += pause
        module = await anyio.to_thread.run_sync(importlib.import_module, FLOWS_MODULE)
        _schedule(directory, module, waited)

    _deferred[directory] = asyncio.get_running_loop().create_task(deferred(), name="kits:import")


async def stop(directory: Runtime) -> None:
    pending = _deferred.pop(directory, None)
    if pending is not None and not pending.done():
        pending.cancel()
    flows = _flows_loaded()
    if flows is None:  # never imported: no kit service ran
        return
    await directory.service(flows.KitsService).stop()



SURFACE = Surface(
    functions=(
        FunctionSpec(
            id="directory::download-kit",
            description=(
                "Plan the install of a kit — agent profiles, skills and registry workers published "
                "as <author>/<kit>[@version|tag|range] — without writing anything; an installed kit "
                "gets an update plan. The plan lists every file, collisions with existing profiles "
                "(kit profiles win, with a warning), worker changes and the functions the profiles "
                "preload. Review it in the ADE (Directory → Kits) or apply it with "
                "directory::kits::apply plan_id=…. apply=true applies at once only when the plan "
                "has no warnings, blocks or pending decisions."
            ),
            request=DownloadKitRequest, response=f"{RECORDS}:FlowResult", handler=download_kit,
            metadata=tool_label("Download kit"),
        ),
        FunctionSpec(
            id="directory::kits::apply",
            description=(
                "Apply a kit plan from directory::download-kit / plan-update / remove: re-checks the "
                "project, downloads the kit (counted), adds or moves its workers through Compose, "
                "writes the files atomically and records kits.lock last. decisions maps install "
                "paths to overwrite|keep|kit|mine|merged|remove (or {choice: merged, content}); "
                "files left out take the plan's default. If the project changed since the plan, "
                "nothing is applied and a fresh plan comes back (status replanned)."
            ),
            request=ApplyRequest, response=f"{RECORDS}:FlowResult", handler=apply,
            metadata=tool_label("Apply kit plan"),
        ),
        FunctionSpec(
            id="directory::kits::check-updates",
            description=(
                "Ask the registry whether installed kits (or one) have a newer release matching "
                "what they were installed with. Ignored versions are skipped. Also runs at boot "
                "and every 6 hours."
            ),
            request=CheckUpdatesRequest, response=f"{RECORDS}:CheckUpdatesResult", handler=check_updates,
        ),
        FunctionSpec(
            id="directory::kits::diff",
            description=(
                "The two sides of an installed kit file: `base` (what the kit installed, from the "
                "registry) and `local` (the file on disk), for a \"view my changes\" diff."
            ),
            request=DiffRequest, response=f"{RECORDS}:DiffResult", handler=diff,
        ),
        FunctionSpec(
            id="directory::kits::discard",
            description="Discard a pending kit plan.",
            request=PlanIdRequest, response=f"{RECORDS}:DiscardResult", handler=discard,
            metadata=tool_label("Discard kit plan"),
        ),
        FunctionSpec(
            id="directory::kits::get",
            description=(
                "One installed kit: every file with its state (intact, edited, missing, skipped), "
                "its workers as Compose has them, and with registry=true the installed version's "
                "detail and README."
            ),
            request=GetRequest, response=f"{RECORDS}:GetResult", handler=get,
        ),
        FunctionSpec(
            id="directory::kits::ignore",
            description=(
                "Skip (or, with ignore=false, stop skipping) one version of an installed kit in "
                "update checks; recorded in kits.lock ignored_versions."
            ),
            request=IgnoreRequest, response=f"{RECORDS}:IgnoreResult", handler=ignore,
            metadata=tool_label("Ignore kit version"),
        ),
        FunctionSpec(
            id="directory::kits::list",
            description=(
                "Installed kits (version, file states, worker ranges, available update) and the "
                "plans waiting for review. `attention` counts both."
            ),
            request=Empty, response=f"{RECORDS}:ListResult", handler=list_kits,
        ),
        FunctionSpec(
            id="directory::kits::plan",
            description=(
                "Read a pending kit plan, with contents=true the file bodies it refers to (kit "
                "blobs by sha256, local files and merge results by install path)."
            ),
            request=PlanRequest, response=f"{RECORDS}:PlanResult", handler=plan,
        ),
        FunctionSpec(
            id="directory::kits::plan-update",
            description=(
                "Plan the update of an installed kit to `version` (default: the newest release "
                "matching what it was installed with). Files you edited are merged three-way; "
                "conflicts need a decision before directory::kits::apply."
            ),
            request=PlanUpdateRequest, response=f"{RECORDS}:FlowResult", handler=plan_update,
            metadata=tool_label("Plan kit update"),
        ),
        FunctionSpec(
            id="directory::kits::remove",
            description=(
                "Plan the removal of an installed kit: its files (edited ones are kept unless "
                "chosen) and, only if ticked in apply's remove_workers, its workers. Apply with "
                "directory::kits::apply."
            ),
            request=KitRequest, response=f"{RECORDS}:FlowResult", handler=remove,
            metadata=tool_label("Plan kit removal"),
        ),
    ),
    trigger_types=(
        TriggerTypeSpec(
            id=KITS_ON_CHANGE,
            description=(
                "Fires when kit state changes: a plan is created or discarded ({ op: \"plan\" | "
                "\"discard\", kit, plan_id }), an apply makes progress or finishes ({ op: "
                "\"progress\", plan_id, steps } / { op: \"apply\", kit, plan_id }), or an update "
                "check finds a different set of available updates ({ op: \"updates\" })."
            ),
        ),
    ),
    on_start=(start_update_checks,),
    on_stop=(stop,),
)
