"""The soak's project and peers: the seeded skills and agent profiles, the example catalog served as
peer functions, and the mock registry's workers (`soak.py` runs callers against them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..config import Settings
from .engine import TestEngine
from .registry import MockRegistry


@dataclass
class Project:
    """The soak's project tree: roots, seeded skills and agent profiles."""

    root: Path

    @property
    def skills(self) -> Path:
        return self.root / "skills"

    @property
    def agents(self) -> Path:
        return self.root / "agents"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def seed(self, namespaces: list[str], pages: int = 8, agents: int = 6) -> tuple[list[str], list[str]]:
        """Write the seeded documents; returns (skill ids, agent ids)."""
        skill_ids: list[str] = []
        for ns in namespaces:
            folder = self.skills / ns
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "index.md").write_text(
                f"---\ntitle: {ns.title()}\ntype: index\n---\n# {ns.title()}\n\nHow to use the {ns} worker.\n",
                encoding="utf-8")
            skill_ids.append(ns)
            for page in range(pages):
                (folder / f"page-{page}.md").write_text(
                    f"---\ntype: how-to\n---\n# {ns} page {page}\n\n"
                    + f"Explains step {page} of working with {ns}. " * 6 + "\n", encoding="utf-8")
                skill_ids.append(f"{ns}/page-{page}")
        self.agents.mkdir(parents=True, exist_ok=True)
        agent_ids = []
        for index in range(agents):
            (self.agents / f"agent-{index}.md").write_text(
                f"---\nname: Agent {index}\ndescription: Soak profile {index}.\nfunctions:\n"
                f"  - mailer::send\n  - directory::skills::get\n---\nYou are soak agent {index}.\n",
                encoding="utf-8")
            agent_ids.append(f"agent-{index}")
        (self.root / ".agents" / "skills").mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        return skill_ids, agent_ids + ["default"]

    def settings(self, registry_url: str, mode: str = "lexical") -> Settings:
        return Settings(
            skills_folder=str(self.skills),
            local_skills_folder=str(self.skills / "iii"),
            agents_folder=str(self.agents),
            agents_skills_folder=str(self.root / ".agents" / "skills"),
            filter_unregistered=False,
            auto_download=False,
            registry_url=registry_url,
            function_search_mode=mode,
        )


def installed_default_mode() -> str:
    """The search mode an installation serves: `hybrid` with the `dense` extra, else `lexical`."""
    from iii_directory.encoder.dense_lane import dense_installed

    return "hybrid" if dense_installed() else "lexical"


def example_catalog() -> list[dict[str, Any]]:
    path = resources.files("iii_directory") / "data" / "example_catalog.json"
    return json.loads(path.read_text(encoding="utf-8"))


def serve_peers(engine: TestEngine, catalog: list[dict[str, Any]]) -> list[str]:
    """Register every catalog record as a peer function; returns their namespaces."""

    async def answer(data: Any) -> dict[str, Any]:
        return {"ok": True}

    for record in catalog:
        engine.add_function(record["function_id"], answer, description=record.get("description"),
                            request_format=record.get("request_schema"), metadata=record.get("metadata") or {})
    return sorted({r["function_id"].split("::", 1)[0] for r in catalog})


def publish_registry(registry: MockRegistry) -> None:
    for name, text in (("weatherly", "Forecasts and weather alerts"), ("parcel", "Track parcels and shipments"),
                       ("imagery", "Resize and convert images"), ("voice", "Transcribe audio recordings")):
        registry.add_worker(name, version="1.0.0", description=text, functions=[
            {"id": f"{name}::run", "description": f"{text}.", "request_format": {"type": "object"}}])
