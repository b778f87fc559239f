"""`iii-directory call` of a file-backed function imports and builds only what that function needs
(docs/startup.md): no search stack, no dense machinery, no websockets, no other
surface, no stemmer, and no JSON Schema generated; a read function (`quick_call.QUICK`) runs
without pydantic, asyncio, anyio, the function table or any surface module at all. Not timed: it
names what was imported.

A failure here means an import crept back into the `call` path; the message lists it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import contextlib, io, json, sys
generated = []
if sys.argv[1] == "count-schemas":  # the full path imports pydantic anyway
    import pydantic
    original = pydantic.BaseModel.model_json_schema.__func__
    def counting(cls, *args, **kwargs):
        generated.append(cls.__name__)
        return original(cls, *args, **kwargs)
    pydantic.BaseModel.model_json_schema = classmethod(counting)
del sys.argv[1]
from iii_directory.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(["call", *sys.argv[1:]])
print(json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
                  "modules": sorted(sys.modules), "schemas": generated}))
"""

FORBIDDEN_PACKAGES = ("onnxruntime", "numpy", "tokenizers", "hnswlib", "_rank", "httpx", "httpcore",
                      "websockets", "git", "watchfiles", "snowballstemmer", "Stemmer")
"""Whole packages a file-backed call has no use for (ranking, the dense lane, HTTP, the engine
socket, clones, the file watcher, stemming)."""

FORBIDDEN_OURS = ("iii_directory.search", "iii_directory.protocol.connection", "iii_directory.worker",
                  "iii_directory.schemas", "iii_directory.sources", "iii_directory.kits",
                  "iii_directory.ui", "iii_directory.testing", "iii_directory.content.watch",
                  "iii_directory.content.body_index")

QUICK_FORBIDDEN_PACKAGES = ("pydantic", "pydantic_core", "annotated_types", "asyncio", "anyio", "sniffio")
"""What a read function's `call` (`quick_call.QUICK`) runs without: the models and the event loop."""

QUICK_FORBIDDEN_OURS = ("iii_directory.functions", "iii_directory.models", "iii_directory.config",
                        "iii_directory.config_boot", "iii_directory.table", "iii_directory.directory",
                        "iii_directory.invocation", "iii_directory.runtime", "iii_directory.context",
                        "iii_directory.standalone", "iii_directory.content.id_fields")
"""Our modules a read function's `call` does without (exact names or packages): the surfaces
and their table, the settings model, the runtime and the invocation that wrap a served call."""

CALLS = [
    ("directory::skills::list", {}, "skills"),
    ("directory::skills::list", {"search": " demo ", "limit": 5, "include_origin": True}, "skills"),
    ("directory::skills::get", {"id": "demo/skills/demo"}, "skills"),
    ("directory::skills::get", {"id": "demo/skills/demo", "raw": True}, "skills"),
    ("directory::skills::index", {}, "skills"),
    ("directory::system-prompts::list", {}, "prompts"),
    ("directory::system-prompts::get", {"name": "iii-minimal"}, "prompts"),
    ("directory::agents::get", {"id": "iii"}, "agents"),
    ("directory::agents::list", {}, "agents"),
    ("directory::engine::functions::info", {"function_id": "directory::skills::list"}, "engine"),
]
QUICK_IDS = frozenset({"directory::skills::list", "directory::skills::get", "directory::skills::index",
                       "directory::system-prompts::list", "directory::system-prompts::get",
                       "directory::agents::list", "directory::agents::get"})


def forbidden(modules: list[str], surface: str, quick: bool = False) -> list[str]:
    """The modules of `modules` that a call of a function of `surface` must not import. A
    surface's own modules share its name (`functions.agents`, `functions.agents_models`); a
    read function's `call` (`quick`) imports no surface module and no model at all."""
    own_surface = f"iii_directory.functions.{surface}"
    bad = []
    for name in modules:
        top = name.split(".")[0]
        if top in FORBIDDEN_PACKAGES or (quick and top in QUICK_FORBIDDEN_PACKAGES):
            bad.append(name)
        elif name.startswith(FORBIDDEN_OURS):
            bad.append(name)
        elif quick and any(name == own or name.startswith(own + ".") for own in QUICK_FORBIDDEN_OURS):
            bad.append(name)
        elif name.startswith("iii_directory.functions.") and not name.startswith(own_surface):
            bad.append(name)
    return bad


def run_call(tmp_path: Path, function_id: str, payload: dict) -> dict:
    skill = tmp_path / "skills" / "demo" / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text("---\ntitle: Demo\n---\n# Demo\n\nA demo skill.\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("III_")}
    env.update({"HOME": str(tmp_path / "home"), "III_DIRECTORY_CACHE_DIR": str(tmp_path / "cache"),
                "LOG_LEVEL": "warning"})
    mode = "plain" if function_id in QUICK_IDS else "count-schemas"
    done = subprocess.run([sys.executable, "-c", PROBE, mode, function_id, json.dumps(payload)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("function_id", "payload", "surface"), CALLS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_a_file_backed_call_imports_only_its_surface(tmp_path: Path, function_id: str, payload: dict,
                                                      surface: str) -> None:
    report = run_call(tmp_path, function_id, payload)
    assert report["code"] == 0, report["stderr"]
    assert json.loads(report["stdout"])  # a real answer came back
    quick = function_id in QUICK_IDS
    assert forbidden(report["modules"], surface, quick) == []
    if quick:
        assert "iii_directory.quick_call" in report["modules"]
    else:
        assert f"iii_directory.functions.{surface}" in report["modules"]
    assert report["schemas"] == [], "a JSON Schema was generated: the published frames were not used"


def test_the_quick_ids_are_the_short_paths_table() -> None:
    from iii_directory import quick_call

    assert set(quick_call.QUICK) == QUICK_IDS
    assert all(quick_call.available(fid) for fid in QUICK_IDS)


def test_the_listing_is_the_real_one(tmp_path: Path) -> None:
    report = run_call(tmp_path, "directory::skills::list", {})
    rows = json.loads(report["stdout"])["skills"]
    assert [row["id"] for row in rows] == ["demo/skills/demo"]


def test_the_check_itself_names_what_crept_in() -> None:
    modules = ["iii_directory.functions.skills", "iii_directory.functions.search", "numpy.linalg",
               "snowballstemmer.russian_stemmer", "iii_directory.search.ranking.vocabulary", "yaml"]
    assert forbidden(modules, "skills") == modules[1:5]
    quick = ["iii_directory.quick_call", "iii_directory.functions", "iii_directory.config",
             "iii_directory.config_base", "pydantic.main", "asyncio.events", "anyio", "yaml"]
    assert forbidden(quick, "skills", quick=True) == ["iii_directory.functions", "iii_directory.config",
                                                      "pydantic.main", "asyncio.events", "anyio"]
