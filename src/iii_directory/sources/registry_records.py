"""What the registry client reports and builds (docs/rules/surfaces.md §9.3, §10.1–§10.2): its
coded failures (`RegistryFailure`, D320 / D310), worker-name checks, the normalised worker and page
shapes, the `directory::registry::workers::info` card and the D311 / D310 errors of `info`. Pure
functions over decoded JSON; `registry.RegistryClient` does the fetching, caching and single flight."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import DirectoryError, invalid_input, not_found
from ..exclusions import is_excluded

WORKER_LIST_NEXT: tuple[tuple[str, str], ...] = (
    ("directory::registry::workers::list", "browse worker names"),
)
RETRY_NEXT = " Next: retry shortly."
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""A registry answer larger than this is refused (D320) instead of filling memory."""
_WORKER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\Z")
_WORKER_NAME_START = re.compile(r"^[a-z0-9]")

# --------------------------------------------------------------------------------------------
# Errors


class RegistryFailure(DirectoryError):
    """A registry call that failed.

    `kind` is one of `unreachable` (connection error or timeout), `status` (non-2xx other than
    404), `not_found` (404), `decode` (undecodable body) or `too_large`; `status` is the HTTP
    status when there was one; `reason` is a short technical cause for logs (never sent).
    """

    def __init__(self, code: str, message: str, *, kind: str, status: int | None = None,
                 reason: str = "") -> None:
        super().__init__(code, message)
        self.kind = kind
        self.status = status
        self.reason = reason


class RegistryNotFound(RegistryFailure):
    """The registry answered 404; callers re-word it for what they asked for."""


def unreachable(reason: str) -> RegistryFailure:
    return RegistryFailure(
        "D320", "D320 registry_error: could not reach the registry." + RETRY_NEXT,
        kind="unreachable", reason=reason,
    )


def bad_status(status: int) -> RegistryFailure:
    return RegistryFailure(
        "D320", f"D320 registry_error: registry returned HTTP {status}." + RETRY_NEXT,
        kind="status", status=status, reason=f"HTTP {status}",
    )


def undecodable(reason: str, status: int | None = None) -> RegistryFailure:
    return RegistryFailure(
        "D320", "D320 registry_error: could not decode the registry response.",
        kind="decode", status=status, reason=reason,
    )


def too_large(status: int | None) -> RegistryFailure:
    return RegistryFailure(
        "D320",
        f"D320 registry_error: the registry response is larger than {MAX_RESPONSE_BYTES} bytes."
        + RETRY_NEXT,
        kind="too_large", status=status, reason="response too large",
    )


def missing(status: int = 404) -> RegistryNotFound:
    return RegistryNotFound(
        "D310", "D310 not_found: the registry has no such resource.",
        kind="not_found", status=status, reason=f"HTTP {status}",
    )


# --------------------------------------------------------------------------------------------
# Worker names (docs/rules/surfaces.md §9.3 step 1)


def worker_name_problem(name: str) -> str | None:
    """The bare reason a registry worker name is invalid, or None when `^[a-z0-9][a-z0-9_-]*$`
    holds."""
    if not name:
        return "worker name must be non-empty"
    if not _WORKER_NAME_START.match(name):
        return f'worker name must start with a lowercase ASCII letter or digit: "{name}"'
    if not _WORKER_NAME.match(name):
        return f"worker name may only contain lowercase letters, digits, '-', '_': \"{name}\""
    return None


def info_name_error(name: str) -> DirectoryError | None:
    """The D311 error of `workers::info` for a bad name (docs/rules/surfaces.md §10.2), or None."""
    if not name:
        return invalid_input(
            "D311", "registry worker name must be non-empty.", next_steps=WORKER_LIST_NEXT
        )
    if not _WORKER_NAME_START.match(name):
        reason = "it must start with a lowercase ASCII letter or digit"
    elif not _WORKER_NAME.match(name):
        reason = "it may only contain lowercase letters, digits, '-' and '_'"
    else:
        return None
    shown = json.dumps(name, ensure_ascii=False)
    return invalid_input(
        "D311", f"registry worker name {shown} is invalid: {reason}.",
        next_steps=WORKER_LIST_NEXT,
    )


def version_selector(version: str | None, tag: str | None) -> tuple[str, str]:
    """`("version", v)` or `("tag", t)`; neither ⇒ tag `latest`; both ⇒ bare error."""
    if version is not None and tag is not None:
        raise DirectoryError.plain("specify either version OR tag, not both")
    if version is not None:
        return "version", version
    return "tag", tag if tag is not None else "latest"


# --------------------------------------------------------------------------------------------
# Shapes (docs/rules/surfaces.md §10.1)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def normalize_author(raw: Any) -> dict[str, Any] | None:
    """`{name, pfp, verified}` or None; `verified` from `verified`, else `is_verified`."""
    if not isinstance(raw, Mapping):
        return None
    verified = raw.get("verified")
    if not isinstance(verified, bool):
        verified = raw.get("is_verified")
    return {
        "name": _text(raw.get("name")),
        "pfp": _text(raw.get("pfp")),
        "verified": verified if isinstance(verified, bool) else False,
    }


def normalize_worker(raw: Any) -> dict[str, Any] | None:
    """One Worker envelope with the documented defaults; None when there is no `name`."""
    if not isinstance(raw, Mapping):
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        return None
    version = _text(raw.get("version")) or _text(raw.get("latest_version"))
    targets = raw.get("supported_targets")
    downloads = raw.get("total_downloads")
    dependencies = []
    for dep in raw.get("dependencies") or []:
        if isinstance(dep, Mapping) and isinstance(dep.get("name"), str):
            dep_version = dep.get("version")
            if isinstance(dep_version, (int, float)) and not isinstance(dep_version, bool):
                dep_version = str(dep_version)
            if isinstance(dep_version, str):
                dependencies.append({"name": dep["name"], "version": dep_version})
    config = raw.get("config")
    worker: dict[str, Any] = {
        "name": name,
        "description": _text(raw.get("description")),
        "type": _text(raw.get("type")),
        "version": version,
        "repo": _text(raw.get("repo")),
        "config": config if config is not None else {},
        "supported_targets": [t for t in targets if isinstance(t, str)]
        if isinstance(targets, list) else [],
        "total_downloads": downloads
        if isinstance(downloads, int) and not isinstance(downloads, bool) and downloads >= 0
        else 0,
        "dependencies": dependencies,
        "author": normalize_author(raw.get("author")),
    }
    image = _text(raw.get("image"))
    if image is not None:
        worker["image"] = image
    return worker


def normalize_page(body: Any) -> dict[str, Any]:
    """`{workers, pagination}`: nameless rows dropped, missing pagination defaulted."""
    if not isinstance(body, Mapping):
        raise undecodable("worker list is not an object")
    rows = body.get("workers")
    workers = [w for w in (normalize_worker(r) for r in rows) if w is not None] \
        if isinstance(rows, list) else []
    raw_page = body.get("pagination")
    page = raw_page if isinstance(raw_page, Mapping) else {}
    size = page.get("page_size")
    return {
        "workers": workers,
        "pagination": {
            "next_cursor": _text(page.get("next_cursor")),
            "has_more": page.get("has_more") if isinstance(page.get("has_more"), bool) else False,
            "page_size": size if isinstance(size, int) and not isinstance(size, bool)
            and size >= 0 else 0,
        },
    }


# --------------------------------------------------------------------------------------------
# The card (docs/rules/surfaces.md §10.2)

def worker_detail(body: Any) -> dict[str, Any]:
    """`body.worker` when it is an object, else the body itself (flat payload)."""
    if not isinstance(body, Mapping):
        raise undecodable("worker detail is not an object")
    inner = body.get("worker")
    return dict(inner) if isinstance(inner, Mapping) else dict(body)


def api_entries(detail: Mapping[str, Any], body: Mapping[str, Any], key: str) -> list[Any]:
    """`api_reference.<key>` of the detail (or the body), else a top-level `<key>` list."""
    for holder in (detail, body):
        ref = holder.get("api_reference")
        if isinstance(ref, Mapping) and isinstance(ref.get(key), list):
            return list(ref[key])
    for holder in (detail, body):
        if isinstance(holder.get(key), list):
            return list(holder[key])
    return []


def _entry_name(entry: Mapping[str, Any]) -> str | None:
    for key in ("name", "function_id", "id"):
        value = entry.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def card_rows(entries: list[Any], *, functions: bool) -> list[dict[str, Any]]:
    """Public `{name, description}` rows: schemas and metadata dropped, internal entries (and,
    for functions, search-excluded ids) left out."""
    rows = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        name = _entry_name(entry)
        if name is None:
            continue
        metadata = entry.get("metadata")
        if functions and is_excluded(name, metadata):
            continue
        if not functions and isinstance(metadata, Mapping) and metadata.get("internal") is True:
            continue
        rows.append({"name": name, "description": _text(entry.get("description"))})
    return rows


def skills_tree(skills_body: Any) -> dict[str, Any]:
    """`{skills: [{path}]}` from a skills payload (contents dropped)."""
    entries = skills_body.get("skills") if isinstance(skills_body, Mapping) else None
    paths = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
            paths.append({"path": entry["path"]})
    return {"skills": paths}


def build_card(record: Mapping[str, Any], name: str, *, readme: bool) -> dict[str, Any]:
    body = record["body"]
    detail = record["detail"]
    worker = normalize_worker(detail) or normalize_worker({**detail, "name": name})
    assert worker is not None
    card: dict[str, Any] = {
        "worker": worker,
        "api_reference": {
            "functions": card_rows(api_entries(detail, body, "functions"), functions=True),
            "triggers": card_rows(api_entries(detail, body, "triggers"), functions=False),
        },
        "skills_tree": skills_tree(record["skills"]),
    }
    if readme:
        text = _text(detail.get("readme")) or _text(body.get("readme"))
        if text is not None:
            card["readme"] = text
    return card




def not_found_worker(name: str, explicit_value: str | None) -> DirectoryError:
    """D310 of `workers::info`: the worker, or the asked-for version or tag, is unknown."""
    if explicit_value is None:
        return not_found("D310", "registry worker", name, next_steps=WORKER_LIST_NEXT)
    shown = json.dumps(name, ensure_ascii=False)
    version = json.dumps(explicit_value, ensure_ascii=False)
    message = (
        f"D310 not_found: registry worker {shown} has no version or tag {version}."
        " Next: call directory::registry::workers::list to browse worker names."
    )
    return DirectoryError("D310", message)
