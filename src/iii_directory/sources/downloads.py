"""The two download flows: a registry bundle and a repo skill folder (docs/rules/surfaces.md §9.1–§9.5).

* `download_registry(directory, settings, worker, version=None, tag=None)` — validate the worker
  name, `GET /w/{worker}/skills?version=<v>` (version and tag both travel as `version=`), plan
  and write the bundle, then write the completion marker. A 404 raises the explicit-download
  D310; the auto-download catches it as a benign no-op.
* `download_repo(directory, settings, repo, skill, branch)` — validate, clone shallowly into a
  temporary directory, plan and write `skills/<skill>/`; no marker.
* `validate_download_request(...)` — the shared argument rules of `directory::skills::download`.

Both return a `DownloadResult`; they never fire events (the explicit functions do, via
`DownloadResult.events()`; auto-downloads do not). Kits call `download_registry` for the workers
a kit adds (kit-owned agent profiles are skipped through `kits.lock`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from ..content.markers import CompletionMarker, write_marker
from ..content.roots import skills_root
from ..errors import DirectoryError
from .bundle import DownloadResult, apply_plan, plan_registry_bundle, plan_repo_tree
from .git import (
    branch_problem,
    load_gitpython,
    repo_url_problem,
    shallow_clone,
    skill_name_problem,
)
from .registry import RegistryClient
from .registry_records import (
    WORKER_LIST_NEXT,
    RegistryNotFound,
    version_selector,
    worker_name_problem,
)

if TYPE_CHECKING:
    from ..config import Settings
    from ..runtime import Runtime

log = logging.getLogger(__name__)

DEFAULT_BRANCH = "main"


# --------------------------------------------------------------------------------------------
# Arguments (§9.1)


@dataclass(frozen=True)
class RepoSource:
    repo: str
    skill: str
    branch: str


@dataclass(frozen=True)
class RegistrySource:
    worker: str
    version: str | None
    tag: str | None


def _present(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


def validate_download_request(
    repo: str | None = None,
    skill: str | None = None,
    branch: str | None = None,
    worker: str | None = None,
    version: str | None = None,
    tag: str | None = None,
) -> RepoSource | RegistrySource:
    """Pick the source of a download request; bare errors for every bad combination."""
    repo, skill, branch = _present(repo), _present(skill), _present(branch)
    worker, version, tag = _present(worker), _present(version), _present(tag)
    repo_group = repo is not None or skill is not None or branch is not None
    registry_group = worker is not None or version is not None or tag is not None
    if repo_group and registry_group:
        raise DirectoryError.plain(
            "specify either {repo, skill, branch?} OR {worker, version?|tag?}, not both"
        )
    if not repo_group and not registry_group:
        raise DirectoryError.plain(
            "specify either {repo, skill, branch?} OR {worker, version?|tag?}"
        )
    if repo_group:
        if repo is None:
            raise DirectoryError.plain("repo is required when skill is set")
        if skill is None:
            raise DirectoryError.plain("skill is required when repo is set")
        return RepoSource(repo, skill, branch or DEFAULT_BRANCH)
    if worker is None:
        raise DirectoryError.plain("worker is required when version or tag is set")
    if version is not None and tag is not None:
        raise DirectoryError.plain("specify either version OR tag, not both")
    return RegistrySource(worker, version, tag)


# --------------------------------------------------------------------------------------------
# Registry (§9.3)


def bundle_not_found(worker: str) -> DirectoryError:
    """D310 of an explicit registry download whose worker has no published bundle."""
    steps = "".join(f" Next: call {fn} to {why}." for fn, why in WORKER_LIST_NEXT)
    return DirectoryError(
        "D310", f'D310 not_found: registry worker "{worker}" has no published skills bundle.{steps}'
    )


def owned_agents_from_lock() -> dict[str, str]:
    """Agent id → owning kit from `kits.lock`, read leniently (unreadable ⇒ none)."""
    from ..content.kits_lock import read_lock

    return read_lock().owned_agents()


async def download_registry(
    directory: Runtime,
    settings: Settings,
    worker: str,
    version: str | None = None,
    tag: str | None = None,
    *,
    owned_agents: Mapping[str, str] | None = None,
) -> DownloadResult:
    """Install `worker`'s registry bundle into `<skills_folder>/<worker>/` (+ agent profiles)
    and write its completion marker."""
    problem = worker_name_problem(worker)
    if problem:
        raise DirectoryError.plain(problem)
    kind, value = version_selector(version, tag)
    root = skills_root(settings)
    root.mkdir(parents=True, exist_ok=True)
    client = directory.service(RegistryClient)
    try:
        payload = await client.skills_bundle(settings, worker, value)
    except RegistryNotFound:
        raise bundle_not_found(worker) from None
    owned = dict(owned_agents) if owned_agents is not None else owned_agents_from_lock()
    agents_root = settings.path("agents_folder")
    plan = await anyio.to_thread.run_sync(
        plan_registry_bundle, payload, worker, root, agents_root, owned
    )
    await anyio.to_thread.run_sync(apply_plan, plan, directory.self_writes)
    reported = payload.get("version") if isinstance(payload, Mapping) else None
    reported = reported if isinstance(reported, str) and reported else None
    marker = CompletionMarker(worker=worker, tag_or_version=value, version=reported,
                              agents=plan.agent_hashes)
    await anyio.to_thread.run_sync(write_marker, root, marker, directory.self_writes)
    source = {"kind": "registry", "worker": worker, kind: value}
    return DownloadResult.from_plan(plan, source, reported)


# --------------------------------------------------------------------------------------------
# Repo (§9.2)


async def download_repo(directory: Runtime, settings: Settings, repo: str, skill: str,
                        branch: str = DEFAULT_BRANCH) -> DownloadResult:
    """Copy `skills/<skill>/` of `repo`@`branch` into `<skills_folder>/<skill>/`."""
    for problem in (skill_name_problem(skill), repo_url_problem(repo), branch_problem(branch)):
        if problem:
            raise DirectoryError.plain(problem)
    load_gitpython()  # no git on this host: refuse before creating anything
    root = skills_root(settings)
    root.mkdir(parents=True, exist_ok=True)
    async with shallow_clone(repo, branch, settings.download_timeout_ms) as clone:
        source = clone / "skills" / skill
        if not source.exists() and not source.is_symlink():
            raise DirectoryError.plain(
                f'repo "{repo}" has no folder skills/{skill}/ (cloned to {clone})'
            )
        if source.is_symlink() or not source.is_dir():
            raise DirectoryError.plain(f'skills/{skill} in "{repo}" is not a directory')
        plan = await anyio.to_thread.run_sync(plan_repo_tree, source, skill, root, repo)
        await anyio.to_thread.run_sync(apply_plan, plan, directory.self_writes)
    source_info = {"kind": "repo", "repo": repo, "skill": skill, "branch": branch}
    return DownloadResult.from_plan(plan, source_info)
