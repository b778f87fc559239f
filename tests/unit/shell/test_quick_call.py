"""The short `call` path of the file-backed read functions (`quick_call.py`) answers exactly
as the full path (models, settings model, event loop, function table): a corpus of valid and
invalid requests goes through both, in a project of odd files and in the shipped example
skills folder, and stdout, stderr and the exit code must be equal byte for byte. Each answer
also survives its published response model unchanged (same JSON bytes), and the request check
gives the models' values and errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from iii_directory import cli, quick_call
from iii_directory.errors import DirectoryError
from iii_directory.functions import deferred_table
from iii_directory.models import parse_request
from iii_directory.request_check import check

REPO = Path(__file__).resolve().parents[3]

DEEP: Any = "x"
for _ in range(200):
    DEEP = [DEEP]

COMMON: list[Any] = [{}, None, [], "text", 7, {"unknown_field": 1, "_caller_worker_id": "w1"},
                     {"nested": DEEP}, {"bad": "\ud800"}]

CORPUS: dict[str, list[Any]] = {
    "directory::skills::list": [
        {"search": "how"}, {"search": "  HOW "}, {"search": "   "}, {"prefix": "ns/"}, {"prefix": " ns/"},
        {"type": "index"}, {"type": ""}, {"include_description": False}, {"include_origin": True},
        {"limit": 1}, {"limit": 0}, {"limit": -1}, {"limit": True}, {"limit": 1.5}, {"limit": 2.0}, {"limit": "2"},
        {"limit": 10**30}, {"ids_only": True, "search": "para two", "search_body": True},
        {"search": 5}, {"prefix": "x" * 1025}, {"prefix": " " * 1025}, {"type": "t" * 257},
        {"include_description": "no"}, {"include_origin": None, "limit": None},
        {"search": "how", "limit": "x", "prefix": 3}, {"search_body": 1},
    ],
    "directory::skills::get": [
        {"id": "ns/how"}, {"id": "ns"}, {"id": "ns/how", "raw": True}, {"id": "ns/empty"},
        {"id": "ns/empty", "raw": True}, {"id": "ns/../etc"}, {"id": "../x"}, {"id": "a" * 2000},
        {"id": "ns::do"}, {"id": "iii://ns/how"}, {"id": "ns/how.md"}, {"id": "ns/deep/SKILL.md"},
        {"id": ""}, {"id": "  "}, {"id": 5}, {"id": None}, {"id": "nope/missing"}, {"id": "ns/broken"},
        {"id": "agent-skill"}, {"id": "ns/how", "raw": "yes"}, {"id": "http://x/y"}, {"id": "NS/How"},
        {"id": "ns/dmi"}, {"raw": True},
    ],
    "directory::skills::index": [{"x": 1}],
    "directory::system-prompts::list": [{"x": 1}],
    "directory::system-prompts::get": [
        {"name": "custom"}, {"name": "iii-minimal"}, {"name": "iii-minimal", "raw": True}, {"name": "bad"},
        {"name": "nope"}, {"name": "x" * 100}, {"name": "../x"}, {"name": ""}, {"name": 1}, {"name": " custom "},
        {"name": "custom", "raw": 0},
    ],
    "directory::agents::list": [{"x": 1}],
    "directory::agents::get": [
        {"id": "helper"}, {"id": "helper", "raw": True}, {"id": "iii"}, {"id": "orphan"}, {"id": "broken"},
        {"id": "nope"}, {"id": "x" * 70}, {"id": "../x"}, {"id": None}, {"id": "global"}, {"id": " helper "},
    ],
}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def odd_project(root: Path) -> None:
    """Skills, prompts and agents with the shapes a scan meets: no frontmatter, malformed YAML,
    an empty body, index files, invalid ids, non-markdown files, a local root, an agent-skills
    root, inheritance that fails, unknown skills and functions."""
    s = root / "skills"
    write(s / "ns" / "index.md", "---\ntitle: Namespace\ntype: index\n---\n# NS\n\nThe overview.\n")
    write(s / "ns" / "how.md", "# How\n\nPara one.\n\nPara two.\n")
    write(s / "ns" / "broken.md", "---\ntitle: [unclosed\n---\nBroken but readable.\n")
    write(s / "ns" / "empty.md", "---\ntitle: Empty\n---\n\n")
    write(s / "ns" / "deep" / "SKILL.md", "---\nname: Deep\n---\nDeep body.\n")
    write(s / "ns" / "dmi.md", "---\ndisable-model-invocation: true\nfunction_id: ns::do\n"
                               "description: Desc\n---\n# Dmi\n\nBody.\n")
    write(s / "ns" / "notes.txt", "not markdown\n")
    write(s / "ns" / "ünï.md", "# Unicode id\n\nSkipped.\n")
    write(s / "Bad Name" / "x.md", "# X\n\nSkipped.\n")
    write(s / "other" / "thing.md", "# Thing\n\nÜnïcode and \"quotes\" \\ and tabs\t.\n")
    write(s / "iii" / "loc" / "index.md", "# Local\n\nA local skill.\n")
    write(s / "system-prompts" / "custom.md", "---\ndescription: Custom prompt\n---\nBe brief.\n")
    write(s / "system-prompts" / "bad.md", "no frontmatter here\n")
    write(root / ".agents" / "skills" / "agent-skill" / "SKILL.md",
          "---\nname: agent-skill\n---\n# Agent skill\n\nRead only.\n")
    a = root / "agents"
    write(a / "helper.md", "---\nname: Helper\ndescription: Helps\nextends: iii\nskills: [ns/how, nope/missing, "
                           "'Bad Id']\nfunctions: [directory::skills::list, nope::fn]\n---\nYou help.\n")
    write(a / "broken.md", "---\nname: [\n---\n")
    write(a / "orphan.md", "---\nname: Orphan\nextends: ghost\n---\nBody\n")
    write(root / "home" / ".iii" / "agents" / "global.md", "---\nname: Global\nlogo: 🌍\n---\nGlobal body\n")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith("III_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("III_DIRECTORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    odd_project(tmp_path)
    return tmp_path


def run(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        quick: bool) -> tuple[int, str, str]:
    with monkeypatch.context() as patch:
        if not quick:
            patch.setattr(quick_call, "available", lambda _fid: False)
        else:
            patch.setattr(quick_call, "answer", _only_quick(quick_call.answer))
        code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _only_quick(real: Any) -> Any:
    def answer(*args: Any, **kwargs: Any) -> Any:
        answer.used = True  # type: ignore[attr-defined]
        return real(*args, **kwargs)

    return answer


def both(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    full = run(argv, capsys, monkeypatch, quick=False)
    short = run(argv, capsys, monkeypatch, quick=True)
    assert short == full, argv
    return short


CASES = [(fid, payload) for fid, extra in CORPUS.items() for payload in [*COMMON, *extra]]


@pytest.mark.parametrize(("function_id", "payload"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_both_paths_answer_the_same_bytes(project: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch, function_id: str, payload: Any) -> None:
    code, out, err = both(["call", function_id, json.dumps(payload)], capsys, monkeypatch)
    assert (code == 0) == bool(out) and (code == 1) == bool(err)


@pytest.mark.parametrize("function_id", sorted(CORPUS))
def test_the_shipped_example_skills_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, function_id: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shutil.copytree(REPO / "skills", tmp_path / "skills")
    for payload in [{}, {"id": "directory/skills"}, {"name": "iii-runtime"}, {"id": "iii"}, {"search": "search"}]:
        both(["call", function_id, json.dumps(payload)], capsys, monkeypatch)


@pytest.mark.parametrize("seed", [
    "filter_unregistered: false\nskills_folder: skills\n",
    "download_timeout_ms: '5'\n",  # the model coerces it: the short path hands over to the model
    "function_search_mode: fast\n",  # invalid: the model's message
    "registry_url: ftp://x\n",
    "- a list\n",
    "skills_folder: [unclosed\n",
])
def test_settings_from_the_config_file(project: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch, seed: str) -> None:
    (project / "seed.yaml").write_text(seed, encoding="utf-8")
    for function_id in ("directory::skills::list", "directory::system-prompts::list"):
        both(["call", function_id, "{}", "--config", str(project / "seed.yaml")], capsys, monkeypatch)
    both(["call", "directory::skills::list", "{}", "--config", str(project / "missing.yaml")], capsys, monkeypatch)


def test_a_bad_catalog_file_fails_first_on_both_paths(project: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "catalog.json").write_text('[{"name": 5}]', encoding="utf-8")
    code, _, err = both(["call", "directory::skills::get", '{"id": 5}', "--catalog", str(project / "catalog.json")],
                        capsys, monkeypatch)
    assert code == 1 and "catalog file" in err
    (project / "catalog.json").write_text('[{"function_id": "nope::fn", "description": "Known"}]', encoding="utf-8")
    code, out, _ = both(["call", "directory::agents::get", '{"id": "helper"}', "--catalog",
                         str(project / "catalog.json")], capsys, monkeypatch)
    assert code == 0 and json.loads(out)["unknown_functions"] == []


def test_the_short_path_was_taken(project: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _only_quick(quick_call.answer)
    monkeypatch.setattr(quick_call, "answer", spy)
    assert cli.main(["call", "directory::skills::list", "{}"]) == 0
    assert getattr(spy, "used", False)


@pytest.mark.parametrize(("function_id", "payload"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_request_check_gives_the_models_values_and_errors(function_id: str, payload: Any) -> None:
    spec = deferred_table().functions[function_id]
    _, trimmed, unchecked = quick_call.QUICK[function_id]
    schema = quick_call.request_schema(function_id)
    assert schema is not None

    def outcome(parse: Any) -> str:
        try:
            return json.dumps(parse(), sort_keys=True)
        except DirectoryError as exc:
            return json.dumps(exc.to_wire())

    model = outcome(lambda: dict(parse_request(spec.request, payload)))
    plain = outcome(lambda: check(schema, payload, trimmed=trimmed, unchecked_lengths=unchecked))
    assert plain == model


def test_trimmed_and_unchecked_fields_are_the_models() -> None:
    """The two rules the schema does not carry, read off the models: an `OptionalText` field
    (its after-validator trims) is `trimmed`; a field whose `maxLength` is only published
    (`json_schema_extra`) is unchecked."""
    from iii_directory.models import _blank_to_none

    for function_id, (_, trimmed, unchecked) in quick_call.QUICK.items():
        model = deferred_table().functions[function_id].request
        want_trimmed, want_unchecked = set(), set()
        for name, field in model.model_fields.items():
            if any(getattr(m, "func", None) is _blank_to_none for m in field.metadata):
                want_trimmed.add(name)
            extra = field.json_schema_extra
            if isinstance(extra, dict) and "maxLength" in extra:
                want_unchecked.add(name)
        assert (set(trimmed), set(unchecked)) == (want_trimmed, want_unchecked), function_id


@pytest.mark.parametrize("function_id", sorted(CORPUS))
def test_every_answer_is_its_response_models_dump(project: Path, function_id: str) -> None:
    from iii_directory.plain_settings import plain_settings

    spec = deferred_table().functions[function_id]
    model = spec.response_model()
    assert model is not None
    settings = plain_settings({})
    answered = 0
    for payload in CORPUS[function_id] + [{}]:
        try:
            answer = quick_call.answer(function_id, payload, settings, cli.load_catalog(None))
        except DirectoryError:
            continue
        dumped = model.model_validate(answer).model_dump(mode="json", by_alias=True)
        # list rows keep the wire order the listing cache has always sent (`SkillRow.wire`);
        # every other answer was the model's dump and keeps its order too
        ordered = function_id != "directory::skills::list"
        assert json.dumps(dumped, sort_keys=not ordered) == json.dumps(answer, sort_keys=not ordered), payload
        answered += 1
    assert answered
