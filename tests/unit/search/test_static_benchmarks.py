"""The fit rows of `benchmarks/fit_static_fusion.py` and the case sets of
`benchmarks/case_sets.py`: the tools that regenerate shipped numbers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

np = pytest.importorskip("numpy")

from iii_directory.search.static_lane import STATIC_WEIGHTS  # noqa: E402


def test_static_fusion_fit_rows_are_what_the_shipped_weights_score() -> None:
    """The fit's rows have the features `static_lane.learned_order` scores (no view cosines):
    one weight of `STATIC_WEIGHTS` per column, on the held-out catalog as on the eval one."""
    import fit_fusion
    from fit_static_fusion import DATA, _Static, samples

    corpus = fit_fusion.load_corpus(DATA / "heldout_catalog.json")
    encoder = _Static()
    matrix = encoder.encode([tool.dense_text for tool in corpus.tools])
    graded = fit_fusion.graded_capabilities(DATA / "heldout_cases.json", None)[:5]
    rows = samples(corpus, matrix, encoder, graded)
    assert rows and all(r.shape[1] == len(STATIC_WEIGHTS) for _, r, _ in rows)
    first, recall = fit_fusion.quality(np.asarray(STATIC_WEIGHTS), rows)
    assert 0.0 <= first <= 1.0 and 0.0 < recall <= 1.0


def test_relevant_functions_read_grades_and_covers() -> None:
    from case_sets import relevant_functions

    case = {"capabilities": ["send mail", "store a file"],
            "qrels": [{"function_id": "mail::send", "grade": 3, "covers": [0]},
                      {"function_id": "mail::draft", "grade": 1, "covers": [0]},
                      {"function_id": "drive::put", "grade": 2, "covers": [1]},
                      {"function_id": "drive::share", "grade": 2}]}
    assert relevant_functions(case, 0) == {"mail::send", "drive::share"}
    assert relevant_functions(case, 1) == {"drive::put", "drive::share"}
    assert relevant_functions(case, 0, min_grade=1) == {"mail::send", "mail::draft", "drive::share"}
