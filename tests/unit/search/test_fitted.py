"""The fitted numbers: `search/ranking/data/fitted.json` names where each table came from, the stage
modules read exactly it, and re-running each fit script's `--check` reproduces it (a subprocess;
fails when a table no longer matches its fit)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iii_directory.search.ranking import answerability, fitted, fusion, static_fusion

REPO = Path(__file__).resolve().parents[3]
EVAL_DIR = REPO.parent / "shared" / "eval"
if not EVAL_DIR.is_dir():  # a worktree sits one level further from the shared folder
    EVAL_DIR = REPO.parent.parent / "shared" / "eval"

CODE_TABLES: dict[str, tuple[tuple[str, ...], tuple[float, ...]]] = {
    "fusion.WEIGHTS": (fusion.SECOND_VIEWED_FEATURES, fusion.WEIGHTS),
    "fusion.HEAD_WEIGHTS": (fusion.HEAD_SCORED_FEATURES, fusion.HEAD_WEIGHTS),
    "fusion.WEIGHTS_WITHOUT_SECOND": (fusion.VIEWED_FEATURES, fusion.WEIGHTS_WITHOUT_SECOND),
    "fusion.WEIGHTS_WITHOUT_VIEWS": (fusion.FEATURES, fusion.WEIGHTS_WITHOUT_VIEWS),
    "static_lane.STATIC_WEIGHTS": (fusion.FEATURES, static_fusion.STATIC_WEIGHTS),
    **{f"answerability.CALIBRATION.{kind}": (answerability.FEATURE_NAMES[kind],
                                             answerability.CALIBRATION[kind][0])
       for kind in ("hybrid", "lexical", "static")},
}


def test_every_entry_names_its_script_data_commit_and_loss() -> None:
    table = fitted.table()
    assert set(table) == set(CODE_TABLES)
    for name, found in table.items():
        assert (REPO / found["script"]).is_file(), name
        assert re.fullmatch(r"[0-9a-f]{40}( with uncommitted changes)?", found["commit"]), name
        assert found["data"] and found["loss"] and found["command"].startswith("python "), name


def test_the_stage_modules_hold_exactly_the_file() -> None:
    table = fitted.table()
    for name, (features, values) in CODE_TABLES.items():
        assert tuple(table[name]["features"]) == tuple(features), name
        assert tuple(table[name]["values"]) == values, name
    for kind, (_, bias, threshold) in answerability.CALIBRATION.items():
        found = table[f"answerability.CALIBRATION.{kind}"]
        assert (found["bias"], found["threshold"]) == (bias, threshold)


def test_weights_for_other_features_are_refused() -> None:
    with pytest.raises(RuntimeError, match="re-run benchmarks/fit_fusion.py --write"):
        fitted.weights("fusion.WEIGHTS", tuple(reversed(fusion.SECOND_VIEWED_FEATURES)))


def test_the_file_is_written_as_render_writes_it() -> None:
    """The fit scripts write through `fitted.render`: the file is its own rendering, so a refit's
    diff shows only the lines whose numbers changed."""
    text = fitted.FITTED_PATH.read_text(encoding="utf-8")
    assert fitted.render(json.loads(text)) == text


def _fit_check(script: str, *args: str, file: Path | None = None) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("numpy") is None:
        pytest.skip("the fit scripts need numpy (the dense extra)")
    if not EVAL_DIR.is_dir():
        pytest.skip("the shared eval set is not beside the checkout")
    extra = ("--file", str(file)) if file is not None else ()
    return subprocess.run([sys.executable, f"benchmarks/{script}", *args, "--eval-dir", str(EVAL_DIR),
                           "--check", *extra], cwd=REPO, capture_output=True, text=True,
                          timeout=1200)


def _needs_dense() -> None:
    for name in ("numpy", "onnxruntime", "tokenizers"):
        if importlib.util.find_spec(name) is None:
            pytest.skip("the fusion fit needs the dense extra")


@pytest.mark.slow
def test_the_static_fusion_fit_still_gives_the_file() -> None:
    done = _fit_check("fit_static_fusion.py")
    assert done.returncode == 0, done.stderr
    assert "static_lane.STATIC_WEIGHTS match the fit" in done.stdout


@pytest.mark.slow
def test_a_table_that_no_longer_matches_its_fit_fails_the_check(tmp_path: Path) -> None:
    document: dict[str, Any] = json.loads(fitted.FITTED_PATH.read_text(encoding="utf-8"))
    document["fitted"]["static_lane.STATIC_WEIGHTS"]["values"][0] += 0.001
    stale = tmp_path / "fitted.json"
    stale.write_text(fitted.render(document), encoding="utf-8")
    done = _fit_check("fit_static_fusion.py", file=stale)
    assert done.returncode == 1
    assert "static_lane.STATIC_WEIGHTS: the file holds" in done.stderr
    assert "re-run benchmarks/fit_static_fusion.py --write" in done.stderr


@pytest.mark.slow
@pytest.mark.dense
def test_the_fusion_fit_still_gives_the_file() -> None:
    _needs_dense()
    done = _fit_check("fit_fusion.py")
    assert done.returncode == 0, done.stderr
    assert "fusion.WEIGHTS, fusion.HEAD_WEIGHTS, fusion.WEIGHTS_WITHOUT_SECOND, " \
           "fusion.WEIGHTS_WITHOUT_VIEWS match the fit" in done.stdout


@pytest.mark.slow
@pytest.mark.dense
@pytest.mark.timeout(1200)
def test_the_answerability_fit_still_gives_the_file(tmp_path: Path) -> None:
    """Records every tuning set in the three modes (two to five minutes on a shared 2-core
    machine: beyond the suite's per-test limit), then fits: each family's calibration matches
    its entry in the file."""
    _needs_dense()
    done = _fit_check("fit_answerability.py", "fit", "--out", str(tmp_path / "signals.json"))
    assert done.returncode == 0, done.stderr
    assert "answerability.CALIBRATION.hybrid, answerability.CALIBRATION.lexical, " \
           "answerability.CALIBRATION.static match the fit" in done.stdout
