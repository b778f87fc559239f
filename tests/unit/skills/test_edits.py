"""`create` / `update` / `delete` (§6.4–§6.6, §11): checks in order, atomic writes with
self-write marks, precise on-change events, nothing written on refusal."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from iii_directory.directory import Directory

from .helpers import PeerEngine, call, error, ids, write

CREATE, UPDATE, DELETE, GET = (f"directory::skills::{op}" for op in ("create", "update", "delete", "get"))
ON_CHANGE = "directory::skills::on-change"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def test_create_writes_and_fires(directory: Directory, roots: dict[str, Path]) -> None:
    content = "---\ntype: how-to\nfunction_id: ns::run\n---\n# Run it\n\nSteps.\n"
    got = await call(directory, CREATE, {"id": "iii://ns/run.md", "content": content})
    path = roots["skills"] / "ns" / "run.md"
    assert path.read_text() == content
    assert got == {"id": "ns/run", "title": "Run it", "type": "how-to", "function_id": "ns::run",
                   "bytes": len(content.encode()), "modified_at": got["modified_at"]}
    assert got["modified_at"]
    assert directory.engine.emitted == [(ON_CHANGE, {"op": "create", "namespace": "ns", "id": "ns/run"})]
    assert directory.self_writes.consume(path)
    assert not (roots["skills"] / "ns" / "run.md.tmp").exists()
    assert await ids(directory) == ["ns/run"]


async def test_create_title_falls_back_to_the_id(directory: Directory) -> None:
    got = await call(directory, CREATE, {"id": "ns/plain", "content": "just text\n"})
    assert got["title"] == "ns/plain" and got["type"] is None
    got = await call(directory, CREATE, {"id": "ns/named", "content": "---\nname: Named\n---\nx\n"})
    assert got["title"] == "Named"


@pytest.mark.parametrize(
    ("skill_id", "message"),
    [
        ("ns/prompts/x", 'D115 invalid_input: id "ns/prompts/x" contains the reserved `prompts` path segment; rename that segment before creating the skill.'),
        ("system-prompts/x", 'D115 invalid_input: id "system-prompts/x" contains a `system-prompts` path segment, which the scanner classifies as a prompt — the created file would be invisible to directory::skills::list. Use directory::system-prompts::create for prompt files.'),
        ("ns/agents/x", 'D115 invalid_input: id "ns/agents/x" contains an `agents` path segment, which the scanner classifies as an agent — the created file would be invisible to directory::skills::list. Use directory::agents::create for agent profiles.'),
    ],
)
async def test_reserved_segments(directory: Directory, roots: dict[str, Path], skill_id: str, message: str) -> None:
    failure = await error(directory, CREATE, {"id": skill_id, "content": "x"})
    assert (failure.code, failure.message) == ("D115", message)
    assert not roots["skills"].exists()


async def test_reserved_words_as_a_last_segment_are_fine(directory: Directory) -> None:
    for skill_id in ["ns/agents", "ns/prompts", "promptsx/a"]:
        await call(directory, CREATE, {"id": skill_id, "content": "x"})
    assert await ids(directory) == ["ns/agents", "ns/prompts", "promptsx/a"]


async def test_agents_namespace_is_reserved(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["agents_skills"], "pdf/SKILL.md")
    failure = await error(directory, CREATE, {"id": "pdf/extra", "content": "x"})
    assert failure.message == (
        f'D115 invalid_input: namespace "pdf" is reserved by a system-installed skill under an '
        f"agents skills root ({roots['agents_skills']}); edit it with its owning tool, or copy it "
        "into skills_folder on disk to fork it.")
    failure = await error(directory, CREATE, {"id": "pdf", "content": "x"})
    assert failure.message.startswith('D114 invalid_input: skill "pdf" already exists.')


async def test_filter_hidden_ids_are_refused(make_directory: Any, peer: PeerEngine) -> None:
    peer.installed("shell")
    directory = make_directory(peer, filter_unregistered=True)
    failure = await error(directory, CREATE, {"id": "database/x", "content": "x"})
    assert failure.message == (
        'D115 invalid_input: id "database/x" would be hidden by filter_unregistered: its top '
        'namespace segment "database" is not an installed worker. Use a single-segment id, install '
        "the worker first, or set filter_unregistered: false.")
    await call(directory, CREATE, {"id": "shell/x", "content": "x"})
    await call(directory, CREATE, {"id": "note", "content": "x"})
    # unknown installed set: the check is skipped
    unknown = make_directory(filter_unregistered=True)
    await call(unknown, CREATE, {"id": "database/x", "content": "x"})


async def test_create_conflicts(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/index.md")
    for raw in ["ns", "ns/index", "ns/SKILL.md"]:
        failure = await error(directory, CREATE, {"id": raw, "content": "x"})
        assert failure.code == "D114"
        assert failure.message.endswith(
            "already exists. Next: call directory::skills::update to edit the existing skill; or "
            "call directory::skills::list to browse skill ids.")
    skipped = write(roots["skills"], "ns/skipped.md", "---\ntitle: T\n---\n")
    assert "ns/skipped" in await ids(directory)  # listed with a fallback row
    write(roots["skills"], "other/hidden/system-prompts.md")
    bad_link = roots["skills"] / "ns" / "dangling.md"
    os.symlink(roots["project"] / "nowhere.md", bad_link)
    failure = await error(directory, CREATE, {"id": "ns/dangling", "content": "x"})
    assert failure.message == (
        f"D114 invalid_input: a file already exists at {bad_link} (currently skipped by the "
        "scanner); edit or remove it on disk.")
    assert skipped.read_text() == "---\ntitle: T\n---\n"


async def test_content_checks(directory: Directory, roots: dict[str, Path]) -> None:
    failure = await error(directory, CREATE, {"id": "ns/big", "content": "x" * 262_145})
    assert failure.message == "D113 invalid_input: content is too large (262145 bytes; max 262144)."
    failure = await error(directory, CREATE, {"id": "ns/empty", "content": "---\ntitle: x\n---\n\n\n"})
    assert failure.message == ("D113 invalid_input: content has an empty body after the frontmatter "
                               "block; readers reject empty bodies.")
    failure = await error(directory, CREATE, {"id": "ns/empty", "content": ""})
    assert failure.code == "D113"
    failure = await error(directory, CREATE, {"id": "ns/sur", "content": "bad \ud800 text"})
    # refused before the handler, like a lone surrogate in any field (issue 17)
    assert failure.message == ('request field "content" holds the lone surrogate U+D800, '
                               "which is not Unicode text")
    await call(directory, CREATE, {"id": "ns/cap", "content": "x" * 262_144})
    assert not (roots["skills"] / "ns" / "big.md").exists()
    assert not (roots["skills"] / "ns" / "empty.md").exists()


async def test_create_refuses_symlink_escapes(directory: Directory, roots: dict[str, Path]) -> None:
    outside = roots["project"] / "outside"
    outside.mkdir()
    roots["skills"].mkdir()
    os.symlink(outside, roots["skills"] / "escape")
    failure = await error(directory, CREATE, {"id": "escape/x", "content": "x"})
    assert failure.code == "D115" and "resolves outside its root" in failure.message
    assert list(outside.iterdir()) == []


async def test_create_never_writes_local_or_agent_roots(directory: Directory, roots: dict[str, Path]) -> None:
    (roots["local"] / "ns").mkdir(parents=True)
    await call(directory, CREATE, {"id": "ns/new", "content": "x"})
    assert (roots["skills"] / "ns" / "new.md").exists()
    # the local namespace shadows it: invisible until the local directory goes
    assert await ids(directory) == []


async def test_update_in_place(directory: Directory, roots: dict[str, Path]) -> None:
    local = write(roots["local"], "ns/index.md", "# Old\n\nold\n")
    got = await call(directory, UPDATE, {"id": "ns", "content": "# New title\n\nnew\n"})
    assert got["id"] == "ns" and got["title"] == "New title"
    assert local.read_text() == "# New title\n\nnew\n"
    assert not (roots["skills"] / "ns").exists()
    assert directory.engine.emitted == [(ON_CHANGE, {"op": "update", "namespace": "ns", "id": "ns"})]
    assert directory.self_writes.consume(local)


async def test_update_never_creates(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/alpha.md")
    write(roots["skills"], "ns/beta.md")
    failure = await error(directory, UPDATE, {"id": "ns/alpah", "content": "x"})
    assert failure.message == (
        'D110 not_found: skill "ns/alpah" does not exist. Did you mean: ns/alpha, ns/beta. Next: '
        "call directory::skills::list to browse skill ids; or call directory::skills::download to "
        "materialize a missing bundle first; or call directory::skills::create to author a new skill.")
    assert not (roots["skills"] / "ns" / "alpah.md").exists()
    assert directory.engine.emitted == []


async def test_update_checks_content_first(directory: Directory, roots: dict[str, Path]) -> None:
    failure = await error(directory, UPDATE, {"id": "missing/x", "content": "---\na: 1\n---\n"})
    assert failure.code == "D113"


async def test_update_and_delete_refuse_agent_skills(directory: Directory, roots: dict[str, Path]) -> None:
    doc = write(roots["agents_skills"], "pdf/SKILL.md", "# PDF\n\nx\n")
    for function, data in [(UPDATE, {"id": "pdf", "content": "y"}), (DELETE, {"id": "pdf/SKILL.md"})]:
        failure = await error(directory, function, data)
        assert failure.code == "D116"
        assert failure.message.startswith(
            f'D116 invalid_input: skill "pdf{"" if function == UPDATE else "/index"}" is system-installed '
            f"under an agents skills root ({roots['agents_skills']}) and read-only;")
    assert doc.read_text() == "# PDF\n\nx\n"


async def test_delete_prunes_empty_parents(directory: Directory, roots: dict[str, Path]) -> None:
    deep = write(roots["skills"], "ns/deep/er/doc.md")
    write(roots["skills"], "ns/keep.md")
    got = await call(directory, DELETE, {"id": "ns/deep/er/doc"})
    assert got == {"id": "ns/deep/er/doc"}
    assert not deep.exists() and not (roots["skills"] / "ns" / "deep").exists()
    assert (roots["skills"] / "ns" / "keep.md").exists()
    assert directory.engine.emitted == [
        (ON_CHANGE, {"op": "delete", "namespace": "ns", "id": "ns/deep/er/doc"})]
    await call(directory, DELETE, {"id": "ns/keep"})
    assert roots["skills"].is_dir() and not (roots["skills"] / "ns").exists()


async def test_delete_answers_the_resolved_id_and_unshadows(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "shell/exec.md")
    write(roots["local"], "shell/index.md")
    assert await ids(directory) == ["shell"]
    assert await call(directory, DELETE, {"id": "shell"}) == {"id": "shell/index"}
    assert roots["local"].is_dir() and not (roots["local"] / "shell").exists()
    assert await ids(directory) == ["shell/exec"]


async def test_delete_miss(directory: Directory) -> None:
    failure = await error(directory, DELETE, {"id": "nope"})
    assert failure.message.startswith('D110 not_found: skill "nope" does not exist. Next: call directory::skills::list')


@pytest.mark.parametrize("function", [CREATE, UPDATE, DELETE])
async def test_d112_and_validation_on_every_write(directory: Directory, roots: dict[str, Path], function: str) -> None:
    data: dict[str, Any] = {"id": "db::execute", "content": "x"}
    assert (await error(directory, function, data)).code == "D112"
    for bad in ["../x", "/abs", "a\\b", "a\0b", "UP", "a/../../b"]:
        failure = await error(directory, function, {"id": bad, "content": "x"})
        assert failure.code == "invocation_failed"
    assert not roots["skills"].exists()


async def test_round_trip_through_raw(directory: Directory, roots: dict[str, Path]) -> None:
    await call(directory, CREATE, {"id": "ns/doc", "content": "---\ntitle: A\n---\nbody\n"})
    raw = (await call(directory, GET, {"id": "ns/doc", "raw": True}))["raw"]
    await call(directory, UPDATE, {"id": "ns/doc.md", "content": raw.replace("title: A", "title: B")})
    assert (await call(directory, GET, {"id": "ns/doc"}))["title"] == "B"


async def test_symlinks_inside_a_root_are_followed_and_outside_never(directory: Directory,
                                                                     roots: dict[str, Path]) -> None:
    real = write(roots["skills"], "ns/real.md", "# Real\n\nx\n")
    os.symlink(real, roots["skills"] / "ns" / "alias.md")
    outside = write(roots["project"], "outside/secret.md", "# Secret\n\nx\n")
    os.symlink(outside, roots["skills"] / "ns" / "leak.md")
    os.symlink(outside.parent, roots["skills"] / "escape")
    assert await ids(directory) == ["ns/alias", "ns/real"]
    await call(directory, UPDATE, {"id": "ns/alias", "content": "# Through alias\n\ny\n"})
    assert real.read_text() == "# Through alias\n\ny\n"
    assert (roots["skills"] / "ns" / "alias.md").is_symlink()
    for function, data in [(GET, {"id": "ns/leak"}), (UPDATE, {"id": "ns/leak", "content": "z"}),
                           (DELETE, {"id": "escape/secret"}), (UPDATE, {"id": "escape/secret", "content": "z"})]:
        assert (await error(directory, function, data)).code == "D110"
    assert outside.read_text() == "# Secret\n\nx\n"
    assert (await error(directory, CREATE, {"id": "escape/new", "content": "x"})).code == "D115"
    assert sorted(p.name for p in outside.parent.iterdir()) == ["secret.md"]
    await call(directory, DELETE, {"id": "ns/alias"})
    assert real.exists() and not (roots["skills"] / "ns" / "alias.md").exists()
