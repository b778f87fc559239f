"""Test doubles for the kits subsystem.

* `KitCatalog` publishes kits on a `MockRegistry` (the real loopback HTTP registry): detail,
  versions, files, the counted download, functions, readme, blobs and `POST /k/updates`.
* `FakeComposeEngine` is an engine port whose Compose answers (and failures) are scripted.
* `team_v1()` / `team_v11()` / `team_v2()` build the checklist's fixture kit `acme/team`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from iii_directory.kits.ref import is_major_jump, max_satisfying, parse_version
from iii_directory.port import EngineCallError, StandaloneEngine
from iii_directory.testing.registry import MockRegistry, RecordedRequest, Reply


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class KitVersion:
    version: str
    files: dict[str, str]
    """source path → content"""
    workers: list[dict[str, Any]] = field(default_factory=list)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    """source path → extra AgentEntry fields (name, model, functions, …)"""
    notes: str | None = None
    deprecation: dict[str, Any] | None = None
    functions: list[dict[str, Any]] = field(default_factory=list)
    readme: str | None = None


class KitCatalog:
    """Kits served by a MockRegistry; changes are visible to the next request."""

    def __init__(self, registry: MockRegistry) -> None:
        self.registry = registry
        self.kits: dict[str, dict[str, KitVersion]] = {}
        self.tags: dict[str, dict[str, str]] = {}
        self.hidden_blobs: set[str] = set()
        self.wrong_blobs: dict[str, str] = {}
        """sha → a body served under that sha whose own hash differs."""
        self.tampered: dict[tuple[str, str], str] = {}
        """(kit, source path) → content the counted download serves instead."""
        self.updates_override: Any = None
        registry.handle("/k/updates", self._updates, method="POST")

    # -- publishing ---------------------------------------------------------------------

    def publish(self, kit: str, release: KitVersion, *, latest: bool = True) -> None:
        first = kit not in self.kits
        self.kits.setdefault(kit, {})[release.version] = release
        tags = self.tags.setdefault(kit, {})
        if latest:
            tags["latest"] = release.version
        for content in release.files.values():
            digest = sha(content)
            self.registry.handle(f"/blobs/{digest}", self._blob(digest))
        if first:
            for suffix, responder in (
                ("", self._detail), ("/versions", self._versions), ("/files", self._files),
                ("/download", self._files), ("/functions", self._functions), ("/readme", self._readme),
            ):
                self.registry.handle(f"/k/{kit}{suffix}", self._bind(kit, responder))

    def downloads(self) -> list[str]:
        """`download <version> ci=<flag>` per counted download, in order."""
        return [
            f"download {r.query.get('version')} ci={r.query.get('ci')}"
            for r in self.registry.requests if r.path.endswith("/download")
        ]

    # -- responders ---------------------------------------------------------------------

    def _bind(self, kit: str, responder: Any) -> Any:
        return lambda request: responder(kit, request)

    def _resolve(self, kit: str, wanted: str | None) -> KitVersion | None:
        wanted = wanted or "latest"
        version = self.tags.get(kit, {}).get(wanted, wanted)
        return self.kits.get(kit, {}).get(version)

    def _detail_json(self, kit: str, release: KitVersion) -> dict[str, Any]:
        handle, name = kit.split("/")
        agents, skills = [], []
        for path, content in sorted(release.files.items()):
            if path.startswith("agents/"):
                entry = {"id": path[len("agents/"):-3], "path": path, "sha256": sha(content),
                         "size_bytes": len(content.encode()), "skills": [], "functions": []}
                entry.update(release.agents.get(path, {}))
                agents.append(entry)
            elif path.startswith("skills/"):
                skills.append({"id": path[len("skills/"):-3], "path": path, "sha256": sha(content),
                               "title": path.rsplit("/", 1)[-1][:-3], "used_by": []})
        return {
            "id": kit,
            "author": {"handle": handle, "name": handle.title(), "verified": True},
            "name": name,
            "description": f"The {name} kit.",
            "tags": ["team"],
            "version": release.version,
            "license": "MIT",
            "notes": release.notes,
            "published_at": "2026-10-01T00:00:00Z",
            "release_tags": dict(self.tags.get(kit, {})),
            "counts": {"agents": len(agents), "skills": len(skills), "workers": len(release.workers)},
            "deprecation": release.deprecation,
            "workers": release.workers,
            "agents": agents,
            "skills": skills,
            "future_field": {"ignored": True},
        }

    def _detail(self, kit: str, request: RecordedRequest) -> Any:
        release = self._resolve(kit, request.query.get("version"))
        if release is None:
            return Reply(status=404, json={"error": "not found"})
        return {"kit": self._detail_json(kit, release)}

    def _versions(self, kit: str, _request: RecordedRequest) -> Any:
        return {
            "release_tags": dict(self.tags.get(kit, {})),
            "versions": [{"version": v, "tags": []} for v in self.kits.get(kit, {})],
        }

    def _files(self, kit: str, request: RecordedRequest) -> Any:
        release = self.kits.get(kit, {}).get(request.query.get("version", ""))
        if release is None:
            return Reply(status=404, json={"error": "not found"})
        counted = request.path.endswith("/download")
        files = []
        for path, content in sorted(release.files.items()):
            if counted and (kit, path) in self.tampered:
                content = self.tampered[(kit, path)]
            files.append({"path": path, "sha256": sha(content), "content": content})
        return {"version": release.version, "files": files, "workers": release.workers}

    def _functions(self, kit: str, request: RecordedRequest) -> Any:
        release = self.kits.get(kit, {}).get(request.query.get("version", ""))
        if release is None:
            return Reply(status=404, json={"error": "not found"})
        return {"functions": release.functions}

    def _readme(self, kit: str, request: RecordedRequest) -> Any:
        release = self.kits.get(kit, {}).get(request.query.get("version", ""))
        if release is None or release.readme is None:
            return Reply(status=404, json={"error": "not found"})
        return Reply(body=release.readme, headers={"Content-Type": "text/markdown"})

    def _blob(self, digest: str) -> Any:
        def answer(_request: RecordedRequest) -> Any:
            if digest in self.hidden_blobs:
                return Reply(status=404, json={"error": "not found"})
            if digest in self.wrong_blobs:
                return Reply(body=self.wrong_blobs[digest], headers={"Content-Type": "text/plain"})
            for releases in self.kits.values():
                for release in releases.values():
                    for content in release.files.values():
                        if sha(content) == digest:
                            return Reply(body=content, headers={"Content-Type": "text/plain"})
            return Reply(status=404, json={"error": "not found"})
        return answer

    def _updates(self, request: RecordedRequest) -> Any:
        if self.updates_override is not None:
            return self.updates_override
        body = json.loads(request.body or b"{}")
        answers = []
        for query in body.get("kits", []):
            kit = query["kit"]
            published = list(self.kits.get(kit, {}))
            if not published:
                answers.append({"kit": kit, "major": False, "not_found": True})
                continue
            current = parse_version(query["version"])
            requested = query["requested"]
            try:
                best = max_satisfying(requested, published)
            except ValueError:
                best = self.tags.get(kit, {}).get(requested)
            newer = best if best and current and parse_version(best).compare(current) > 0 else None
            latest = self.tags.get(kit, {}).get("latest")
            answers.append({
                "kit": kit, "current": query["version"], "available": newer, "latest": latest,
                "major": bool(newer and is_major_jump(query["version"], newer)), "not_found": False,
            })
        return {"kits": answers}


# ---------------------------------------------------------------------------------------------
# The checklist's fixture kit `acme/team`

PLANNER_V1 = (
    "---\nname: Planner\ndescription: Plans the work.\nmodel: sonnet\nfunctions:\n"
    "  - kanban::ticket::create\n---\nYou plan tickets.\n"
)
PLANNER_V2 = (
    "---\nname: Planner\ndescription: Plans the work.\nmodel: opus\nfunctions:\n"
    "  - kanban::ticket::create\n  - github::pr::create\n---\nYou plan tickets.\nYou open pull requests.\n"
)
REVIEWER = "---\nname: Reviewer\ndescription: Reviews the work.\n---\nYou review.\n"
REVIEWER_V2 = "---\nname: Reviewer\ndescription: Reviews the work carefully.\n---\nYou review.\n"
FLOW_V1 = "# Flow\n\nStep one.\nStep two.\nStep three.\n"
FLOW_V2 = "# Flow\n\nStep one.\nStep two (kit).\nStep three.\n"
LEGACY = "# Old\n\nLegacy notes.\n"
TRIAGE = "# Triage\n\nSort incoming tickets.\n"
README = "# team\n"


def team_v1() -> KitVersion:
    return KitVersion(
        version="1.0.0",
        files={
            "agents/planner.md": PLANNER_V1,
            "agents/reviewer.md": REVIEWER,
            "skills/tickets/flow.md": FLOW_V1,
            "skills/legacy/old.md": LEGACY,
            "README.md": README,
        },
        workers=[{"name": "kanban", "range": "^1.4", "resolved": "1.6.1", "type": "binary",
                  "description": "Kanban board."}],
        agents={
            "agents/planner.md": {"name": "Planner", "model": "sonnet", "functions": ["kanban::ticket::create"]},
            "agents/reviewer.md": {"name": "Reviewer"},
        },
        notes="First release.",
        functions=[{"id": "kanban::ticket::create", "used_by": ["planner"], "status": "available",
                    "worker": "kanban", "worker_version": "1.6.1"}],
        readme=README,
    )


def team_v11(*, reviewer: str = REVIEWER) -> KitVersion:
    return KitVersion(
        version="1.1.0",
        files={
            "agents/planner.md": PLANNER_V2,
            "agents/reviewer.md": reviewer,
            "skills/tickets/flow.md": FLOW_V2,
            "skills/tickets/triage.md": TRIAGE,
            "README.md": README,
        },
        workers=[
            {"name": "kanban", "range": "^1.6", "resolved": "1.6.1"},
            {"name": "github", "range": "^2.0", "resolved": "2.0.3"},
        ],
        agents={
            "agents/planner.md": {"name": "Planner", "model": "opus",
                                  "functions": ["kanban::ticket::create", "github::pr::create"]},
            "agents/reviewer.md": {"name": "Reviewer"},
        },
        notes="Planner opens pull requests.",
        functions=[
            {"id": "kanban::ticket::create", "used_by": ["planner"], "worker": "kanban"},
            {"id": "github::pr::create", "used_by": ["planner"], "worker": "github"},
        ],
        readme=README,
    )


def team_v2() -> KitVersion:
    release = team_v11()
    release.version = "2.0.0"
    release.workers = [{"name": "kanban", "range": "^2.0", "resolved": "2.1.0"}]
    release.notes = "Breaking."
    return release


class FakeComposeEngine(StandaloneEngine):
    """An engine port with a scripted Compose daemon; everything else behaves standalone."""

    standalone = False

    def __init__(self) -> None:
        super().__init__()
        self.up = True
        self.log: list[str] = []
        self.calls: list[tuple[str, Any]] = []
        self.fail: dict[str, str] = {}
        """function id → error message raised instead of answering"""
        self.outcome = "succeeded"
        self.detail = "pulled"
        self.on_call: list[Any] = []
        """Callbacks `(function_id, data)` run before each Compose answer."""

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        if not function_id.startswith("compose::"):
            return await super().call(function_id, data, **kwargs)
        self.calls.append((function_id, data))
        for hook in self.on_call:
            hook(function_id, data)
        if not self.up:
            raise EngineCallError("function_not_found", f"Function {function_id} not found")
        if function_id in self.fail:
            raise EngineCallError("compose_failed", self.fail[function_id])
        if function_id == "compose::status":
            return {"containers": []}
        if function_id in ("compose::add", "compose::remove"):
            workers = data["workers"]
            if function_id == "compose::add":
                self.log.append("compose::add " + json.dumps(workers, separators=(",", ":"), sort_keys=True))
            else:
                self.log.append("compose::remove " + " ".join(workers))
            return {"operation_id": data["operation_id"]}
        if function_id == "compose::operation":
            reply: dict[str, Any] = {"status": self.outcome, "last_event": {"detail": self.detail}}
            return reply
        raise EngineCallError("function_not_found", function_id)

    def events(self, trigger_type: str) -> list[dict[str, Any]]:
        return [payload for kind, payload in self.emitted if kind == trigger_type]
