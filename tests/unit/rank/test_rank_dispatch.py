"""The import-time dispatcher, `available()`, and the lazy dense import."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import _rank
from _rank import _reference

from .conftest import COMPILED


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60
    )


@pytest.mark.timeout(60)
def test_environment_forces_the_reference() -> None:
    code = (
        "import json, _rank, _rank._reference as r;"
        "print(json.dumps([_rank.available(), _rank.BM25Index is r.BM25Index, _rank.rrf is r.rrf]))"
    )
    result = _run(code, RANK_IMPLEMENTATION="python")
    assert result.returncode == 0, result.stderr
    info, same_index, same_rrf = json.loads(result.stdout)
    assert info["compiled"] is False and info["implementation"] == "python"
    assert "RANK_IMPLEMENTATION=python" in info["compiled_reason"]
    assert same_index and same_rrf


@pytest.mark.timeout(60)
@pytest.mark.skipif(COMPILED is None, reason="the compiled core is not built")
def test_environment_can_require_the_core() -> None:
    result = _run("import _rank; print(_rank.IMPLEMENTATION)", RANK_IMPLEMENTATION="cython")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "cython"


@pytest.mark.timeout(60)
def test_required_core_that_cannot_load_is_an_import_error() -> None:
    code = "import sys; sys.modules['_rank._core'] = None\nimport _rank"
    result = _run(code, RANK_IMPLEMENTATION="cython")
    assert result.returncode != 0 and "compiled core is missing" in result.stderr


@pytest.mark.timeout(60)
def test_missing_core_falls_back_to_the_reference() -> None:
    code = "import sys; sys.modules['_rank._core'] = None\nimport _rank; print(_rank.available()['implementation'])"
    result = _run(code, RANK_IMPLEMENTATION="")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "python"


@pytest.mark.timeout(60)
def test_unknown_implementation_is_refused() -> None:
    result = _run("import _rank", RANK_IMPLEMENTATION="fortran")
    assert result.returncode != 0 and "RANK_IMPLEMENTATION" in result.stderr


@pytest.mark.timeout(60)
@pytest.mark.skipif(COMPILED is None, reason="the compiled core is not built")
def test_compiled_core_is_the_default() -> None:
    result = _run("import json, _rank; print(json.dumps(_rank.available()))", RANK_IMPLEMENTATION="")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["compiled"] is True and info["implementation"] == "cython"
    assert info["compiled_reason"] is None


@pytest.mark.skipif(COMPILED is None, reason="the compiled core is not built")
def test_compiled_functions_borrow_reference_docstrings() -> None:
    if _rank.IMPLEMENTATION != "cython":
        pytest.skip("this process runs the reference")
    assert _rank.tokenize.__doc__ == _reference.tokenize.__doc__
    assert _rank.BM25Index.search.__doc__ == _reference.BM25Index.search.__doc__
    assert _rank.rrf.__doc__ == _reference.rrf.__doc__


def test_available_reports_every_backend() -> None:
    info = _rank.available()
    assert set(info) == {"compiled", "implementation", "compiled_reason", "dense", "dense_reason", "hnsw",
                         "static"}
    assert info["implementation"] in {"cython", "python"}
    assert isinstance(info["dense"], bool)
    assert (info["dense_reason"] is None) == info["dense"]


@pytest.mark.timeout(60)
def test_dense_without_the_extra_names_it() -> None:
    code = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "import _rank\n"
        "info = _rank.available()\n"
        "try:\n"
        "    _rank.dense\n"
        "except ImportError as exc:\n"
        "    print('ImportError', exc)\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ImportError") and "'dense' extra" in result.stdout


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError):
        _rank.no_such_thing  # noqa: B018
