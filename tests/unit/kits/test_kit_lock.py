"""`kits.lock`: format, strict and lenient readers, derived views, file states (kits.md §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from iii_directory.kits.lock import (
    LOCK_HEADER,
    Lock,
    LockedFile,
    LockedKit,
    LockError,
    file_state,
    load_lock,
    parse_lock,
    read_lock,
    render_lock,
    write_lock,
)


def sample() -> Lock:
    return Lock(kits={
        "acme/kanban-team": LockedKit(
            requested="latest", version="1.3.0", installed_at="2026-10-08T14:02:11Z",
            workers={"kanban": "^1.4"},
            files={
                "agents/reviewer.md": LockedFile("77c0", skipped=True),
                "agents/product-manager.md": LockedFile("4be1"),
                "skills/acme/kanban-team/tickets/flow.md": LockedFile("aa11"),
            },
            ignored_versions=["1.4.0"],
        ),
        "other/kit": LockedKit(requested="^1.10", version="1.10.0", installed_at="2026-10-01T00:00:00Z",
                               files={"agents/reviewer.md": LockedFile("9999")}),
    })


def test_round_trip_and_shape(tmp_path: Path) -> None:
    lock = sample()
    write_lock(tmp_path, lock)
    text = (tmp_path / "kits.lock").read_text(encoding="utf-8")
    assert text.startswith("# kits.lock")
    assert text.startswith(LOCK_HEADER)
    assert text.count("skipped:") == 1
    assert "ignored_versions: [1.4.0]" in text
    assert text.index("acme/kanban-team") < text.index("other/kit")
    assert text.index("agents/product-manager.md") < text.index("agents/reviewer.md")
    body = text.split("\n", 3)[3]
    assert body.startswith("version: 1\nkits:\n")
    again = load_lock(tmp_path)
    assert again == lock
    assert again.kits["other/kit"].requested == "^1.10"
    assert again.kits["other/kit"].version == "1.10.0"


def test_yaml_typing_does_not_leak() -> None:
    lock = parse_lock(
        "version: 1\nkits:\n  a/b:\n    requested: 1.3\n    version: 1.10.0\n"
        "    installed_at: 2026-10-08T14:02:11Z\n    files:\n      agents/x.md:\n        sha256: ab\n"
        "        skipped: true\n"
    )
    entry = lock.kits["a/b"]
    assert entry.requested == "1.3"
    assert entry.installed_at == "2026-10-08T14:02:11Z"
    assert entry.files["agents/x.md"].skipped is True
    assert entry.workers == {} and entry.ignored_versions == []
    rendered = render_lock(lock)
    assert parse_lock(rendered) == lock
    assert 'requested: "1.3"' in rendered


def test_missing_and_empty_locks(tmp_path: Path) -> None:
    assert load_lock(tmp_path).kits == {}
    (tmp_path / "kits.lock").write_text("  \n\n")
    assert load_lock(tmp_path).kits == {}
    write_lock(tmp_path, Lock())
    assert not (tmp_path / "kits.lock").exists()
    write_lock(tmp_path, Lock())  # a missing file is fine


def test_unsupported_and_malformed(tmp_path: Path) -> None:
    path = tmp_path / "kits.lock"
    path.write_text("version: 2\nkits: {}\n")
    with pytest.raises(LockError) as caught:
        load_lock(tmp_path)
    assert "kits.lock version 2 is not supported (expected 1)" in caught.value.message
    assert caught.value.message.startswith(str(path))
    assert read_lock(tmp_path).kits == {}
    path.write_text("version: 1\nkits: [oops\n")
    with pytest.raises(LockError, match="invalid kits.lock"):
        load_lock(tmp_path)
    assert read_lock(tmp_path).kits == {}
    path.write_text("kits: {}\n")
    with pytest.raises(LockError, match="not supported"):
        load_lock(tmp_path)


def test_derived_views() -> None:
    lock = sample()
    assert lock.owned_agents() == {"product-manager": "acme/kanban-team", "reviewer": "other/kit"}
    assert lock.owner_of("agents/reviewer.md") == "other/kit"
    assert lock.owner_of("agents/product-manager.md") == "acme/kanban-team"
    assert lock.owner_of("agents/none.md") is None
    assert lock.namespaces() == ["acme/kanban-team", "other/kit"]
    assert lock.declaring("kanban") == ["acme/kanban-team"]
    assert lock.declaring("kanban", excluding="acme/kanban-team") == []


def test_file_states() -> None:
    entry = LockedFile("aa")
    assert file_state(entry, None) == "missing"
    assert file_state(entry, "aa") == "intact"
    assert file_state(entry, "bb") == "edited"
    skipped = LockedFile("aa", skipped=True)
    assert file_state(skipped, "bb") == "skipped"
    assert file_state(skipped, "bb", ignore_skip=True) == "edited"
