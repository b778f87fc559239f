"""Several writers share one file (two workers on one `skills_folder`): every read sees one
whole version, never a torn mix; each write lands whole or fails with a clear message."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

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
    from iii_directory.content.atomic import atomic_write

    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    target = tmp_path / "skills" / "doc.md"
    target.parent.mkdir(parents=True)
    (target.parent / "doc.md.tmp").symlink_to(outside)
    assert atomic_write(target, "# Doc\n\nBody.\n") == 13
    assert outside.read_text() == "keep me\n"
    assert not target.is_symlink() and target.read_text() == "# Doc\n\nBody.\n"
    assert not (target.parent / "doc.md.tmp").exists()
