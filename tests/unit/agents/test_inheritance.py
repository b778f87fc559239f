"""`extends` chains and inheritance (§4.5), including the bundled `iii-minimal` alias."""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.content import bundled
from iii_directory.content.agents import (
    Catalog,
    Profile,
    bundled_profiles,
    compose_prompt,
    load_catalog,
    parse_profile,
    resolve,
)


def make(agent_id: str, front: str = "", body: str = "") -> Profile:
    raw = f"---\nname: {agent_id}\n{front}---\n{body}"
    return Profile(agent_id, parse_profile(raw), raw, Path(f"/agents/{agent_id}.md"))


def catalog(*profiles: Profile, with_bundled: bool = True) -> Catalog:
    entries = {p.id: p for p in profiles}
    if with_bundled:
        for agent_id, profile in bundled_profiles().items():
            entries.setdefault(agent_id, profile)
    return Catalog(Path("/agents"), dict(sorted(entries.items())))


def chain_of(depth: int) -> list[Profile]:
    """p0 extends p1 extends … extends p<depth> (p<depth> is the root)."""
    return [
        make(f"p{i}", f"extends: p{i + 1}\n" if i < depth else "", f"Body {i}.\n")
        for i in range(depth + 1)
    ]


def test_no_extends_serves_own_body_byte_identical() -> None:
    body = "  Leading spaces\n\n\ntrailing newlines\n\n\n"
    profile = make("solo", body=body)
    resolved = resolve(catalog(profile), profile)
    assert resolved.system_prompt == body
    assert resolved.inheritance_error is None
    assert [p.id for p in resolved.chain] == ["solo"]


def test_prompt_concatenation_example() -> None:
    base = make("base", body="Base body.\n\n")
    child = make("child", "extends: base\n", "Child body.\n")
    empty_child = make("empty", "extends: base\n", "")
    cat = catalog(base, child, empty_child)
    assert resolve(cat, child).system_prompt == "Base body.\n\nChild body.\n"
    # a blank child serves its parent's prompt unchanged (the first kept body verbatim, issue 17)
    assert resolve(cat, empty_child).system_prompt == "Base body.\n\n"


def test_compose_prompt_rules() -> None:
    assert compose_prompt([]) == ""
    assert compose_prompt(["  \n"]) == ""
    assert compose_prompt(["Own.\n\n\n"]) == "Own.\n\n\n"
    assert compose_prompt(["", "  \n\t\n"]) == ""
    assert compose_prompt(["  \n", "Only.\n\n"]) == "Only.\n\n"
    assert compose_prompt(["Parent.\n\n\n", "  "]) == "Parent.\n\n\n"
    assert compose_prompt(["Parent.", ""]) == "Parent."
    assert compose_prompt(["A\n\n", "", "B\n", " \n"]) == "A\n\nB\n"
    assert compose_prompt(["A\r\n\r\n", "B"]) == "A\n\nB"
    assert compose_prompt(["A", " ", "B\n", "C\n\n"]) == "A\n\nB\n\nC\n\n"


@pytest.mark.parametrize("depth", range(1, 9))
def test_chains_of_one_to_eight_hops_resolve(depth: int) -> None:
    profiles = chain_of(depth)
    resolved = resolve(catalog(*profiles), profiles[0])
    assert resolved.inheritance_error is None
    assert [p.id for p in resolved.chain] == [f"p{i}" for i in range(depth + 1)]
    assert resolved.system_prompt == "\n\n".join(f"Body {i}." for i in reversed(range(depth + 1))) + "\n"


def test_nine_hops_is_too_deep() -> None:
    profiles = chain_of(9)
    resolved = resolve(catalog(*profiles), profiles[0])
    trail = " → ".join(f"p{i}" for i in range(10))
    assert resolved.inheritance_error == (
        f'D415 invalid_input: agent profile "p0" extends chain is deeper than 8 levels: {trail}. '
        "Next: call directory::agents::list to browse agent profile ids."
    )
    assert resolved.system_prompt == "Body 0.\n"
    assert [p.id for p in resolved.chain] == ["p0"]
    # one level down the same chain is exactly 8 hops and resolves
    assert resolve(catalog(*profiles), profiles[1]).inheritance_error is None


def test_loop() -> None:
    a = make("a", "extends: b\nmodel: from-a\n", "A\n")
    b = make("b", "extends: a\nmodel: from-b\nskills: [s]\n", "B\n")
    resolved = resolve(catalog(a, b), a)
    assert resolved.inheritance_error == (
        'D415 invalid_input: agent profile "a" has an extends loop: a → b → a. '
        "Next: call directory::agents::list to browse agent profile ids."
    )
    assert resolved.system_prompt == "A\n"
    assert resolved.skills == ()
    assert resolved.model == "from-a"


def test_self_reference() -> None:
    c = make("c", "extends: c\n", "C\n")
    assert "has an extends loop: c → c." in (resolve(catalog(c), c).inheritance_error or "")


def test_local_iii_extending_iii_is_a_loop() -> None:
    local = make("iii", "extends: iii\n", "Mine\n")
    resolved = resolve(catalog(local), local)
    assert 'agent profile "iii" has an extends loop: iii → iii.' in (resolved.inheritance_error or "")


def test_unknown_parent() -> None:
    orphan = make("orphan", "extends: nope\n", "Own.\n")
    resolved = resolve(catalog(orphan), orphan)
    assert resolved.inheritance_error == (
        'D415 invalid_input: agent profile "orphan" extends unknown agent profile "nope". '
        "Next: call directory::agents::list to browse agent profile ids."
    )
    assert resolved.system_prompt == "Own.\n"


def test_unknown_grandparent_collapses_to_self() -> None:
    parent = make("parent", "extends: ghost\nmodel: pm\nfunctions: [p::f]\n", "P\n")
    child = make("child", "extends: parent\n", "C\n")
    resolved = resolve(catalog(parent, child), child)
    assert 'extends unknown agent profile "ghost".' in (resolved.inheritance_error or "")
    assert resolved.model is None
    assert resolved.functions == ()
    assert resolved.system_prompt == "C\n"


def test_union_and_nearest_rules() -> None:
    root = make(
        "root",
        "skills: [r1, shared]\nfunctions: [root::f, shared::f]\nmodel: root-model\n"
        "reasoning_effort: low\nskills_index: false\nlogo: 🌳\nicon: code\ncolor: green\n"
        "hidden: true\ncomposer_placeholder: root example\ndescription: Root\n",
        "Root.\n",
    )
    middle = make("middle", "extends: root\nskills: [shared, m1]\nfunctions: [m::f]\nreasoning_effort: high\n")
    leaf = make("leaf", "extends: middle\nskills: [l1, r1]\nfunctions: [shared::f, l::f]\n", "Leaf.\n")
    resolved = resolve(catalog(root, middle, leaf), leaf)
    assert resolved.skills == ("r1", "shared", "m1", "l1")
    assert resolved.functions == ("root::f", "shared::f", "m::f", "l::f")
    assert resolved.model == "root-model"
    assert resolved.reasoning_effort == "high"
    assert resolved.skills_index is False
    assert resolved.system_prompt == "Root.\n\nLeaf.\n"
    own = leaf.fields
    assert (own.logo, own.icon, own.color, own.hidden, own.composer_placeholder, own.description) == (
        None, None, None, False, None, ""
    )


def test_skills_index_is_none_when_nobody_sets_it_and_nearest_wins() -> None:
    root = make("root", "skills_index: false\n")
    child = make("child", "extends: root\nskills_index: true\n")
    plain = make("plain")
    cat = catalog(root, child, plain)
    assert resolve(cat, child).skills_index is True
    assert resolve(cat, plain).skills_index is None


def test_blank_extends_means_no_parent() -> None:
    profile = make("p", "extends: '  '\n", "Own\n")
    resolved = resolve(catalog(profile), profile)
    assert resolved.inheritance_error is None
    assert profile.fields.extends is None


def test_bundled_iii_minimal_alias_resolves_to_default() -> None:
    cat = catalog()
    default = resolve(cat, cat.get("default"))  # type: ignore[arg-type]
    alias = resolve(cat, cat.get("iii-minimal"))  # type: ignore[arg-type]
    assert alias.inheritance_error is None
    assert alias.system_prompt == default.system_prompt
    assert default.system_prompt.startswith("You are an iii agent.")


def test_legacy_child_of_the_alias() -> None:
    legacy = make("legacy", "extends: iii-minimal\n", "Legacy body.\n")
    cat = catalog(legacy)
    default_prompt = resolve(cat, cat.get("default")).system_prompt  # type: ignore[arg-type]
    assert resolve(cat, legacy).system_prompt == default_prompt.rstrip("\n") + "\n\nLegacy body.\n"


def test_shadowed_bundled_parent_is_the_local_file(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "default.md").write_text("---\nname: My default\n---\nMy default.\n")
    (agents / "child.md").write_text("---\nname: Child\nextends: iii-minimal\n---\nChild.\n")
    cat = load_catalog(agents, tmp_path / "none")
    assert cat.get("default").builtin is False  # type: ignore[union-attr]
    resolved = resolve(cat, cat.get("child"))  # type: ignore[arg-type]
    assert resolved.system_prompt == "My default.\n\nChild.\n"


def test_bundled_texts() -> None:
    prompt = bundled.prompt_text("iii-minimal") or ""
    default = bundled.agent_text("default") or ""
    assert prompt.split("\n---\n", 1)[1] == default.split("\n---\n", 1)[1]
    assert parse_profile(default).body.startswith("You are an iii agent.\n")
    iii = parse_profile(bundled.agent_text("iii") or "")
    assert iii.body.startswith("You are an iii agent worker.\n")
    assert iii.hidden is True and iii.name == "iii"
    alias = parse_profile(bundled.agent_text("iii-minimal") or "")
    assert (alias.name, alias.extends, alias.hidden, alias.body) == ("iii-minimal", "default", True, "")
    assert "deprecated" in alias.description.lower()
    default_fields = parse_profile(default)
    assert default_fields.name == "Default" and default_fields.hidden is False
    assert default_fields.composer_placeholder
    for phrase in (
        "agent_trigger", "directory::search_functions", "engine::functions::info", "directory::skills::get",
        "@fn(", "harness::ask", "#file(", "@mention", "data",
    ):
        assert phrase in prompt, phrase
    for phrase in (
        "harness::spawn", "::task", "engine::register_trigger", "compose-operation", "compose::add",
        "directory::search_functions", "engine::functions::info", "directory::skills::get",
    ):
        assert phrase in iii.body, phrase
