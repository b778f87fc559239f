"""Fuzzing kit references, semver ranges, the kit functions and bundle manifests (issue 11):
parsers answer or raise their own error type, kit functions answer or refuse with a coded
error, and a downloaded bundle — whatever its paths and contents — is either refused whole or
written entirely inside the skills and agents roots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, strategies as st
from reliability_support import fuzz_settings, tree

from iii_directory.config import Settings
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.kits.ref import (
    RefError,
    bump_kind,
    is_major_jump,
    max_satisfying,
    parse_kit_ref,
    parse_requirement,
    parse_version,
    satisfies,
)
from iii_directory.sources.bundle import apply_plan, plan_registry_bundle
from iii_directory.testing.registry import MockRegistry

pytestmark = [pytest.mark.timeout(900)]

NUM = st.one_of(st.integers(0, 20).map(str), st.sampled_from(["*", "x", "X", "01", "-1", "999999999999999999999"]))
PRE = st.one_of(st.just(""), st.sampled_from(["-rc.1", "-alpha", "-0", "-beta.2", "+build.5", "-rc.1+b", "-", "+"]))
VERSION = st.one_of(
    st.tuples(NUM, NUM, NUM, PRE).map(lambda t: f"{t[0]}.{t[1]}.{t[2]}{t[3]}"),
    st.tuples(NUM, NUM).map(lambda t: f"{t[0]}.{t[1]}"), NUM, st.text(max_size=12),
)
OPERATOR = st.sampled_from(["", "^", "~", "=", ">", ">=", "<", "<=", "~>", "==", "!", " ", "v", "^v"])
RANGE = st.one_of(
    st.lists(st.tuples(OPERATOR, VERSION).map("".join), min_size=1, max_size=3).map(", ".join),
    st.lists(st.tuples(OPERATOR, VERSION).map("".join), min_size=1, max_size=3).map(" || ".join),
    st.text(max_size=20),
)
NAME = st.one_of(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), st.text(max_size=8))
KIT_REF = st.one_of(
    st.tuples(NAME, NAME).map("/".join),
    st.tuples(NAME, NAME, st.one_of(VERSION, RANGE, st.sampled_from(["latest", "beta", "", "@"]))).map(
        lambda t: f"{t[0]}/{t[1]}@{t[2]}"),
    st.text(max_size=30),
    st.sampled_from(["acme/team", "acme/team@^1", "acme/team@1.0.0", "acme/team@latest", "../x/y", "a/b/c"]),
)


@given(KIT_REF, RANGE, st.lists(VERSION, max_size=6), VERSION, VERSION)
@fuzz_settings(ci=1000)
def test_refs_and_ranges_parse_or_refuse(ref: str, range_text: str, versions: list[str], a: str, b: str) -> None:
    try:
        parsed = parse_kit_ref(ref)
    except RefError:
        pass
    else:
        assert parsed.kit.count("/") == 1
    try:
        requirement = parse_requirement(range_text)
    except RefError:
        requirement = None
    if requirement is not None:
        for text in versions:
            version = parse_version(text)
            if version is not None:
                assert isinstance(requirement.matches(version), bool)
        best = max_satisfying(range_text, versions)
        assert best is None or best in {v.strip() for v in versions}
    assert satisfies(range_text, a) in (True, False, None)
    assert isinstance(is_major_jump(a, b), bool)
    assert bump_kind(a, b) in (None, "major", "minor", "patch", "prerelease")


# ------------------------------------------------------------------------- kit functions

PLAN_ID = st.one_of(st.from_regex(r"kp_[A-Za-z0-9]{1,8}", fullmatch=True), st.text(max_size=20),
                    st.sampled_from(["../../etc/passwd", "kp_../../x", "kp_a\n", "/tmp/x", "kp_", ""]))
PATH = st.one_of(st.sampled_from(["skills/tickets/flow.md", "agents/planner.md", "../kits.lock", "/etc/passwd",
                                  "skills/../../outside/secret.md", "agents/../../x.md", ""]), st.text(max_size=30))


@st.composite
def kit_call(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return "directory::download-kit", {"kit": draw(KIT_REF)}
    if kind == 1:
        return "directory::kits::get", {"kit": draw(KIT_REF)}
    if kind == 2:
        return "directory::kits::diff", {"kit": draw(KIT_REF), "path": draw(PATH)}
    if kind == 3:
        return draw(st.sampled_from(["directory::kits::plan", "directory::kits::discard"])), {"plan_id": draw(PLAN_ID)}
    if kind == 4:
        return "directory::kits::apply", {"plan_id": draw(PLAN_ID),
                                          "decisions": draw(st.dictionaries(PATH, st.sampled_from(
                                              ["overwrite", "keep", "mine", "kit", "merged", "bogus"]), max_size=2))}
    if kind == 5:
        return "directory::kits::ignore", {"kit": draw(KIT_REF), "version": draw(VERSION)}
    return draw(st.sampled_from(["directory::kits::plan-update", "directory::kits::remove",
                                 "directory::kits::check-updates"])), {"kit": draw(KIT_REF)}


ALLOWED = ("skills", "agents", ".agents", ".iii", "kits.lock", "home/.iii")


def outside(project: Path) -> dict[str, bytes]:
    return {k: v for k, v in tree(project).items() if not k.startswith(ALLOWED)}


@pytest.fixture
def kit_directory(settings: Settings, roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Any:
    from kitfake import FakeComposeEngine, KitCatalog, team_v1

    monkeypatch.delenv("CI", raising=False)
    with MockRegistry() as registry:
        KitCatalog(registry).publish("acme/team", team_v1())
        (roots["project"] / "worker-compose.yaml").write_text('containers:\n  kanban:\n    version: "^1.4"\n')
        (roots["project"] / "outside").mkdir()
        (roots["project"] / "outside" / "secret.md").write_text("# Secret\n\nKeep.\n")
        yield Directory(settings=settings.model_copy(update={"registry_url": registry.url}),
                        engine=FakeComposeEngine())


@given(st.lists(kit_call(), min_size=1, max_size=4))
@fuzz_settings(ci=150)
async def test_kit_functions_answer_or_refuse_inside_the_roots(kit_directory: Directory, roots: dict[str, Path],
                                                               calls: list[tuple[str, dict[str, Any]]]) -> None:
    before = outside(roots["project"])
    for function_id, data in calls:
        try:
            answer = await kit_directory.invoke(function_id, data)
        except DirectoryError as exc:
            assert exc.code and exc.message
            continue
        assert isinstance(answer, dict)
    assert outside(roots["project"]) == before


# ----------------------------------------------------------------------- bundle manifests

BUNDLE_PATH = st.one_of(
    st.lists(st.one_of(st.from_regex(r"[a-z0-9_-]{1,8}(\.md)?", fullmatch=True),
                       st.sampled_from(["..", ".", "", "skills", "agents", "prompts", "system-prompts", "SKILL.md",
                                        "index.md", "~", "\x00", "a\\b", "C:", ".md.tmp", "x.md.tmp"])),
             min_size=1, max_size=5).map("/".join),
    st.sampled_from(["/etc/passwd", "../../outside/secret.md", "skills/../../../outside/x.md", "agents/../x.md",
                     "agents/ok.md", "skills/index.md", "//double.md"]),
    st.text(max_size=30),
)
ENTRY = st.one_of(
    st.fixed_dictionaries({"path": BUNDLE_PATH, "content": st.one_of(st.text(max_size=60), st.none())}),
    st.dictionaries(st.sampled_from(["path", "content", "x"]), st.one_of(st.text(max_size=10), st.integers()),
                    max_size=3),
    st.text(max_size=5),
)
PAYLOAD = st.one_of(
    st.fixed_dictionaries({"skills": st.lists(ENTRY, max_size=6)},
                          optional={"name": st.sampled_from(["mailer", "other", ""]), "version": st.text(max_size=5)}),
    st.lists(ENTRY, max_size=3), st.text(max_size=10), st.none(),
    st.fixed_dictionaries({"skills": st.one_of(st.none(), st.text(max_size=5), st.integers())}),
)


@given(PAYLOAD)
@example({"skills": [{"path": "00", "content": None}, {"path": "00/0", "content": None}]})
@fuzz_settings(ci=500)
def test_bundle_manifests_are_refused_whole_or_written_inside_the_roots(tmp_path_factory: pytest.TempPathFactory,
                                                                       payload: Any) -> None:
    base = tmp_path_factory.mktemp("bundle")
    skills, agents = base / "skills", base / "agents"
    (base / "outside").mkdir()
    (base / "outside" / "secret.md").write_text("keep")
    try:
        plan = plan_registry_bundle(payload, "mailer", skills, agents, {"owned": "acme/team"})
    except DirectoryError as exc:
        assert exc.code and exc.message
        assert tree(base) == {"outside/secret.md": b"keep"}, "a refused bundle wrote something"
        return
    for planned in plan.files:
        assert planned.target.resolve().is_relative_to(skills.resolve()) or \
            planned.target.resolve().is_relative_to(agents.resolve()), planned.target
    apply_plan(plan, None)
    written = tree(base)
    assert written.pop("outside/secret.md") == b"keep"
    assert all(k.startswith(("skills/", "agents/")) for k in written), sorted(written)
    staged = {p.target.relative_to(base).as_posix() + ".tmp" for p in plan.files}
    assert not staged & set(written), "a staging file was left behind"


@pytest.mark.parametrize("paths", [["00", "00/0"], ["guide/a.md/x.md", "guide/a.md"], ["agents/../x", "x/y"]])
def test_a_bundle_naming_one_path_as_file_and_folder_is_refused_whole(tmp_path: Path, paths: list[str]) -> None:
    """Found by the nightly fuzz run: `00` and `00/0` in one bundle passed planning; applying
    wrote `00` and then failed creating the folder `00/`, leaving half a bundle."""
    payload = {"skills": [{"path": p, "content": f"# {p}\n\nBody.\n"} for p in paths]}
    try:
        plan = plan_registry_bundle(payload, "mailer", tmp_path / "skills", tmp_path / "agents", {})
    except DirectoryError as exc:
        assert exc.code == "invocation_failed"
        assert "both a file and a folder" in exc.message or exc.message.startswith("invalid skill path")
        assert tree(tmp_path) == {}
        return
    apply_plan(plan, None)  # a plan that passed must apply whole
    assert len(tree(tmp_path)) == len(plan.files)
