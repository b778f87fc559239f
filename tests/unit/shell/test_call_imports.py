"""`iii-directory call` of a file-backed function imports and builds only what that function needs
(docs/startup.md): no search stack, no dense machinery, no websockets, no other
surface, no stemmer, and no JSON Schema generated. Not timed: it names what was imported.

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
import pydantic
generated = []
original = pydantic.BaseModel.model_json_schema.__func__
def counting(cls, *args, **kwargs):
    generated.append(cls.__name__)
    return original(cls, *args, **kwargs)
pydantic.BaseModel.model_json_schema = classmethod(counting)
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

CALLS = [
    ("directory::skills::list", {}, "skills"),
    ("directory::skills::get", {"id": "demo/skills/demo"}, "skills"),
    ("directory::skills::index", {}, "skills"),
    ("directory::system-prompts::list", {}, "prompts"),
    ("directory::agents::list", {}, "agents"),
    ("directory::engine::functions::info", {"function_id": "directory::skills::list"}, "engine"),
]


def forbidden(modules: list[str], surface: str) -> list[str]:
    """The modules of `modules` that a call of a function of `surface` must not import. A
    surface's own modules share its name (`functions.agents`, `functions.agents_models`)."""
    own_surface = f"iii_directory.functions.{surface}"
    bad = []
    for name in modules:
        if name.split(".")[0] in FORBIDDEN_PACKAGES:
            bad.append(name)
        elif name.startswith(FORBIDDEN_OURS):
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
    done = subprocess.run([sys.executable, "-c", PROBE, function_id, json.dumps(payload)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("function_id", "payload", "surface"), CALLS, ids=[c[0] for c in CALLS])
def test_a_file_backed_call_imports_only_its_surface(tmp_path: Path, function_id: str, payload: dict,
                                                      surface: str) -> None:
    report = run_call(tmp_path, function_id, payload)
    assert report["code"] == 0, report["stderr"]
    assert json.loads(report["stdout"])  # a real answer came back
    assert forbidden(report["modules"], surface) == []
    assert f"iii_directory.functions.{surface}" in report["modules"]
    assert report["schemas"] == [], "a JSON Schema was generated: the published frames were not used"


def test_the_listing_is_the_real_one(tmp_path: Path) -> None:
    report = run_call(tmp_path, "directory::skills::list", {})
    rows = json.loads(report["stdout"])["skills"]
    assert [row["id"] for row in rows] == ["demo/skills/demo"]


def test_the_check_itself_names_what_crept_in() -> None:
    modules = ["iii_directory.functions.skills", "iii_directory.functions.search", "numpy.linalg",
               "snowballstemmer.russian_stemmer", "iii_directory.search.ranking.vocabulary", "yaml"]
    assert forbidden(modules, "skills") == modules[1:5]
