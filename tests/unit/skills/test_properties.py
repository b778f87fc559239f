"""Property tests: id normalisation (§3.5), and random ids / markdown / YAML thrown at
get / create / update — always a coded error or a valid row, never a crash, never a file
outside a root."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import anyio
import yaml
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from iii_directory.config import Settings
from iii_directory.content.ids import is_valid_id, normalize_skill_id
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError
from iii_directory.port import StandaloneEngine

SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)
VALID_ID = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)
NASTY = st.sampled_from([
    "..", ".", "/", "//", "\\", "\0", "::", "iii://", "https://", ".md", "SKILL.md", "SKILLS.md",
    "prompts", "system-prompts", "agents", "index", "link", "link/x", "~", "$HOME", " ", "\n", "é", "A",
])
ANY_ID = st.one_of(
    VALID_ID,
    st.text(max_size=40),
    st.lists(st.one_of(SEGMENT, NASTY), min_size=1, max_size=6).map("".join),
    st.lists(st.one_of(SEGMENT, NASTY), min_size=1, max_size=6).map("/".join),
)
ALLOWED_CODES = {"invocation_failed", "D110", "D112", "D113", "D114", "D115", "D116"}


@given(ANY_ID)
def test_normalisation_yields_a_valid_id_or_an_error(raw: str) -> None:
    try:
        normalized = normalize_skill_id(raw)
    except DirectoryError as exc:
        assert exc.code in {"invocation_failed", "D112"}
        return
    assert is_valid_id(normalized)
    assert normalize_skill_id(normalized) == normalized


@given(VALID_ID)
def test_every_form_of_a_valid_id_normalises_to_it(skill_id: str) -> None:
    for form in (skill_id, f" {skill_id} ", f"iii://{skill_id}", f"{skill_id}.md", f"iii://{skill_id}.md"):
        assert normalize_skill_id(form) == skill_id
    assert normalize_skill_id(f"{skill_id}/SKILL.md") == f"{skill_id}/index"
    assert normalize_skill_id(f"iii://{skill_id}/SKILLS.md") == f"{skill_id}/index"


YAML_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)
FRONTMATTER = st.one_of(
    st.dictionaries(st.sampled_from(["title", "name", "type", "function_id", "description",
                                     "disable-model-invocation", "other"]), YAML_VALUE, max_size=5)
    .map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    st.text(max_size=60),
    st.just("a: &a [1, 2]\nb: [*a, *a]\n"),
    st.just("!!python/object:os.system ls\n"),
)
CONTENT = st.one_of(
    st.text(max_size=200),
    st.tuples(FRONTMATTER, st.text(max_size=120)).map(lambda p: f"---\n{p[0]}\n---\n{p[1]}"),
)


def files_under(path: Path) -> set[Path]:
    return {Path(d) / f for d, _, fs in os.walk(path) for f in fs}


async def exercise(directory: Directory, ops: list[tuple[str, str, str]]) -> None:
    for op, raw_id, content in ops:
        data: dict[str, Any] = {"id": raw_id}
        if op in ("create", "update"):
            data["content"] = content
        try:
            result = await directory.invoke(f"directory::skills::{op}", data)
        except DirectoryError as exc:
            assert exc.code in ALLOWED_CODES, (exc.code, exc.message)
            continue
        assert is_valid_id(result["id"]) or result["id"] == "index"
        if op in ("create", "update"):
            assert result["bytes"] == len(content.encode("utf-8"))
            assert isinstance(result["title"], str) and result["title"]
        if op == "get":
            assert isinstance(result["body"], str)
    listed = await directory.invoke("directory::skills::list", {})
    for row in listed["skills"]:
        assert isinstance(row["title"], str) and isinstance(row["description"], str)
    index = await directory.invoke("directory::skills::index", {})
    assert index["body"].startswith("# Skills index\n\n")


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["create", "update", "get", "delete"]), ANY_ID, CONTENT),
                min_size=1, max_size=6))
def test_random_requests_never_crash_or_escape(ops: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        skills = base / "project" / "skills"
        outside = base / "outside"
        outside.mkdir()
        (outside / "keep.md").write_text("# Outside\n\nx\n")
        skills.mkdir(parents=True)
        os.symlink(outside, skills / "link")
        settings = Settings(
            skills_folder=str(skills), local_skills_folder=str(base / "project" / "local"),
            agents_folder=str(base / "project" / "agents"),
            agents_skills_folder=str(base / "project" / ".agents" / "skills"),
            global_agents_skills_folder=str(base / "home" / ".agents" / "skills"),
            global_agents_folder=str(base / "home" / ".iii" / "agents"),
            filter_unregistered=False,
        )
        before = files_under(base) - files_under(skills)
        anyio.run(exercise, Directory(settings=settings, engine=StandaloneEngine()), ops)
        after = files_under(base) - files_under(skills)
        assert after == before
        assert (outside / "keep.md").read_text() == "# Outside\n\nx\n"


@hsettings(max_examples=150, deadline=None)
@given(st.lists(VALID_ID, max_size=30, unique=True), VALID_ID)
def test_pruned_suggestions_equal_the_full_ranking(visible: list[str], missed: str) -> None:
    from iii_directory.content.skills import Origin, SkillFile, SkillsView, get_score, suggest_for_get
    from iii_directory.content.visibility import Visibility

    root = Path("/nonexistent")
    view = SkillsView(
        files=tuple(SkillFile(i, root / f"{i}.md", root, Origin.SKILLS) for i in sorted(visible)),
        visibility=Visibility(False, None, frozenset(), frozenset()),
        skills_root=root, local_root=root, agent_roots=(), agents_namespaces={},
    )
    scored = sorted(((get_score(missed, f.id), f.id) for f in view.files), key=lambda p: -p[0])
    expected = [view.display_id(fid) for score, fid in scored[:3] if score > 0]
    assert suggest_for_get(view, missed) == expected
