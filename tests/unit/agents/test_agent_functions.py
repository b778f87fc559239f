"""Every `directory::agents::*` function through `Directory.invoke` (surfaces.md §8)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from iii_directory.config import Settings
from iii_directory.content import bundled
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.functions import agents, prompts
from iii_directory.port import EngineCallError, StandaloneEngine
from iii_directory.table import FunctionTable

PROFILE = "---\nname: Current\ndescription: The current one.\nlogo: 🚢\n---\nYou help.\n"
NEXT_LIST = " Next: call directory::agents::list to browse agent profile ids."


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


async def call(directory: Directory, function: str, data: dict[str, Any]) -> dict[str, Any]:
    return await directory.invoke(f"directory::agents::{function}", data)


async def error_of(directory: Directory, function: str, data: dict[str, Any]) -> DirectoryError:
    with pytest.raises(DirectoryError) as caught:
        await call(directory, function, data)
    return caught.value


def events(directory: Directory) -> list[dict[str, Any]]:
    return [p for t, p in directory.engine.emitted if t == "directory::agents::on-change"]  # type: ignore[attr-defined]


def rows(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in result["agents"]}


# --- list -----------------------------------------------------------------------------------


async def test_list_with_one_profile_and_the_bundled_ones(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "current.md", PROFILE)
    result = await call(directory, "list", {})
    assert [row["id"] for row in result["agents"]] == ["current", "default", "iii", "iii-minimal"]
    by_id = rows(result)
    assert {k: by_id[k]["name"] for k in ("default", "iii", "iii-minimal")} == {
        "default": "Default", "iii": "iii", "iii-minimal": "iii-minimal",
    }
    assert [r["id"] for r in result["agents"] if not r["hidden"]] == ["current", "default"]
    current = by_id["current"]
    assert current == {
        "id": "current",
        "name": "Current",
        "description": "The current one.",
        "logo": "🚢",
        "skill_count": None,
        "function_count": 0,
        "model": None,
        "reasoning_effort": None,
        "icon": None,
        "color": None,
        "extends": None,
        "hidden": False,
        "builtin": False,
        "source": {"kind": "local"},
        "modified_at": current["modified_at"],
    }
    assert current["modified_at"].endswith("+00:00")
    for bundled_id in ("default", "iii", "iii-minimal"):
        assert by_id[bundled_id]["builtin"] is True
        assert by_id[bundled_id]["modified_at"] == ""
        assert by_id[bundled_id]["source"] == {"kind": "builtin"}
    assert by_id["default"]["composer_placeholder"]
    assert by_id["iii-minimal"]["extends"] == "default"


async def test_list_resolves_counts_and_reports_broken_chains(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "base.md", "---\nname: Base\nskills: [a, b]\nfunctions: [x::y]\nmodel: m1\n---\nB\n")
    write(roots["agents"] / "kid.md", "---\nname: Kid\nextends: base\nskills: [b, c]\nreasoning_effort: low\n---\n")
    write(roots["agents"] / "orphan.md", "---\nname: Orphan\nextends: nope\ncomposer_placeholder: Do it\n---\n")
    by_id = rows(await call(directory, "list", {}))
    assert (by_id["kid"]["skill_count"], by_id["kid"]["function_count"]) == (3, 1)
    assert (by_id["kid"]["model"], by_id["kid"]["reasoning_effort"]) == ("m1", "low")
    assert "inheritance_error" not in by_id["kid"]
    assert by_id["orphan"]["inheritance_error"] == (
        'D415 invalid_input: agent profile "orphan" extends unknown agent profile "nope".' + NEXT_LIST
    )
    assert by_id["orphan"]["composer_placeholder"] == "Do it"
    assert "composer_placeholder" not in by_id["kid"]


async def test_scan_only_counts_valid_direct_children(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "nested" / "deep.md", PROFILE)
    write(roots["agents"] / "Bad-Id.md", PROFILE)
    write(roots["agents"] / "no-fm.md", "Just text\n")
    write(roots["agents"] / "bad-logo.md", "---\nname: X\nlogo: ./x.png\n---\n")
    write(roots["agents"] / "notes.txt", PROFILE)
    write(roots["skills"] / "ns" / "agents" / "old-layout.md", PROFILE)
    write(roots["agents"] / "big.md", "---\nname: Big\n---\n" + "x" * 262_200)
    assert [r["id"] for r in (await call(directory, "list", {}))["agents"]] == ["default", "iii", "iii-minimal"]


async def test_project_profile_shadows_global_and_global_is_marked(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["global_agents"] / "both.md", "---\nname: Global both\n---\n")
    write(roots["agents"] / "both.md", "---\nname: Project both\n---\n")
    write(roots["global_agents"] / "mine.md", "---\nname: Mine\n---\n")
    by_id = rows(await call(directory, "list", {}))
    assert by_id["both"]["name"] == "Project both"
    assert by_id["both"]["source"] == {"kind": "local"}
    assert by_id["mine"]["source"] == {"kind": "global"}


async def test_source_attribution_from_kits_lock_and_markers(directory: Directory, roots: dict[str, Path]) -> None:
    kit_text = "---\nname: PM\n---\nPlan.\n"
    write(roots["agents"] / "pm.md", kit_text)
    write(roots["agents"] / "edited.md", "---\nname: Edited\n---\n")
    write(roots["agents"] / "skipped.md", "---\nname: Skipped\n---\n")
    write(roots["agents"] / "from-worker.md", "---\nname: W\n---\n")
    write(roots["agents"] / "both.md", "---\nname: Both\n---\n")
    sha = hashlib.sha256(kit_text.encode()).hexdigest()
    write(
        roots["project"] / "kits.lock",
        "# kits.lock — kits installed in this project by iii-directory.\n"
        "version: 1\n"
        "kits:\n"
        "  zed/other:\n"
        "    requested: latest\n"
        "    version: 9.0.0\n"
        "    files:\n"
        f"      agents/pm.md:\n        sha256: {sha}\n"
        "  acme/team:\n"
        "    requested: latest\n"
        "    version: 1.10\n"
        "    installed_at: 2026-10-08T14:02:11Z\n"
        "    files:\n"
        f"      agents/pm.md:\n        sha256: {sha}\n"
        "      agents/edited.md:\n        sha256: 0000\n"
        "      agents/skipped.md:\n        sha256: 0000\n        skipped: true\n"
        "      agents/both.md:\n        sha256: 1111\n",
    )
    marker = {
        "worker": "kanban",
        "source": "registry",
        "tag_or_version": "latest",
        "schema": 2,
        "version": "2.0.1",
        "agents": {
            "from-worker": hashlib.sha256(b"---\nname: W\n---\n").hexdigest(),
            "both": "2222",
        },
    }
    write(roots["skills"] / "kanban" / ".iii-skill-complete", json.dumps(marker))
    by_id = rows(await call(directory, "list", {}))
    assert by_id["pm"]["source"] == {"kind": "kit", "kit": "acme/team", "version": "1.10", "modified": False}
    assert by_id["edited"]["source"] == {"kind": "kit", "kit": "acme/team", "version": "1.10", "modified": True}
    assert by_id["skipped"]["source"] == {"kind": "local"}
    assert by_id["from-worker"]["source"] == {"kind": "worker", "worker": "kanban", "version": "2.0.1", "modified": False}
    assert by_id["both"]["source"]["kind"] == "kit"
    got = await call(directory, "get", {"id": "pm"})
    assert got["source"] == by_id["pm"]["source"]


async def test_unreadable_kits_lock_owns_nothing(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "pm.md", PROFILE)
    write(roots["project"] / "kits.lock", "version: [oops\n")
    assert rows(await call(directory, "list", {}))["pm"]["source"] == {"kind": "local"}
    write(roots["project"] / "kits.lock", "version: 2\nkits:\n  a/b:\n    files:\n      agents/pm.md:\n        sha256: x\n")
    assert rows(await call(directory, "list", {}))["pm"]["source"] == {"kind": "local"}


# --- get ------------------------------------------------------------------------------------


async def test_get_returns_resolved_profile(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "base.md", "---\nname: Base\nskills: [ns]\nfunctions: [x::y]\nmodel: m\nskills_index: false\n---\nBase body.\n\n")
    write(
        roots["agents"] / "child.md",
        "---\nname: Child\ndescription: d\nlogo: ⚡🔥\nicon: code\ncolor: blue\nextends: base\nhidden: true\n"
        "composer_placeholder: Try me\nskills: [ghost]\n---\nChild body.\n",
    )
    write(roots["skills"] / "ns" / "index.md", "# NS\n\nOverview.\n")
    got = await call(directory, "get", {"id": "child"})
    assert got == {
        "id": "child",
        "name": "Child",
        "description": "d",
        "logo": "⚡🔥",
        "system_prompt": "Base body.\n\nChild body.\n",
        "skills": ["ns", "ghost"],
        "unknown_skills": ["ghost"],
        "functions": ["x::y"],
        "unknown_functions": ["x::y"],
        "model": "m",
        "reasoning_effort": None,
        "icon": "code",
        "color": "blue",
        "extends": "base",
        "hidden": True,
        "composer_placeholder": "Try me",
        "skills_index": False,
        "builtin": False,
        "source": {"kind": "local"},
        "modified_at": got["modified_at"],
    }


async def test_get_raw_round_trips_bytes(directory: Directory, roots: dict[str, Path]) -> None:
    content = "---\r\nname: Grüße\r\nfunctions: [a::b]\r\n---\r\n\r\nKörper   \r\n\r\n"
    write(roots["agents"] / "crlf.md", content)
    got = await call(directory, "get", {"id": "crlf", "raw": True})
    assert got["raw"] == content
    assert got["system_prompt"] == "\r\nKörper   \r\n\r\n"
    assert "raw" not in await call(directory, "get", {"id": "crlf"})


async def test_get_bundled_profile(directory: Directory) -> None:
    got = await call(directory, "get", {"id": "iii", "raw": True})
    assert got["builtin"] is True
    assert got["modified_at"] == ""
    assert got["source"] == {"kind": "builtin"}
    assert got["raw"] == bundled.agent_text("iii")
    assert got["system_prompt"].startswith("You are an iii agent worker.\n")
    assert "skills_index" not in got and "inheritance_error" not in got
    alias = await call(directory, "get", {"id": "iii-minimal"})
    default = await call(directory, "get", {"id": "default"})
    assert alias["system_prompt"] == default["system_prompt"]


async def test_get_keeps_inheritance_error_and_own_fields(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "loop-a.md", "---\nname: A\nextends: loop-b\nmodel: ma\n---\nA\n")
    write(roots["agents"] / "loop-b.md", "---\nname: B\nextends: loop-a\nfunctions: [b::f]\n---\nB\n")
    got = await call(directory, "get", {"id": "loop-a", "raw": True})
    assert got["inheritance_error"] == (
        'D415 invalid_input: agent profile "loop-a" has an extends loop: loop-a → loop-b → loop-a.' + NEXT_LIST
    )
    assert (got["system_prompt"], got["functions"], got["model"]) == ("A\n", [], "ma")
    assert got["raw"].startswith("---\nname: A\n")


async def test_get_unknown_id_is_d410_with_suggestions(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "reviewer.md", PROFILE)
    error = await error_of(directory, "get", {"id": "reviewr"})
    assert error.code == "D410"
    assert error.message == (
        'D410 not_found: agent profile "reviewr" does not exist. Did you mean: reviewer, default, iii.'
        + NEXT_LIST
    )


@pytest.mark.parametrize(
    ("agent_id", "message"),
    [
        ("", "name must be non-empty"),
        ("Bad", "name may only contain lowercase ASCII letters, digits, '-' and '_': \"Bad\""),
        ("../etc", "name may only contain lowercase ASCII letters, digits, '-' and '_': \"../etc\""),
        ("x" * 65, "name too long (65 chars; max 64)"),
    ],
)
async def test_id_rule_errors_are_bare(directory: Directory, agent_id: str, message: str) -> None:
    for function, extra in (
        ("get", {}), ("delete", {}), ("create", {"content": PROFILE}), ("update", {"content": PROFILE}),
        ("functions::add", {"functions": ["a::b"]}), ("functions::remove", {"functions": []}),
    ):
        error = await error_of(directory, function, {"id": agent_id, **extra})
        assert (error.code, error.message) == ("invocation_failed", message)


class ScriptedEngine(StandaloneEngine):
    """Answers `engine::functions::info` from a script and records the batches."""

    def __init__(self, answer: Any) -> None:
        super().__init__()
        self.answer = answer
        self.batches: list[list[str]] = []

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        assert function_id == "engine::functions::info"
        self.batches.append(list(data["function_ids"]))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer(data["function_ids"]) if callable(self.answer) else self.answer


def scripted(settings: Settings, answer: Any) -> tuple[Directory, ScriptedEngine]:
    engine = ScriptedEngine(answer)
    table = FunctionTable.merge([prompts.SURFACE, agents.SURFACE])
    return Directory(settings=settings, engine=engine, table=table), engine


async def test_unknown_functions_batches_of_32(settings: Settings, roots: dict[str, Path]) -> None:
    ids = [f"w::f{i}" for i in range(70)]
    write(roots["agents"] / "many.md", "---\nname: Many\nfunctions:\n" + "".join(f"  - {i}\n" for i in ids) + "---\n")

    def answer(batch: list[str]) -> dict[str, Any]:
        items = []
        for fid in batch:
            number = int(fid.split("f")[-1])
            if number % 10 == 3:
                items.append({"function_id": fid, "error": "not_found"})
            elif number % 10 == 7:
                continue  # unanswered
            else:
                items.append({"function_id": fid, "description": "ok"})
        return {"functions": items}

    directory, engine = scripted(settings, answer)
    got = await call(directory, "get", {"id": "many"})
    assert [len(b) for b in engine.batches] == [32, 32, 6]
    assert got["unknown_functions"] == [f for f in ids if int(f.split("f")[-1]) % 10 in (3, 7)]


class GatedEngine(ScriptedEngine):
    """Answers `engine::functions::info` only once the kit sources of the same call were read."""

    def __init__(self) -> None:
        super().__init__({"functions": [{"function_id": "a::b", "description": "ok"}]})
        self.sources_read = anyio.Event()

    async def call(self, function_id: str, data: Any, **kwargs: Any) -> Any:
        await self.sources_read.wait()
        return await super().call(function_id, data, **kwargs)


async def test_get_runs_its_lookups_side_by_side(
        settings: Settings, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's function info and the kit sources are asked at once: the engine here answers
    only after the sources were read, which one-after-the-other lookups would turn into the info
    call's 5 s timeout and an empty `unknown_functions`."""
    write(roots["agents"] / "p.md", "---\nname: P\nfunctions: [a::b, c::d]\n---\n")
    engine = GatedEngine()
    directory = Directory(settings=settings, engine=engine,
                          table=FunctionTable.merge([prompts.SURFACE, agents.SURFACE]))
    real = agents._sources

    async def sources(ctx: Any) -> Any:
        found = await real(ctx)
        engine.sources_read.set()
        return found

    monkeypatch.setattr(agents, "_sources", sources)
    monkeypatch.setattr(agents, "INFO_TIMEOUT_S", 60.0)  # a guard against a hang, not a measure
    got = await call(directory, "get", {"id": "p"})
    assert got["unknown_functions"] == ["c::d"]
    assert engine.batches == [["a::b", "c::d"]]


async def test_malformed_info_answer_marks_nothing(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "p.md", "---\nname: P\nfunctions: [a::b, c::d]\n---\n")
    directory, _ = scripted(settings, {})
    assert (await call(directory, "get", {"id": "p"}))["unknown_functions"] == []


async def test_failed_info_call_reports_no_unknown_functions(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "p.md", "---\nname: P\nfunctions: [a::b]\n---\n")
    directory, _ = scripted(settings, EngineCallError("TIMEOUT", "engine::functions::info timed out"))
    got = await call(directory, "get", {"id": "p"})
    assert got["unknown_functions"] == []
    assert got["functions"] == ["a::b"]


async def test_no_functions_means_no_engine_call(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "p.md", "---\nname: P\n---\n")
    directory, engine = scripted(settings, {"functions": []})
    assert (await call(directory, "get", {"id": "p"}))["unknown_functions"] == []
    assert engine.batches == []


async def test_standalone_catalog_answers_unknown_functions(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "p.md", "---\nname: P\nfunctions: [known::fn, typo::fn]\n---\n")
    engine = StandaloneEngine([{"function_id": "known::fn", "description": "Known"}])
    directory = Directory(settings=settings, engine=engine, table=FunctionTable.merge([agents.SURFACE]))
    assert (await call(directory, "get", {"id": "p"}))["unknown_functions"] == ["typo::fn"]


async def test_unknown_skills_use_the_visible_set(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "ns" / "index.md", "# NS\n")
    write(roots["skills"] / "ns" / "leaf.md", "# Leaf\n")
    write(roots["agents_skills"] / "tool" / "SKILL.md", "# Tool\n")
    write(
        roots["agents"] / "p.md",
        "---\nname: P\nskills: [ns, ns/index, ns/leaf, iii://ns/leaf.md, tool, ns/missing, 'Bad Id', ns::fn]\n---\n",
    )
    got = await call(directory, "get", {"id": "p"})
    assert got["unknown_skills"] == ["ns/missing", "Bad Id", "ns::fn"]


# --- create ---------------------------------------------------------------------------------


async def test_create_writes_and_fires(directory: Directory, roots: dict[str, Path]) -> None:
    result = await call(directory, "create", {"id": "helper", "content": PROFILE})
    target = roots["agents"] / "helper.md"
    assert target.read_bytes() == PROFILE.encode()
    assert result == {
        "id": "helper", "name": "Current", "description": "The current one.", "logo": "🚢",
        "bytes": len(PROFILE.encode()), "modified_at": result["modified_at"],
    }
    assert result["modified_at"].endswith("+00:00")
    assert events(directory) == [{"op": "create", "name": "helper"}]
    assert directory.self_writes.consume(target)
    assert not (roots["global_agents"]).exists()


async def test_create_logo_is_null_when_absent(directory: Directory) -> None:
    result = await call(directory, "create", {"id": "plain", "content": "---\nname: Plain\n---\n"})
    assert result["logo"] is None and result["description"] == ""


async def test_create_conflicts(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "taken.md", PROFILE)
    error = await error_of(directory, "create", {"id": "taken", "content": PROFILE})
    assert error.message == (
        'D414 invalid_input: agent profile "taken" already exists. Next: call directory::agents::update '
        "to edit the existing agent profile; or call directory::agents::list to browse agent profile ids."
    )
    global_file = write(roots["global_agents"] / "userwide.md", PROFILE)
    error = await error_of(directory, "create", {"id": "userwide", "content": PROFILE})
    assert error.message.startswith(
        f'D414 invalid_input: agent profile "userwide" already exists as a user-global profile ({global_file}).'
    )
    assert not (roots["agents"] / "userwide.md").exists()
    skipped = write(roots["agents"] / "broken.md", "no frontmatter\n")
    error = await error_of(directory, "create", {"id": "broken", "content": PROFILE})
    assert error.message == (
        f"D414 invalid_input: a file already exists at {skipped} (currently skipped by the scanner); "
        "edit or remove it on disk."
    )
    assert skipped.read_text() == "no frontmatter\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("no frontmatter", "missing YAML frontmatter (expected --- ... --- block at file start)"),
        ("---\nname: ''\n---\n", "frontmatter missing non-empty `name`"),
        ("---\nname: X\nlogo: 🚢🚢🚢🚢🚢\n---\n", "`logo` too long (20 bytes; max 16) — emoji only"),
        ("---\nname: X\ncolor: red\n---\n", '`color` must be one of neutral, blue, purple, teal, green, amber, rose (got "red")'),
        ("---\nname: X\n---\n" + "x" * 262_144, f"content too large ({262_144 + 16} bytes; max 262144)"),
    ],
)
async def test_create_validation_is_bare_and_writes_nothing(
    directory: Directory, roots: dict[str, Path], content: str, message: str
) -> None:
    error = await error_of(directory, "create", {"id": "new-one", "content": content})
    assert (error.code, error.message) == ("invocation_failed", message)
    assert not (roots["agents"] / "new-one.md").exists()
    assert events(directory) == []


async def test_create_accepts_broken_extends_and_shadows_bundled(directory: Directory, roots: dict[str, Path]) -> None:
    await call(directory, "create", {"id": "dangling", "content": "---\nname: D\nextends: ghost\n---\n"})
    await call(directory, "create", {"id": "default", "content": "---\nname: Mine\n---\nMine.\n"})
    by_id = rows(await call(directory, "list", {}))
    assert "inheritance_error" in by_id["dangling"]
    assert (by_id["default"]["builtin"], by_id["default"]["name"]) == (False, "Mine")


# --- update ---------------------------------------------------------------------------------


async def test_update_in_place(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["agents"] / "p.md", PROFILE)
    new = "---\nname: Renamed display\n---\nNew.\n"
    result = await call(directory, "update", {"id": "p", "content": new})
    assert (result["id"], result["name"], result["bytes"]) == ("p", "Renamed display", len(new))
    assert path.read_text() == new
    assert events(directory) == [{"op": "update", "name": "p"}]


async def test_update_global_profile_in_place(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["global_agents"] / "g.md", PROFILE)
    await call(directory, "update", {"id": "g", "content": "---\nname: G2\n---\n"})
    assert path.read_text() == "---\nname: G2\n---\n"
    assert not (roots["agents"] / "g.md").exists()
    assert rows(await call(directory, "list", {}))["g"]["source"] == {"kind": "global"}


async def test_update_bundled_copies_on_write_and_delete_falls_back(directory: Directory, roots: dict[str, Path]) -> None:
    new = "---\nname: My iii\nextends: default\n---\nExtra.\n"
    await call(directory, "update", {"id": "iii", "content": new})
    shadow = roots["agents"] / "iii.md"
    assert shadow.read_text() == new
    got = await call(directory, "get", {"id": "iii"})
    assert (got["builtin"], got["name"]) == (False, "My iii")
    assert got["system_prompt"].endswith("\n\nExtra.\n")
    assert await call(directory, "delete", {"id": "iii"}) == {"id": "iii"}
    assert not shadow.exists()
    got = await call(directory, "get", {"id": "iii"})
    assert (got["builtin"], got["name"]) == (True, "iii")
    assert events(directory) == [{"op": "update", "name": "iii"}, {"op": "delete", "name": "iii"}]


async def test_update_errors(directory: Directory, roots: dict[str, Path]) -> None:
    error = await error_of(directory, "update", {"id": "ghost", "content": PROFILE})
    assert error.code == "D410"
    assert error.message.startswith('D410 not_found: agent profile "ghost" does not exist.')
    path = write(roots["agents"] / "p.md", PROFILE)
    error = await error_of(directory, "update", {"id": "p", "content": "---\nname: X\nicon: robot\n---\n"})
    assert error.code == "invocation_failed"
    assert error.message.startswith("`icon` must be one of")
    assert path.read_text() == PROFILE
    write(roots["agents"] / "iii.md", "broken shadow\n")
    error = await error_of(directory, "update", {"id": "iii", "content": PROFILE})
    assert error.code == "D414"
    assert "currently skipped by the scanner" in error.message


# --- delete ---------------------------------------------------------------------------------


async def test_delete_project_and_global(directory: Directory, roots: dict[str, Path]) -> None:
    project = write(roots["agents"] / "p.md", PROFILE)
    global_file = write(roots["global_agents"] / "g.md", PROFILE)
    await call(directory, "delete", {"id": "p"})
    await call(directory, "delete", {"id": "g"})
    assert not project.exists() and not global_file.exists()
    assert roots["agents"].is_dir() and roots["global_agents"].is_dir()
    assert events(directory) == [{"op": "delete", "name": "p"}, {"op": "delete", "name": "g"}]
    assert directory.self_writes.consume(project)


async def test_delete_errors(directory: Directory) -> None:
    error = await error_of(directory, "delete", {"id": "default"})
    assert error.message == (
        'D414 invalid_input: agent profile "default" is bundled with the worker and has no local file to '
        "delete. Next: call directory::agents::update to edit the existing agent profile; or call "
        "directory::agents::list to browse agent profile ids."
    )
    assert (await error_of(directory, "delete", {"id": "ghost"})).code == "D410"


async def test_deleting_a_parent_breaks_children(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "parent.md", "---\nname: P\n---\nP\n")
    write(roots["agents"] / "kid.md", "---\nname: K\nextends: parent\n---\nK\n")
    await call(directory, "delete", {"id": "parent"})
    assert 'extends unknown agent profile "parent".' in rows(await call(directory, "list", {}))["kid"]["inheritance_error"]


# --- functions::add / remove ----------------------------------------------------------------


async def test_functions_add_spec_example_and_remove_restores_bytes(directory: Directory, roots: dict[str, Path]) -> None:
    original = "---\nname: X\n# keep me\nskills: [a, b]\ncolor: blue\n---\nBody.\n"
    path = write(roots["agents"] / "x.md", original)
    result = await call(
        directory, "functions::add", {"id": "x", "functions": [" coder::tree", " coder::search ", "coder::tree"]}
    )
    expected = "---\nname: X\n# keep me\nskills: [a, b]\ncolor: blue\nfunctions:\n  - coder::tree\n  - coder::search\n---\nBody.\n"
    assert path.read_text() == expected
    assert result == {
        "id": "x", "functions": ["coder::tree", "coder::search"], "added": ["coder::tree", "coder::search"],
        "removed": [], "unchanged": False, "bytes": len(expected), "modified_at": result["modified_at"],
    }
    result = await call(directory, "functions::remove", {"id": "x", "functions": ["coder::search", "coder::tree", "absent::x"]})
    assert (result["removed"], result["functions"], result["added"]) == (["coder::search", "coder::tree"], [], [])
    assert path.read_text() == original
    assert events(directory) == [{"op": "update", "name": "x"}, {"op": "update", "name": "x"}]


async def test_functions_unchanged_writes_nothing(directory: Directory, roots: dict[str, Path]) -> None:
    content = "---\nname: X\nfunctions: [a::b]\n---\n"
    path = write(roots["agents"] / "x.md", content)
    before = path.stat().st_mtime_ns
    for function, ids in (("functions::add", ["a::b"]), ("functions::remove", ["zz::top"])):
        result = await call(directory, function, {"id": "x", "functions": ids})
        assert result["unchanged"] is True
        assert (result["added"], result["removed"], result["functions"]) == ([], [], ["a::b"])
        assert result["bytes"] == len(content)
        assert result["modified_at"].endswith("+00:00")
    assert path.stat().st_mtime_ns == before
    assert events(directory) == []


async def test_functions_edit_own_list_only(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents"] / "base.md", "---\nname: B\nfunctions: [inherited::fn]\n---\n")
    kid = write(roots["agents"] / "kid.md", "---\nname: K\nextends: base\n---\n")
    result = await call(directory, "functions::remove", {"id": "kid", "functions": ["inherited::fn"]})
    assert result["unchanged"] is True
    result = await call(directory, "functions::add", {"id": "kid", "functions": ["inherited::fn", "own::fn"]})
    assert result["functions"] == ["inherited::fn", "own::fn"]
    assert kid.read_text() == "---\nname: K\nextends: base\nfunctions:\n  - inherited::fn\n  - own::fn\n---\n"


async def test_functions_on_bundled_profiles(directory: Directory, roots: dict[str, Path]) -> None:
    result = await call(directory, "functions::remove", {"id": "default", "functions": ["a::b"]})
    assert result["unchanged"] is True
    assert result["modified_at"] == ""
    assert result["bytes"] == len((bundled.agent_text("default") or "").encode())
    assert not (roots["agents"] / "default.md").exists()
    result = await call(directory, "functions::add", {"id": "default", "functions": ["coder::tree"]})
    shadow = roots["agents"] / "default.md"
    text = bundled.agent_text("default") or ""
    fence = text.index("\n---\n")
    assert shadow.read_text() == text[:fence] + "\nfunctions:\n  - coder::tree" + text[fence:]
    assert result["functions"] == ["coder::tree"]
    assert rows(await call(directory, "list", {}))["default"]["builtin"] is False


@pytest.mark.parametrize(
    ("functions", "message"),
    [
        ([], "D416 invalid_input: `functions` must name at least one engine function id (e.g. `coder::tree`)."),
        (["  "], "D416 invalid_input: `functions` entries must be non-empty function ids"),
        (["coder tree"], 'D416 invalid_input: `functions` entry "coder tree" may not contain whitespace — one engine function id per entry (e.g. `coder::tree`)'),
    ],
)
async def test_functions_d416(directory: Directory, roots: dict[str, Path], functions: list[str], message: str) -> None:
    write(roots["agents"] / "x.md", PROFILE)
    for function in ("functions::add", "functions::remove"):
        error = await error_of(directory, function, {"id": "x", "functions": functions})
        assert error.code == "D416"
        assert error.message == message + (
            " Next: call directory::agents::get to read the profile's current preloaded functions; or call "
            "directory::agents::list to browse agent profile ids."
        )
    assert (roots["agents"] / "x.md").read_text() == PROFILE


async def test_functions_validation_precedes_lookup(directory: Directory) -> None:
    assert (await error_of(directory, "functions::add", {"id": "ghost", "functions": []})).code == "D416"
    assert (await error_of(directory, "functions::add", {"id": "ghost", "functions": ["a::b"]})).code == "D410"


async def test_functions_wrong_request_type(directory: Directory) -> None:
    error = await error_of(directory, "functions::add", {"id": "x", "functions": "a::b"})
    assert 'field "functions"' in error.message
