"""Several writers share one file (two workers on one `skills_folder`): every read sees one
whole version, never a torn mix; each write lands whole or fails with a clear message."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import REPO, child_env
from shared_writer import content

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(sys.platform == "win32", reason="POSIX rename")]

WRITER = str(REPO / "tests" / "reliability" / "shared_writer.py")
SIZE = 256 * 1024
WRITES = 150


def test_concurrent_atomic_writes_of_one_file_never_tear(tmp_path: Path) -> None:
    target = tmp_path / "skills" / "shared" / "doc.md"
    versions = {content(letter, SIZE) for letter in "ABC"}
    env = child_env(tmp_path)
    writers = [subprocess.Popen([sys.executable, WRITER, str(target), letter, str(WRITES), str(SIZE)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
               for letter in "ABC"]
    reads = torn = 0
    while any(w.poll() is None for w in writers):
        try:
            seen = target.read_bytes()
        except FileNotFoundError:
            continue
        reads += 1
        if seen not in versions:
            torn += 1
        time.sleep(0.0005)
    reports = []
    for writer in writers:
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err.decode(errors="replace")
        reports.append(json.loads(out))
    assert torn == 0, f"{torn} of {reads} reads saw a torn file"
    assert target.read_bytes() in versions
    for report in reports:
        for message in report["errors"]:  # a loser may fail, but clearly
            assert message.startswith(("write ", "rename ")), message
    assert sum(r["ok"] for r in reports) >= WRITES  # most writes land
    assert not list(target.parent.glob("*.tmp")), "a staging file was left behind"


def test_a_planted_staging_symlink_never_redirects_a_write(tmp_path: Path) -> None:
    from iii_directory.atomic import atomic_write

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    target = tmp_path / "skills" / "doc.md"
    target.parent.mkdir(parents=True)
    (target.parent / "doc.md.tmp").symlink_to(outside)
    assert atomic_write(target, "# Doc\n\nBody.\n") == 13
    assert outside.read_text() == "keep me\n"
    assert not target.is_symlink() and target.read_text() == "# Doc\n\nBody.\n"
    assert not (target.parent / "doc.md.tmp").exists()


@pytest.mark.wire
async def test_two_serve_processes_updating_one_skill_never_tear_it(settings: Any, roots: dict[str, Path],
                                                                    tmp_path: Path) -> None:
    """Two `iii-directory serve` workers (each against its own test engine) share one
    `skills_folder` and update the same skill concurrently: every read sees one whole version,
    every update answers (whole write) or fails with a coded error, and the file ends whole."""
    import anyio

    from iii_directory.config import config_id
    from iii_directory.port import EngineCallError
    from iii_directory.testing.engine import TestEngine

    doc = roots["skills"] / "shared" / "doc.md"
    doc.parent.mkdir(parents=True)
    versions = {f"# Shared\n\n{letter * 120_000}\n" for letter in "XY"} | {"# Shared\n\nStart.\n"}
    doc.write_text("# Shared\n\nStart.\n")
    outcomes: dict[str, list[Any]] = {"X": [], "Y": []}
    torn: list[int] = []
    reads = 0

    async def hammer(engine: TestEngine, letter: str) -> None:
        content = f"# Shared\n\n{letter * 120_000}\n"
        async with engine.client() as client:
            for _ in range(40):
                try:
                    outcomes[letter].append(await client.call(
                        "directory::skills::update", {"id": "shared/doc", "content": content}, timeout=20))
                except EngineCallError as exc:
                    outcomes[letter].append(exc)

    async with TestEngine() as first, TestEngine() as second:
        processes = []
        for index, engine in enumerate((first, second)):
            engine.configuration.put(config_id(), settings.model_dump(mode="json"))
            log = (tmp_path / f"serve-{index}.log").open("wb")
            processes.append(await anyio.open_process(
                [sys.executable, "-m", "iii_directory", "serve", "--url", engine.url],
                stdout=log, stderr=subprocess.STDOUT, env=child_env(roots["home"]), cwd=str(tmp_path)))
        try:
            for engine in (first, second):
                await engine.wait_for(lambda e=engine: e.function("directory::skills::update") is not None, timeout=60)
            async with anyio.create_task_group() as tg:
                tg.start_soon(hammer, first, "X")
                tg.start_soon(hammer, second, "Y")
                while len(outcomes["X"]) + len(outcomes["Y"]) < 80:
                    data = doc.read_text()
                    reads += 1
                    if data not in versions:
                        torn.append(len(data))
                    await anyio.sleep(0.001)
        finally:
            for process in processes:
                process.terminate()
                with anyio.move_on_after(20):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
    assert torn == [], f"{len(torn)} of {reads} reads saw a torn file"
    assert doc.read_text() in versions
    for letter, results in outcomes.items():
        for result in results:
            if isinstance(result, EngineCallError):
                assert result.code and result.message.startswith(("write ", "rename ", "D")), result
            else:
                assert result["id"] == "shared/doc" and result["bytes"] == 120_011
        assert sum(1 for r in results if not isinstance(r, EngineCallError)) >= 30, letter
    assert not list(doc.parent.glob("*.tmp"))
