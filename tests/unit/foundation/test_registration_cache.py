"""The disk cache of registration frames: used only for the same code, complete, and readable."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from iii_directory.functions import build_table
from iii_directory.registration_cache import (
    RegistrationCache,
    cached_frames,
    default_cache,
    fingerprint,
)
from iii_directory.worker import function_registration


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n")
    (package / "sub" / "b.py").write_text("B = 2\n")
    (package / "notes.txt").write_text("not code\n")
    return package


def test_fingerprint_moves_with_any_python_file(tmp_path: Path) -> None:
    package = _package(tmp_path)
    first = fingerprint(package)
    assert fingerprint(package) == first
    (package / "notes.txt").write_text("still not code, longer\n")
    assert fingerprint(package) == first
    (package / "sub" / "b.py").write_text("B = 22\n")
    second = fingerprint(package)
    assert second != first
    os.utime(package / "a.py", ns=(1, 1))
    assert fingerprint(package) != second
    (package / "sub" / "c.py").write_text("")
    assert fingerprint(package, extra=("x",)) != fingerprint(package)


def _counting(calls: list[str]):
    def generate(function_id: str) -> dict[str, Any]:
        calls.append(function_id)
        return {"id": function_id, "request_format": {"type": "object"}}
    return generate


def test_frames_are_generated_once_then_read(tmp_path: Path) -> None:
    cache = RegistrationCache(tmp_path / "cache", "k" * 64)
    calls: list[str] = []
    first = cached_frames(["a::x", "b::y"], _counting(calls), cache)
    assert calls == ["a::x", "b::y"]
    assert cache.path is not None and cache.path.is_file()
    again = cached_frames(["a::x", "b::y"], _counting(calls), cache)
    assert again == first
    assert calls == ["a::x", "b::y"]


def test_a_missing_function_regenerates_every_frame(tmp_path: Path) -> None:
    cache = RegistrationCache(tmp_path, "k" * 64)
    cached_frames(["a::x"], _counting([]), cache)
    calls: list[str] = []
    frames = cached_frames(["a::x", "c::z"], _counting(calls), cache)
    assert calls == ["a::x", "c::z"]
    assert set(frames) == {"a::x", "c::z"}


def test_another_code_state_or_a_broken_file_is_not_used(tmp_path: Path) -> None:
    cached_frames(["a::x"], _counting([]), RegistrationCache(tmp_path, "k" * 64))
    path = RegistrationCache(tmp_path, "k" * 64).path
    assert path is not None
    stored = json.loads(path.read_text())
    stored["key"] = "other"
    path.write_text(json.dumps(stored))
    calls: list[str] = []
    cached_frames(["a::x"], _counting(calls), RegistrationCache(tmp_path, "k" * 64))
    assert calls == ["a::x"]
    path.write_text("{ not json")
    calls.clear()
    cached_frames(["a::x"], _counting(calls), RegistrationCache(tmp_path, "k" * 64))
    assert calls == ["a::x"]


def test_an_unwritable_folder_only_means_no_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    calls: list[str] = []
    frames = cached_frames(["a::x"], _counting(calls), RegistrationCache(blocker / "cache", "k" * 64))
    assert frames == {"a::x": {"id": "a::x", "request_format": {"type": "object"}}}


def test_cached_frames_of_the_real_table_equal_generated_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_DIRECTORY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("III_DIRECTORY_REGISTRATION_CACHE", raising=False)
    table = build_table()
    expected = {i: function_registration(spec) for i, spec in table.functions.items()}
    cache = default_cache()
    assert cache.path is not None and cache.path.parent == tmp_path
    written = cached_frames(table.functions, lambda i: function_registration(table.functions[i]), cache)
    assert written == expected

    def never(function_id: str) -> dict[str, Any]:
        raise AssertionError(f"{function_id} was generated again")

    assert cached_frames(table.functions, never, default_cache()) == expected


def test_the_cache_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("III_DIRECTORY_REGISTRATION_CACHE", "0")
    assert default_cache().path is None
