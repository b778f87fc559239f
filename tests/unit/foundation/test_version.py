"""The package version is one constant (`iii_directory._version`), read by the build
(`pyproject.toml` dynamic version) and by the package, never from the installed metadata."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import iii_directory
from iii_directory import _version

REPO = Path(__file__).resolve().parents[3]


def test_pyproject_takes_the_version_from_the_constant() -> None:
    doc = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in doc["project"]["dynamic"] and "version" not in doc["project"]
    assert doc["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "iii_directory._version.__version__"}


def test_the_package_version_is_the_constant_and_matches_the_installed_metadata() -> None:
    assert iii_directory.__version__ == _version.__version__
    parts = _version.__version__.split(".")
    assert len(parts) >= 3 and all(p.isdigit() for p in parts[:3])
    try:
        installed = version("iii-directory")
    except PackageNotFoundError:  # a source tree without an install
        return
    assert installed == _version.__version__


def test_importing_the_package_reads_no_distribution_metadata() -> None:
    probe = "import sys, iii_directory; print('importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
