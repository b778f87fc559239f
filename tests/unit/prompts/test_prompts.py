"""System prompts: scan, bundled copies and every function of `directory::system-prompts::*`
(surfaces.md §3.8, §4.4, §7, §13), driven through `Directory.invoke`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iii_directory.content import bundled
from iii_directory.content.prompts import scan_prompts
from iii_directory.directory import Directory
from iii_directory.errors import DirectoryError

PROMPT = "---\ndescription: Opens pull requests.\n---\nYou open pull requests.\n"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


async def call(directory: Directory, function: str, data: dict) -> dict:
    return await directory.invoke(f"directory::system-prompts::{function}", data)


async def error_of(directory: Directory, function: str, data: dict) -> DirectoryError:
    with pytest.raises(DirectoryError) as caught:
        await call(directory, function, data)
    return caught.value


def names(result: dict) -> list[str]:
    return [row["name"] for row in result["prompts"]]


def events(directory: Directory) -> list[dict]:
    return [p for t, p in directory.engine.emitted if t == "directory::system-prompts::on-change"]  # type: ignore[attr-defined]


# --- list / scan ----------------------------------------------------------------------------


async def test_list_shows_prompt_files_and_bundled(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "ns" / "system-prompts" / "open-pr.md", PROMPT)
    result = await call(directory, "list", {})
    assert names(result) == ["iii-minimal", "open-pr"]
    row = result["prompts"][1]
    assert row["description"] == "Opens pull requests."
    assert row["builtin"] is False
    assert row["modified_at"].endswith("+00:00")
    bundled_row = result["prompts"][0]
    assert bundled_row["builtin"] is True
    assert bundled_row["modified_at"] == ""
    assert set(bundled_row) == {"name", "description", "modified_at", "builtin"}


async def test_only_system_prompts_paths_are_prompts(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "ns" / "prompts" / "old.md", PROMPT)
    write(roots["skills"] / "ns" / "prompts" / "system-prompts" / "inner.md", PROMPT)
    write(roots["skills"] / "ns" / "system-promptsx" / "not-a-prompt.md", PROMPT)
    write(roots["skills"] / "ns" / "skill.md", PROMPT)
    assert names(await call(directory, "list", {})) == ["iii-minimal", "inner"]


async def test_scan_skips_invalid_files(directory: Directory, roots: dict[str, Path]) -> None:
    base = roots["skills"] / "system-prompts"
    write(base / "no-fm.md", "Just a body.\n")
    write(base / "bad-yaml.md", "---\ndescription: [unclosed\n---\nBody\n")
    write(base / "no-desc.md", "---\nname: no-desc\n---\nBody\n")
    write(base / "blank-desc.md", "---\ndescription: '   '\n---\nBody\n")
    write(base / "Bad-Stem.md", PROMPT)
    write(base / "declared-bad.md", "---\nname: Not Valid\ndescription: d\n---\nBody\n")
    write(base / "ok.md", PROMPT)
    assert names(await call(directory, "list", {})) == ["iii-minimal", "ok"]


async def test_declared_name_wins_and_first_path_wins_duplicates(directory: Directory, roots: dict[str, Path]) -> None:
    base = roots["skills"]
    write(base / "a" / "system-prompts" / "stem.md", "---\nname: shared\ndescription: first\n---\nA\n")
    write(base / "b" / "system-prompts" / "shared.md", "---\ndescription: second\n---\nB\n")
    rows = (await call(directory, "list", {}))["prompts"]
    assert [(r["name"], r["description"]) for r in rows] == [("iii-minimal", rows[0]["description"]), ("shared", "first")]


async def test_local_system_prompts_dir_shadows_global_wholesale(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "system-prompts" / "global-only.md", PROMPT)
    write(roots["skills"] / "system-prompts" / "both.md", "---\ndescription: global\n---\nG\n")
    write(roots["local"] / "system-prompts" / "both.md", "---\ndescription: local\n---\nL\n")
    rows = (await call(directory, "list", {}))["prompts"]
    assert [(r["name"], r["description"]) for r in rows if not r["builtin"]] == [("both", "local")]
    got = await call(directory, "get", {"name": "both"})
    assert got["body"] == "L\n"


async def test_cross_root_names_are_not_deduplicated(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "ns" / "system-prompts" / "twice.md", "---\ndescription: global\n---\nG\n")
    write(roots["local"] / "other" / "system-prompts" / "twice.md", "---\ndescription: local\n---\nL\n")
    rows = [r for r in (await call(directory, "list", {}))["prompts"] if r["name"] == "twice"]
    assert [r["description"] for r in rows] == ["local", "global"]
    assert (await call(directory, "get", {"name": "twice"}))["body"] == "L\n"


def test_local_root_nested_in_skills_root_lists_a_file_once(roots: dict[str, Path]) -> None:
    write(roots["local"] / "system-prompts" / "nested.md", PROMPT)
    entries = scan_prompts(roots["skills"], roots["local"])
    assert [e.name for e in entries] == ["nested"]


async def test_local_file_shadows_bundled_prompt(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "system-prompts" / "iii-minimal.md", "---\ndescription: mine\n---\nMine.\n")
    rows = (await call(directory, "list", {}))["prompts"]
    assert [(r["name"], r["builtin"], r["description"]) for r in rows] == [("iii-minimal", False, "mine")]


async def test_list_reads_disk_on_every_call(directory: Directory, roots: dict[str, Path]) -> None:
    assert names(await call(directory, "list", {})) == ["iii-minimal"]
    write(roots["skills"] / "system-prompts" / "late.md", PROMPT)
    assert names(await call(directory, "list", {})) == ["iii-minimal", "late"]


# --- get ------------------------------------------------------------------------------------


async def test_get_returns_body_and_metadata(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "x" / "system-prompts" / "static.md", PROMPT)
    got = await call(directory, "get", {"name": "static"})
    assert got["name"] == "static"
    assert got["description"] == "Opens pull requests."
    assert got["body"] == "You open pull requests.\n"
    assert got["builtin"] is False
    assert got["modified_at"].endswith("+00:00")
    assert "raw" not in got


async def test_get_raw_round_trips_bytes(directory: Directory, roots: dict[str, Path]) -> None:
    content = "---\r\ndescription: Grüße — CRLF\r\n---\r\n\r\nBody with é and trailing spaces   \r\n\r\n"
    write(roots["skills"] / "system-prompts" / "crlf.md", content)
    got = await call(directory, "get", {"name": "crlf", "raw": True})
    assert got["raw"] == content
    assert got["body"] == "\r\nBody with é and trailing spaces   \r\n\r\n"
    assert got["description"] == "Grüße — CRLF"


async def test_get_bundled_prompt(directory: Directory) -> None:
    got = await call(directory, "get", {"name": "iii-minimal", "raw": True})
    assert got["builtin"] is True
    assert got["modified_at"] == ""
    assert got["raw"] == bundled.prompt_text("iii-minimal")
    assert got["body"].startswith("You are an iii agent.")
    assert got["raw"].endswith(got["body"])


async def test_get_unknown_name_is_d210_with_suggestions(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "system-prompts" / "open-pr.md", PROMPT)
    error = await error_of(directory, "get", {"name": "nope"})
    assert error.code == "D210"
    assert error.message.startswith('D210 not_found: system prompt "nope" does not exist.')
    assert error.message.endswith(
        " Next: call directory::system-prompts::list to browse system prompt names."
    )
    error = await error_of(directory, "get", {"name": "open-p"})
    assert 'Did you mean: open-pr, iii-minimal.' in error.message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "name must be non-empty"),
        ("   ", "name must be non-empty"),
        ("Bad/Name", "name may only contain lowercase ASCII letters, digits, '-' and '_': \"Bad/Name\""),
        ("a" * 65, "name too long (65 chars; max 64)"),
    ],
)
async def test_name_rule_errors_are_bare(directory: Directory, name: str, message: str) -> None:
    for function in ("get", "delete"):
        error = await error_of(directory, function, {"name": name})
        assert error.code == "invocation_failed"
        assert error.message == message


async def test_wrong_request_types_are_rejected(directory: Directory) -> None:
    error = await error_of(directory, "get", {"name": 5})
    assert 'field "name"' in error.message
    error = await error_of(directory, "create", {"name": "x"})
    assert 'field "content"' in error.message


async def test_get_rejects_oversized_and_empty_files_while_list_stays_healthy(
    directory: Directory, roots: dict[str, Path]
) -> None:
    big = write(roots["skills"] / "system-prompts" / "big.md", "---\ndescription: big\n---\n" + "x" * 300_000)
    empty = write(roots["skills"] / "system-prompts" / "empty.md", "---\ndescription: empty\n---\n\n\n")
    assert names(await call(directory, "list", {})) == ["big", "empty", "iii-minimal"]
    error = await error_of(directory, "get", {"name": "big"})
    assert error.message == f"file {big} is too large ({big.stat().st_size} bytes; max 262144)"
    error = await error_of(directory, "get", {"name": "big", "raw": True})
    assert "too large" in error.message
    error = await error_of(directory, "get", {"name": "empty"})
    assert error.message == f"file {empty} has empty body"
    raw = await call(directory, "get", {"name": "empty", "raw": True})
    assert raw["raw"] == "---\ndescription: empty\n---\n\n\n"


async def test_get_rejects_non_utf8_file(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"] / "system-prompts" / "latin.md", b"---\ndescription: d\n---\nBody \xe9\n")
    names_now = names(await call(directory, "list", {}))
    assert "latin" not in names_now
    path.write_bytes(b"---\ndescription: d\n---\nBody\n")
    assert (await call(directory, "get", {"name": "latin"}))["body"] == "Body\n"


# --- create ---------------------------------------------------------------------------------


async def test_create_writes_file_and_fires_event(directory: Directory, roots: dict[str, Path]) -> None:
    result = await call(directory, "create", {"name": "reviewer", "content": PROMPT})
    target = roots["skills"] / "system-prompts" / "reviewer.md"
    assert target.read_bytes() == PROMPT.encode()
    assert result == {
        "name": "reviewer",
        "description": "Opens pull requests.",
        "bytes": len(PROMPT.encode()),
        "modified_at": result["modified_at"],
    }
    assert result["modified_at"].endswith("+00:00")
    assert events(directory) == [{"op": "create", "name": "reviewer"}]
    assert not target.with_name("reviewer.md.tmp").exists()
    got = await call(directory, "get", {"name": "reviewer"})
    assert got["body"] == "You open pull requests.\n"


async def test_create_with_matching_declared_name(directory: Directory) -> None:
    content = "---\nname: same\ndescription: d\n---\nBody\n"
    assert (await call(directory, "create", {"name": "same", "content": content}))["name"] == "same"


async def test_create_twice_is_d214(directory: Directory) -> None:
    await call(directory, "create", {"name": "dup", "content": PROMPT})
    error = await error_of(directory, "create", {"name": "dup", "content": PROMPT})
    assert error.code == "D214"
    assert error.message == (
        'D214 invalid_input: system prompt "dup" already exists. Next: call '
        "directory::system-prompts::update to edit the existing system prompt; or call "
        "directory::system-prompts::list to browse system prompt names."
    )


async def test_create_refuses_a_name_found_anywhere_in_the_scan(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "deep" / "ns" / "system-prompts" / "elsewhere.md", PROMPT)
    error = await error_of(directory, "create", {"name": "elsewhere", "content": PROMPT})
    assert error.code == "D214"
    assert not (roots["skills"] / "system-prompts" / "elsewhere.md").exists()


async def test_create_refuses_a_skipped_file_at_the_target(directory: Directory, roots: dict[str, Path]) -> None:
    target = write(roots["skills"] / "system-prompts" / "broken.md", "no frontmatter\n")
    error = await error_of(directory, "create", {"name": "broken", "content": PROMPT})
    assert error.message == (
        f"D214 invalid_input: a file already exists at {target} (currently skipped by the "
        "scanner); edit or remove it on disk."
    )
    assert target.read_text() == "no frontmatter\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("---\ndescription: d\n---\n" + "x" * 262_200, None),
        ("---\ndescription: d\n---\n\n\n", "D113 invalid_input: content has an empty body after the frontmatter block; readers reject empty bodies."),
        ("", "D113 invalid_input: content has an empty body after the frontmatter block; readers reject empty bodies."),
        ("Body only\n", "D213 invalid_input: missing YAML frontmatter (expected --- ... --- block at file start)."),
        ("---\ndescription: d\n---\nBody\n".replace("d\n", "[oops\n"), None),
        ("---\nname: x\n---\nBody\n", "D213 invalid_input: frontmatter is missing a non-empty `description`; the next scan would skip this prompt."),
        ("---\ndescription: 5\n---\nBody\n", "D213 invalid_input: invalid frontmatter YAML: `description` must be a string."),
        ("---\nname: other\ndescription: d\n---\nBody\n", 'D213 invalid_input: frontmatter `name` ("other") must match the requested system prompt name ("wanted").'),
    ],
)
async def test_create_validation(directory: Directory, roots: dict[str, Path], content: str, message: str | None) -> None:
    error = await error_of(directory, "create", {"name": "wanted", "content": content})
    if message is not None:
        assert error.message == message
    elif len(content) > 262_144:
        assert error.message == f"D113 invalid_input: content is too large ({len(content)} bytes; max 262144)."
    else:
        assert error.code == "D213"
        assert error.message.startswith("D213 invalid_input: invalid frontmatter YAML: ")
    assert not (roots["skills"] / "system-prompts").exists()
    assert events(directory) == []


async def test_create_bundled_name_writes_the_shadow(directory: Directory, roots: dict[str, Path]) -> None:
    await call(directory, "create", {"name": "iii-minimal", "content": PROMPT})
    rows = (await call(directory, "list", {}))["prompts"]
    assert [(r["name"], r["builtin"]) for r in rows] == [("iii-minimal", False)]


# --- update ---------------------------------------------------------------------------------


async def test_update_overwrites_in_place(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["local"] / "system-prompts" / "local-one.md", PROMPT)
    new = "---\ndescription: Updated.\n---\nNew body.\n"
    result = await call(directory, "update", {"name": "local-one", "content": new})
    assert result["name"] == "local-one"
    assert result["description"] == "Updated."
    assert result["bytes"] == len(new)
    assert path.read_text() == new
    assert not (roots["skills"] / "system-prompts" / "local-one.md").exists()
    assert events(directory) == [{"op": "update", "name": "local-one"}]


async def test_update_can_rename_through_frontmatter(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"] / "system-prompts" / "old-name.md", PROMPT)
    new = "---\nname: new-name\ndescription: d\n---\nBody\n"
    result = await call(directory, "update", {"name": "old-name", "content": new})
    assert result["name"] == "new-name"
    assert path.read_text() == new
    assert events(directory) == [{"op": "update", "name": "new-name"}]
    assert "new-name" in names(await call(directory, "list", {}))


async def test_update_rejects_invalid_declared_name(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"] / "system-prompts" / "p.md", PROMPT)
    error = await error_of(
        directory, "update", {"name": "p", "content": "---\nname: Bad Name\ndescription: d\n---\nB\n"}
    )
    assert error.message == (
        "D213 invalid_input: frontmatter `name` is invalid (name may only contain lowercase ASCII "
        "letters, digits, '-' and '_': \"Bad Name\"); the next scan would skip this prompt."
    )
    assert path.read_text() == PROMPT


async def test_update_checks_size_and_description(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"] / "system-prompts" / "p.md", PROMPT)
    assert (await error_of(directory, "update", {"name": "p", "content": "---\ndescription: d\n---\n"})).code == "D113"
    assert (await error_of(directory, "update", {"name": "p", "content": "---\nname: p\n---\nB\n"})).code == "D213"


async def test_update_of_bundled_prompt_copies_on_write(directory: Directory, roots: dict[str, Path]) -> None:
    new = "---\ndescription: My minimal.\n---\nMine.\n"
    result = await call(directory, "update", {"name": "iii-minimal", "content": new})
    shadow = roots["skills"] / "system-prompts" / "iii-minimal.md"
    assert shadow.read_text() == new
    assert result["name"] == "iii-minimal"
    rows = (await call(directory, "list", {}))["prompts"]
    assert [(r["name"], r["builtin"]) for r in rows] == [("iii-minimal", False)]
    assert (await call(directory, "get", {"name": "iii-minimal"}))["body"] == "Mine.\n"
    await call(directory, "delete", {"name": "iii-minimal"})
    assert not shadow.exists()
    got = await call(directory, "get", {"name": "iii-minimal"})
    assert got["builtin"] is True
    assert events(directory) == [
        {"op": "update", "name": "iii-minimal"},
        {"op": "delete", "name": "iii-minimal"},
    ]


async def test_update_of_bundled_prompt_refuses_a_rename_and_a_skipped_file(
    directory: Directory, roots: dict[str, Path]
) -> None:
    error = await error_of(
        directory, "update", {"name": "iii-minimal", "content": "---\nname: other\ndescription: d\n---\nB\n"}
    )
    assert error.code == "D213"
    assert "must match the requested system prompt name" in error.message
    write(roots["skills"] / "system-prompts" / "iii-minimal.md", "broken\n")
    error = await error_of(directory, "update", {"name": "iii-minimal", "content": PROMPT})
    assert error.code == "D214"
    assert "currently skipped by the scanner" in error.message


async def test_update_unknown_is_d210_with_update_next(directory: Directory) -> None:
    error = await error_of(directory, "update", {"name": "ghost", "content": PROMPT})
    assert error.code == "D210"
    assert error.message.startswith('D210 not_found: system prompt "ghost" does not exist.')
    assert error.message.endswith(
        " Next: call directory::system-prompts::create to create it (this is the first write); "
        "or call directory::system-prompts::list to browse system prompt names."
    )


# --- delete ---------------------------------------------------------------------------------


async def test_delete_removes_only_the_file(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"] / "ns" / "system-prompts" / "gone.md", PROMPT)
    assert await call(directory, "delete", {"name": "gone"}) == {"name": "gone"}
    assert not path.exists()
    assert path.parent.is_dir()
    assert events(directory) == [{"op": "delete", "name": "gone"}]
    marks = directory.self_writes
    assert marks.consume(path)


async def test_delete_of_bundled_only_prompt_is_d210(directory: Directory) -> None:
    error = await error_of(directory, "delete", {"name": "iii-minimal"})
    assert error.code == "D210"
    assert error.message.endswith(
        " Next: call directory::system-prompts::list to browse system prompt names."
    )


async def test_writes_mark_self_writes(directory: Directory, roots: dict[str, Path]) -> None:
    await call(directory, "create", {"name": "marked", "content": PROMPT})
    assert directory.self_writes.consume(roots["skills"] / "system-prompts" / "marked.md")


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
async def test_symlinked_prompt_dir_outside_the_root_is_refused(
    directory: Directory, roots: dict[str, Path], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    write(outside / "leak.md", PROMPT)
    roots["skills"].mkdir(parents=True)
    (roots["skills"] / "system-prompts").symlink_to(outside, target_is_directory=True)
    assert "leak" not in names(await call(directory, "list", {}))
    error = await error_of(directory, "create", {"name": "sneaky", "content": PROMPT})
    assert "resolves outside" in error.message
    assert not (outside / "sneaky.md").exists()
