"""`directory::skills::get` (§6.2): id forms, raw, read errors, fallbacks, D110 / D112."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from iii_directory.content.ids import levenshtein
from iii_directory.content.skills import build_view, get_score, match_worker, suggest_for_get
from iii_directory.config import Settings
from iii_directory.directory import Directory

from .helpers import PeerEngine, call, error, write

GET = "directory::skills::get"


async def test_get_returns_the_document(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "ns/lookup.md", "# Lookup\n\nThe body text.\n")
    got = await call(directory, GET, {"id": "ns/lookup"})
    assert got == {
        "id": "ns/lookup", "title": "Lookup", "type": None, "function_id": None,
        "disable_model_invocation": False, "path": str(path),
        "body": "# Lookup\n\nThe body text.\n", "modified_at": got["modified_at"],
    }
    assert got["modified_at"]
    assert "description" not in got and "raw" not in got


async def test_raw_is_the_exact_file(directory: Directory, roots: dict[str, Path]) -> None:
    content = "---\ntitle: Fm title\ntype: how-to\n---\n# Body H1 ignored\n\ntext\n"
    write(roots["skills"], "ns/fm.md", content)
    got = await call(directory, GET, {"id": "ns/fm", "raw": True})
    assert got["raw"] == content
    assert got["title"] == "Fm title" and got["type"] == "how-to"
    assert got["body"] == "# Body H1 ignored\n\ntext\n"
    assert "raw" not in await call(directory, GET, {"id": "ns/fm", "raw": False})


@pytest.mark.parametrize("form", ["iii", "iii/index", "iii/SKILL.md", "iii/index.md", "iii://iii",
                                  "iii://iii/index", " iii ", "iii://iii/SKILLS.md"])
async def test_every_id_form_resolves_alike(directory: Directory, roots: dict[str, Path], form: str) -> None:
    write(roots["skills"], "iii/SKILL.md", "# iii\n\nThe engine.\n")
    got = await call(directory, GET, {"id": form})
    assert (got["id"], got["body"]) == ("iii", "# iii\n\nThe engine.\n")


async def test_literal_file_beats_the_overview(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "sandbox.md", "# Literal\n\nx\n")
    write(roots["skills"], "sandbox/index.md", "# Overview\n\nx\n")
    assert (await call(directory, GET, {"id": "sandbox"}))["title"] == "Literal"
    got = await call(directory, GET, {"id": "sandbox/index"})
    assert (got["id"], got["title"]) == ("sandbox/index", "Overview")


async def test_read_errors_are_bare(directory: Directory, roots: dict[str, Path]) -> None:
    big = write(roots["skills"], "ns/big.md", "x" * 300_000)
    empty = write(roots["skills"], "ns/empty.md", "---\ntitle: T\n---\n")
    failure = await error(directory, GET, {"id": "ns/big"})
    assert (failure.code, failure.message) == (
        "invocation_failed", f"file {big} is too large (300000 bytes; max 262144)")
    failure = await error(directory, GET, {"id": "ns/empty"})
    assert failure.message == f"file {empty} has empty body"
    assert (await call(directory, GET, {"id": "ns/empty", "raw": True}))["body"] == ""
    failure = await error(directory, GET, {"id": "ns/big", "raw": True})
    assert "too large" in failure.message


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "id must be non-empty"),
        ("   ", "id must be non-empty"),
        ("https://example.com", "Invalid id (must be a bare skill path, a path ending in .md, or an iii:// URI): https://example.com"),
        ("Sandbox", 'invalid id (segment 1 of "Sandbox"): segment may only contain lowercase ASCII letters, digits, \'-\' and \'_\': "Sandbox"'),
        ("ns/", "id may not have a leading or trailing '/': \"ns/\""),
        ("a//b", 'invalid id (segment 2 of "a//b"): segment must be non-empty'),
        ("../etc/passwd", 'invalid id (segment 1 of "../etc/passwd"): segment may only contain lowercase ASCII letters, digits, \'-\' and \'_\': ".."'),
    ],
)
async def test_bad_ids_are_bare_errors(directory: Directory, raw: str, message: str) -> None:
    failure = await error(directory, GET, {"id": raw})
    assert (failure.code, failure.message) == ("invocation_failed", message)


@pytest.mark.parametrize("raw", ["database::execute", "shell::fs::mv", "iii://db::x"])
async def test_function_ids_are_d112(directory: Directory, raw: str) -> None:
    failure = await error(directory, GET, {"id": raw})
    assert failure.code == "D112"
    assert failure.message.startswith(f'D112 invalid_input: "{raw.removeprefix("iii://")}" looks like a FUNCTION id')
    assert failure.message.endswith(
        "Next: call directory::skills::list to browse skill ids; or call "
        "directory::skills::index to see the per-worker overview.")


async def test_type_confused_ids(directory: Directory) -> None:
    for bad in [5, ["a"], None]:
        failure = await error(directory, GET, {"id": bad})
        assert failure.message.startswith('invalid request: field "id"')


async def test_d110_with_suggestions(directory: Directory, roots: dict[str, Path]) -> None:
    for rel in ["iii/index.md", "iii/skills/iii/quick-reference.md", "sandbox/index.md"]:
        write(roots["skills"], rel)
    failure = await error(directory, GET, {"id": "iii/skills/sandbox/index"})
    assert failure.code == "D110"
    assert failure.message.startswith(
        'D110 not_found: skill "iii/skills/sandbox/index" does not exist. Did you mean: sandbox, ')
    assert failure.message.endswith(
        " Next: call directory::skills::list to browse skill ids; or call directory::skills::index "
        "to see the per-worker overview.")


async def test_d110_without_candidates(directory: Directory) -> None:
    failure = await error(directory, GET, {"id": "nope/x"})
    assert failure.message == (
        'D110 not_found: skill "nope/x" does not exist. Next: call directory::skills::list to '
        "browse skill ids; or call directory::skills::index to see the per-worker overview.")


async def test_long_valid_id_misses_cleanly(directory: Directory, roots: dict[str, Path]) -> None:
    write(roots["skills"], "ns/a.md")
    long_id = "/".join(["segment-" + "x" * 48] * 8)
    assert 400 < len(long_id) < 1024
    failure = await error(directory, GET, {"id": long_id})
    assert failure.code == "D110"


def test_suggestion_ranking(settings: Settings, roots: dict[str, Path]) -> None:
    write(roots["skills"], "sandbox/index.md")
    write(roots["skills"], "sandbox/skills/sandbox/exec.md")
    view = build_view(settings, None)
    assert suggest_for_get(view, "sandbox/exec")[0] == "sandbox/skills/sandbox/exec"
    assert levenshtein("sandbox/exec", "sandbox/index") == 4
    assert get_score("database/query", "database/index") == 100 - levenshtein("database/query", "database/index")
    empty = build_view(settings.model_copy(update={"skills_folder": str(roots["project"] / "none")}), None)
    assert suggest_for_get(empty, "sandbox/exec") == []
    write(roots["skills"], "zzzzzzzzzzzzzzzzzzzzzzzz/q.md")
    assert "zzzzzzzzzzzzzzzzzzzzzzzz/q" not in suggest_for_get(build_view(settings, None), "ab")


def test_worker_matching() -> None:
    installed = frozenset({"box", "iii-sandbox", "shell", "shell-x"})
    assert match_worker("box", installed) == "box"
    assert match_worker("sandbox", installed) == "iii-sandbox"
    assert match_worker("SHELL", installed) == "shell"
    assert match_worker("hell", installed) == "shell"
    assert match_worker("iii", installed) is None
    assert match_worker("", installed) is None
    assert match_worker("dir", None) == "directory"
    assert match_worker("s", frozenset({"ab-s", "cd-s"})) is None


async def test_worker_overview_fallback(make_directory: Any, peer: PeerEngine, roots: dict[str, Path]) -> None:
    write(roots["skills"], "iii-sandbox/index.md", "# Sandbox\n\nRuns code.\n")
    peer.installed("iii-sandbox")
    directory = make_directory(peer)
    got = await call(directory, GET, {"id": "sandbox", "raw": True})
    note = ("> Note: no skill `sandbox`. Showing `iii-sandbox` (the worker overview) instead. For "
            "this worker's callable functions use `engine::functions::list` with worker=iii-sandbox; "
            'for any other skills it ships call `directory::skills::list` with prefix="iii-sandbox/".')
    assert got["id"] == "iii-sandbox"
    assert got["body"] == note + "\n\n---\n\n# Sandbox\n\nRuns code.\n"
    assert got["raw"] == "# Sandbox\n\nRuns code.\n"
    # a sub-path is served only while the overview is the worker's only document
    assert (await call(directory, GET, {"id": "sandbox/exec"}))["id"] == "iii-sandbox"
    write(roots["skills"], "iii-sandbox/other.md")
    failure = await error(directory, GET, {"id": "sandbox/exec"})
    assert failure.code == "D110"
    assert (await call(directory, GET, {"id": "sandbox"}))["id"] == "iii-sandbox"


async def test_skill_less_worker(make_directory: Any, peer: PeerEngine, roots: dict[str, Path]) -> None:
    peer.installed("mailer")
    directory = make_directory(peer)
    failure = await error(directory, GET, {"id": "mailer"})
    assert (failure.code, failure.message) == ("D110", (
        'D110 not_found: "mailer" does not exist — the worker `mailer` is installed but ships no '
        "skill doc. Next: call engine::functions::list with worker=mailer to list its functions; "
        "or engine::workers::info with name=mailer."))
    write(roots["skills"], "iii/index.md", "# iii\n\nEngine overview.\n")
    got = await call(directory, GET, {"id": "mailer/send"})
    assert got["id"] == "iii"
    assert got["body"] == (
        "> Note: the worker `mailer` is installed but ships no skill doc, so `mailer` has no "
        "overview. Showing the iii engine overview below. For `mailer`'s own API, call "
        "`engine::functions::list` with worker=mailer, or `engine::workers::info` with name=mailer."
        "\n\n---\n\n# iii\n\nEngine overview.\n")


async def test_local_override_shadows_downloaded_docs(make_directory: Any, peer: PeerEngine,
                                                      roots: dict[str, Path]) -> None:
    write(roots["skills"], "shell/index.md", "# Shell\n\nx\n")
    write(roots["local"], "shell/index.md", "# Local shell\n\nx\n")
    write(roots["skills"], "shell/exec.md", "# Exec\n\nx\n")
    peer.installed("shell")
    directory = make_directory(peer)
    assert (await call(directory, GET, {"id": "shell"}))["title"] == "Local shell"
    got = await call(directory, GET, {"id": "shell/exec"})
    assert got["id"] == "shell" and got["body"].startswith("> Note: no skill `shell/exec`.")
    # with no installed-worker set (standalone: compose::status cannot be asked) it is a plain miss
    failure = await error(make_directory(), GET, {"id": "shell/exec"})
    assert failure.code == "D110" and "Did you mean: shell." in failure.message


async def test_changes_are_seen_immediately(directory: Directory, roots: dict[str, Path]) -> None:
    path = write(roots["skills"], "ns/live.md", "# One\n\nfirst\n")
    assert (await call(directory, GET, {"id": "ns/live"}))["body"].endswith("first\n")
    path.write_text("# Two\n\nsecond\n")
    assert (await call(directory, GET, {"id": "ns/live"}))["body"].endswith("second\n")


def _naive_suggestions(view: object, missed: str) -> list[str]:
    files = view.files  # type: ignore[attr-defined]
    scored = sorted(((get_score(missed, f.id), f.id) for f in files), key=lambda p: -p[0])
    return [view.display_id(fid) for score, fid in scored[:3] if score > 0]  # type: ignore[attr-defined]


@pytest.mark.parametrize("missed", ["sandbox/exec", "a", "team/x/y", "index", "zz/qq", "ns/alpha/index"])
def test_pruned_ranking_matches_the_full_sort(settings: Settings, roots: dict[str, Path], missed: str) -> None:
    for rel in ["sandbox/index.md", "sandbox/skills/sandbox/exec.md", "ns/alpha.md", "ns/alpha/index.md",
                "team/x.md", "team/y.md", "a.md", "b.md", "index.md", "zz/q.md", "zz/qq/r.md", "qq/zz.md"]:
        write(roots["skills"], rel)
    view = build_view(settings, None)
    assert suggest_for_get(view, missed) == _naive_suggestions(view, missed)
