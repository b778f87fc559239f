"""Registering the function table imports no surface's write / download machinery: those
modules stand behind `LazyModule` and load on their surface's first call."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from iii_directory.lazy import LazyModule

DEFERRED = (
    "iii_directory.content.skill_writes",
    "iii_directory.content.prompts",
    "iii_directory.content.agents",
    "iii_directory.content.agent_sources",
    "iii_directory.sources.downloads",
    "iii_directory.sources.bundle",
    "iii_directory.sources.git",
    "httpx",
    "iii_directory.content.skills",
    "iii_directory.content.skills_index",
    "iii_directory.kits.records",
    "iii_directory.kits.shapes",
    "iii_directory.search.service",
    "iii_directory.search.catalog",
    "iii_directory.search.ranking.vocabulary",
    "snowballstemmer",
    "websockets",
)


def test_building_the_table_imports_none_of_the_deferred_modules() -> None:
    probe = ("import json, sys\n"
             "from iii_directory.functions import build_table\n"
             "table = build_table()\n"
             f"print(json.dumps([len(table.functions)] + [m for m in {list(DEFERRED)!r} if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    count, *loaded = json.loads(done.stdout)
    assert count >= 40 and loaded == []


def test_a_lazy_module_imports_on_first_attribute_and_is_then_the_module() -> None:
    lazy = LazyModule("json")
    assert not lazy.loaded and "not loaded" in repr(lazy)
    assert lazy.dumps is json.dumps
    assert lazy.loaded and lazy._module is json


def test_concurrent_first_accesses_all_see_the_module() -> None:
    lazy = LazyModule("iii_directory.content.agent_sources")
    seen: list[object] = []
    start = threading.Barrier(8)

    def read() -> None:
        start.wait()
        seen.append(lazy.SourceLookup)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and len(set(map(id, seen))) == 1


def test_a_missing_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError):
        LazyModule("json").no_such_name  # noqa: B018


def test_httpx_is_imported_without_its_command_line() -> None:
    """`import_httpx` (the registry client's import) leaves out httpx's console script and what it
    imports; the client classes are httpx's own."""
    probe = ("import json, sys\n"
             "from iii_directory.lazy import import_httpx\n"
             "httpx = import_httpx()\n"
             "try:\n    httpx.main()\nexcept SystemExit:\n    refused = True\n"
             "print(json.dumps([httpx.AsyncClient.__module__, refused]"
             " + [m for m in ('click', 'pygments', 'rich') if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["httpx", True]


def test_watchfiles_is_imported_without_its_process_runner() -> None:
    """`import_watchfiles` (the skill watcher's import) leaves out `watchfiles.run` and the
    `multiprocessing` it imports; the watcher itself is watchfiles' own."""
    probe = ("import json, sys\n"
             "from iii_directory.lazy import import_watchfiles\n"
             "watchfiles = import_watchfiles()\n"
             "try:\n    watchfiles.run_process('.', target='true')\nexcept SystemExit:\n    refused = True\n"
             "print(json.dumps([watchfiles.awatch.__module__, watchfiles.Change.added.name, refused]"
             " + [m for m in ('multiprocessing', 'pickle') if m in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["watchfiles.main", "added", True]
