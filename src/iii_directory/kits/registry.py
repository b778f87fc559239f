"""The registry's kit and blob endpoints (docs/rules/kits.md §1.4, §1.6).

Transport: `sources.registry.RegistryClient` (base `registry_url`, whole-request deadline
`download_timeout_ms`, User-Agent `iii-directory/<version>`). JSON bodies are decoded
leniently (`shapes.py`). Errors, reworded for kits:

* connection failure → `D520 registry_error: could not reach the registry. Next: retry shortly.`
* other non-2xx     → `D520 registry_error: registry returned HTTP <status>. Next: retry shortly.`
* bad JSON          → `D520 registry_error: could not decode the registry response for <path>: …`

Only `download` is the counted download (used by apply); `files` serves the same bodies for
planning. Blobs are content-addressed, so successful reads are memoised for the process
lifetime.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..config import Settings
from ..errors import DirectoryError
from ..sources.registry import RegistryClient
from ..sources.registry_records import RegistryFailure, RegistryNotFound
from .ref import KitRef, VersionRef, max_satisfying
from .shapes import KitDetail, KitFiles, KitFunction, KitVersions, UpdateAnswer

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger(__name__)

_MISSING = object()
_SHA = re.compile(r"^[0-9a-fA-F]{64}\Z")
RETRY = " Next: retry shortly."


def registry_error(problem: str) -> DirectoryError:
    return DirectoryError("D520", f"D520 registry_error: {problem}")


def kit_not_found(problem: str) -> DirectoryError:
    return DirectoryError("D510", f"D510 not_found: {problem}")


def web_base(settings: Settings) -> str:
    """`registry_web_url` (trimmed of `/`) when set and non-blank, else the API base with the
    leading `api.` host label dropped (`Settings.web_url`)."""
    return settings.web_url


def kit_page(settings: Settings, kit: str) -> str:
    return f"{web_base(settings)}/kits/{kit}"


def worker_page(settings: Settings, worker: str) -> str:
    return f"{web_base(settings)}/workers/{worker}"


def ci_flag() -> bool:
    """`ci=true` when the `CI` variable is set, non-empty and not `false` / `0`."""
    value = os.environ.get("CI", "").strip()
    return bool(value) and value.lower() not in ("false", "0")


class KitRegistry:
    """The kit endpoints over the shared registry transport (`sources.registry.RegistryClient`:
    User-Agent, whole-request deadline, size cap), with kit wording for its failures (D520)
    and 404s. One per Directory (`directory.service(KitRegistry)`)."""

    def __init__(self, directory: Runtime) -> None:
        self._http: RegistryClient = directory.service(RegistryClient)
        self._blobs: dict[str, str] = {}

    async def aclose(self) -> None:
        """Nothing to release: the shared transport opens one client per request."""

    # -- transport ------------------------------------------------------------------------

    async def _call(self, settings: Settings, method: str, path: str,
                    params: dict[str, str] | None = None, body: Any = None, *,
                    raw: bool = False) -> Any:
        """JSON (or raw bytes) of a 2xx answer; `_MISSING` on 404; D520 otherwise."""
        try:
            if method == "POST":
                return await self._http.post_json(settings, path, body)
            if raw:
                return await self._http.get_bytes(settings, path, params)
            return await self._http.get_json(settings, path, params)
        except RegistryNotFound:
            return _MISSING
        except RegistryFailure as exc:
            raise _reword(exc, path) from None

    @staticmethod
    def _model(data: Any, model: type[BaseModel], where: str) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise registry_error(f"{where}: {_short(exc)}") from None

    async def _get_model(
        self, settings: Settings, path: str, model: type[BaseModel],
        params: dict[str, str] | None = None, *, key: str | None = None,
    ) -> Any | None:
        """GET a JSON body (the value under `key` when given); None on 404."""
        data = await self._call(settings, "GET", path, params)
        if data is _MISSING:
            return None
        if key is not None:
            data = data.get(key) if isinstance(data, dict) else None
            if data is None:
                return None
        return self._model(data, model, f"could not decode the registry response for {path}")

    # -- endpoints ------------------------------------------------------------------------

    async def detail(self, settings: Settings, kit: str, version: str) -> KitDetail | None:
        detail = await self._get_model(
            settings, f"/k/{kit}", KitDetail, {"version": version}, key="kit"
        )
        if detail is not None and not detail.id:
            detail = detail.model_copy(update={"id": kit})
        return detail

    async def versions(self, settings: Settings, kit: str) -> KitVersions | None:
        return await self._get_model(settings, f"/k/{kit}/versions", KitVersions)

    async def _kit_files(self, settings: Settings, kit: str, path: str, params: dict[str, str]) -> KitFiles:
        files = await self._get_model(settings, path, KitFiles, params)
        if files is None:
            raise kit_not_found(f'kit "{kit}" has no version "{params["version"]}".')
        return files

    async def files(self, settings: Settings, kit: str, version: str) -> KitFiles:
        """File bodies for planning (not a counted download)."""
        return await self._kit_files(settings, kit, f"/k/{kit}/files", {"version": version})

    async def download(self, settings: Settings, kit: str, version: str, ci: bool) -> KitFiles:
        """The counted download; only an apply calls it."""
        params = {"version": version, "ci": "true" if ci else "false"}
        return await self._kit_files(settings, kit, f"/k/{kit}/download", params)

    async def functions(self, settings: Settings, kit: str, version: str) -> list[KitFunction]:
        path = f"/k/{kit}/functions"
        data = await self._call(settings, "GET", path, {"version": version})
        if data is _MISSING:
            return []
        rows = data.get("functions") if isinstance(data, dict) else None
        where = f"could not decode the registry response for {path}"
        return [self._model(row, KitFunction, where) for row in rows or []]

    async def readme(self, settings: Settings, kit: str, version: str) -> str | None:
        data = await self._call(settings, "GET", f"/k/{kit}/readme", {"version": version}, raw=True)
        if data is _MISSING:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise registry_error("could not read the kit README.") from None

    async def compare(self, settings: Settings, kit: str, from_v: str, to_v: str) -> dict[str, Any] | None:
        """`/k/<kit>/compare` (available; the flows do not use it)."""
        data = await self._call(settings, "GET", f"/k/{kit}/compare", {"from": from_v, "to": to_v})
        return data if isinstance(data, dict) else None

    async def updates(self, settings: Settings, queries: list[dict[str, str]]) -> list[UpdateAnswer]:
        """`POST /k/updates`; not sent for an empty list."""
        if not queries:
            return []
        try:
            data = await self._http.post_json(settings, "/k/updates", {"kits": queries})
        except RegistryFailure as exc:
            if exc.kind == "decode":
                raise registry_error(f"could not decode /k/updates: {exc.reason}") from None
            if exc.kind == "not_found":
                raise registry_error("registry returned HTTP 404." + RETRY) from None
            raise _reword(exc, "/k/updates") from None
        rows = data.get("kits") if isinstance(data, dict) else None
        try:
            return [UpdateAnswer.model_validate(row) for row in rows or []]
        except ValidationError as exc:
            raise registry_error(f"could not decode /k/updates: {_short(exc)}") from None

    async def blob(self, settings: Settings, sha: str) -> str | None:
        """A blob by sha256 (64 hex characters, else None without a request); memoised.
        A body whose own sha256 differs from the one asked for is refused (None)."""
        if not _SHA.match(sha):
            return None
        key = sha.lower()
        if key in self._blobs:
            return self._blobs[key]
        data = await self._call(settings, "GET", f"/blobs/{key}", raw=True)
        if data is _MISSING:
            return None
        if hashlib.sha256(data).hexdigest() != key:
            log.warning("registry served a blob whose sha256 is not %s; ignoring it", key)
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise registry_error("could not read a blob.") from None
        self._blobs[key] = text
        return text

    # -- resolution -----------------------------------------------------------------------

    async def resolve(self, settings: Settings, ref: KitRef, version: VersionRef) -> KitDetail:
        """Resolve a reference to one version's detail (docs/rules/kits.md §1.4)."""
        kit = ref.kit
        if version.kind == "range":
            listing = await self.versions(settings, kit)
            if listing is None:
                raise _no_such_kit(kit)
            best = max_satisfying(version.value, [v.version for v in listing.versions])
            if best is None:
                raise kit_not_found(
                    f'no version of {kit} satisfies "{version.value}". '
                    "Next: open the kit's versions in the registry."
                )
            wanted = best
        else:
            wanted = version.value
        detail = await self.detail(settings, kit, wanted)
        if detail is not None:
            return detail
        if wanted != "latest" and await self.detail(settings, kit, "latest") is not None:
            raise kit_not_found(
                f'{kit} has no version or tag "{wanted}". '
                f"Next: call directory::download-kit kit={kit} for the latest release."
            )
        raise _no_such_kit(kit)


def _no_such_kit(kit: str) -> DirectoryError:
    return kit_not_found(
        f'kit "{kit}" does not exist in the registry. '
        "Next: check the <author>/<kit> spelling on the registry's kits page."
    )


def _reword(exc: RegistryFailure, path: str) -> DirectoryError:
    """A transport failure in kit wording (D520)."""
    if exc.kind == "status" and exc.status is not None:
        return registry_error(f"registry returned HTTP {exc.status}." + RETRY)
    if exc.kind == "decode":
        return registry_error(f"could not decode the registry response for {path}: {exc.reason}")
    if exc.kind == "too_large":
        return registry_error(exc.message.split("registry_error: ", 1)[-1])
    return registry_error("could not reach the registry." + RETRY)


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        return f"{loc}: {first.get('msg', 'invalid')}" if loc else str(first.get("msg", "invalid"))
    return str(exc) or exc.__class__.__name__
