"""The console assets ship inside the built distributions (console-ui.md §3.1, §5.2 item 7).

A wheel and an sdist are built from a copy of the source tree (`python -m build
--no-isolation`, the native `_rank` core skipped so the build takes seconds) and both must carry
`ui/dist/page.js`, `module.js`, `styles.css` and `package.json`, byte for byte as in the source.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from iii_directory.ui.assets import ASSETS, packaged_dir

REPO = Path(__file__).resolve().parents[3]
DIST_FILES = ("package.json", *(asset.file_name for asset in ASSETS))
TOP_LEVEL = ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "NOTICE", "LICENSE", "wheels.toml")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.pyd", "*.egg-info", "build", "node_modules")

pytestmark = pytest.mark.timeout(180)


def _copy_tree(target: Path) -> None:
    for name in TOP_LEVEL:
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, target / name)
    for folder in ("src", "skills"):
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, target / folder, ignore=SKIP)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("build") is None:
        message = "the `build` package is not installed (pip install build)"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false"):
            pytest.fail(message)
        pytest.skip(message)
    source = tmp_path_factory.mktemp("source")
    out = tmp_path_factory.mktemp("dist")
    _copy_tree(source)
    env = {k: v for k, v in os.environ.items() if k != "RANK_REQUIRE_NATIVE"}
    env["CC"] = "false"  # the optional native core fails fast; the pure-Python fallback is packaged
    result = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--no-isolation", "--outdir", str(out), "."],
                            cwd=source, env=env, capture_output=True, text=True, timeout=170, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def test_the_wheel_carries_the_assets(built: Path) -> None:
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in DIST_FILES:
            assert archive.read(f"iii_directory/ui/dist/{name}") == (packaged_dir() / name).read_bytes(), name


def test_the_sdist_carries_the_assets(built: Path) -> None:
    (sdist,) = built.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        root = names[0].split("/", 1)[0]
        for name in DIST_FILES:
            member = archive.extractfile(f"{root}/src/iii_directory/ui/dist/{name}")
            assert member is not None, name
            assert member.read() == (packaged_dir() / name).read_bytes(), name


def test_the_wheel_carries_the_ranking_data(built: Path) -> None:
    """The fitted weights and word lists that `search/` reads at import (`search/ranking/fitted.py`,
    `search/ranking/word_lists.py`): without them an installed worker cannot rank."""
    data = REPO / "src" / "iii_directory" / "search" / "ranking" / "data"
    files = sorted(p.relative_to(data).as_posix() for p in data.rglob("*.json"))
    assert "fitted.json" in files and "words/concepts.json" in files
    (wheel,) = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in files:
            assert (archive.read(f"iii_directory/search/ranking/data/{name}")
                    == (data / name).read_bytes()), name
