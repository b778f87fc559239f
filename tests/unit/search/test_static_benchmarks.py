"""The static lane's measurement scripts (issue 19): the failure classes of
`benchmarks/static_failures.py`, the table variants of `benchmarks/static_table_variants.py`,
the fit rows of `benchmarks/fit_static_fusion.py`, the learned rows of
`benchmarks/static_table_learned.py`, the stage comparison of `static_vs_lexical.py` and the
head rules of `static_lexical_head.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

np = pytest.importorskip("numpy")
from static_failures import classify  # noqa: E402

from iii_directory.search.static_lane import ALONE_COSINE, STATIC_WEIGHTS  # noqa: E402


def test_an_empty_lane_names_the_gate_that_kept_the_static_head_out() -> None:
    below = {"decision": None, "lexical": [], "fused": [], "static": ["a::x"],
             "static_cosine": ALONE_COSINE - 0.01}
    assert classify(below, "a::x") == "no-lane:cosine"
    reached = dict(below, static_cosine=ALONE_COSINE)
    assert classify(reached, "a::x") == "no-lane:head"
    assert classify(dict(below, static_cosine=None), "a::x") == "no-lane:cosine"


def test_refusal_drop_depth_and_tail_are_told_apart() -> None:
    assert classify({"decision": False, "fused": ["a::x"]}, "a::x") == "refused"
    assert classify({"decision": True, "lexical": ["b::y"], "fused": []}, "a::x") == "dropped"
    answered = {"decision": True, "lexical": ["b::y"], "fused": ["b::y", "a::x"],
                "tail": ["c::z"], "static": ["b::y", "c::z", "d::w"], "single": ["e::v"]}
    assert classify(answered, "a::x") == "deep"
    assert classify(answered, "c::z") == "tail"
    assert classify(answered, "d::w") == "static-only"
    assert classify(answered, "e::v") == "lexical-only"
    assert classify(answered, "f::u") == "absent"


def test_the_shipped_variant_is_the_recipe() -> None:
    """`static_table_variants.table` with its defaults builds what `build_static_table` builds
    from the same piece vectors, so the variants are measured against the shipped table."""
    import build_static_table as recipe
    from static_table_variants import table

    rng = np.random.default_rng(19)
    raw = rng.standard_normal((300, 40)).astype(np.float32)
    pieces = ["[PAD]", "[UNK]"] + [f"p{i}" for i in range(298)]
    q, scales = recipe.quantise(recipe.pca(raw, dims=16) * recipe.sif_weights(pieces)[:, None])
    expected = recipe.encode_table(q, scales, recipe.FLAG_WEIGHTED | recipe.FLAG_CENTRED)
    assert table(raw, pieces, dims=16) == expected
    assert table(raw, pieces, dims=None) != expected  # the knobs reach the table
    assert table(raw, pieces, dims=16, a=3e-3) != expected


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


def test_empty_lane_rows_keep_only_unanswered_empty_lanes() -> None:
    """`static_empty_lanes.rows_of`: a lane with a lexical lane or an answer is not an empty
    lane; a relevant function in the static top 4 is a positive, a no-match case a negative."""
    from static_empty_lanes import GATES, rows_of

    ranking = [("a::x", 0.52), ("a::y", 0.40), ("b::z", 0.30), ("c::w", 0.20), ("d::v", 0.10)]
    cases = [
        {"kind": "match", "capabilities": ["find x"], "qrels": [{"function_id": "a::x", "grade": 3}]},
        {"kind": "match", "capabilities": ["find q"], "qrels": [{"function_id": "q::q", "grade": 3}]},
        {"kind": "no_match", "capabilities": ["chat"], "qrels": []},
        {"kind": "match", "capabilities": ["lexical"], "qrels": [{"function_id": "a::x", "grade": 3}]},
        {"kind": "match", "capabilities": ["answered"], "qrels": [{"function_id": "a::x", "grade": 3}]},
    ]
    seen = {"find x": ([], ranking, [], "a::y"), "find q": ([], ranking, [], None),
            "chat": ([], ranking, [], "b::z"), "lexical": ([("a::x", 1.0)], ranking, [], None),
            "answered": ([], ranking, ranking, None)}
    rows = rows_of(cases, seen)
    assert [r["label"] for r in rows] == [1, -1, 0]
    assert [r["agree"] for r in rows] == [True, False, False]
    assert rows[0]["share"] == 2 and rows[0]["margin"] == pytest.approx(0.52 - 0.30)
    assert GATES["cosine >= 0.50, a worker twice in the head"](rows[0])
    assert not GATES["cosine >= 0.50, one worker holds the head"](rows[0])


def test_learned_rows_solve_the_regularised_least_squares() -> None:
    """`static_table_learned.fit_rows` returns the minimiser of
    `Σ_s ‖A_s E − T_s‖² + λ‖E − E0‖²`: the gradient vanishes on the pieces the sentences use,
    the others keep `E0`; a sentence's weights are its pieces' shares of its SIF weight."""
    import static_table_learned as learned

    rng = np.random.default_rng(19)
    weights = np.r_[0.0, rng.uniform(0.2, 1.0, 39)]
    ids = [list(rng.integers(1, 30, size=rng.integers(2, 7))) for _ in range(80)]
    rows_of = learned.sentence_weights(ids + [[0], []], weights)
    assert all(abs(share.sum() - 1.0) < 1e-12 for _, share in rows_of[:80])
    assert all(len(piece) == 0 for piece, _ in rows_of[80:])  # zero weight, no piece: no row
    first, share = rows_of[0]
    expected = {p: sum(weights[q] for q in ids[0] if q == p) / weights[ids[0]].sum() for p in first}
    assert np.allclose(share, [expected[p] for p in first])
    prior = rng.standard_normal((40, 6))
    target = rng.standard_normal((len(rows_of), 6))
    lam = 0.3
    fitted = learned.fit_rows(prior, rows_of, target, lam)
    a = np.zeros((len(rows_of), 40))
    for s, (piece, share) in enumerate(rows_of):
        a[s, piece] = share
    gradient = a.T @ (a @ fitted - target) + lam * (fitted - prior)
    used = sorted({int(p) for piece, _ in rows_of for p in piece})
    assert np.abs(gradient[used]).max() < 1e-9
    unused = [i for i in range(40) if i not in used]
    assert unused and np.array_equal(fitted[unused], prior[unused])
    assert np.array_equal(learned.fit_rows(prior, rows_of, target, lam), fitted)  # same bits


def test_static_against_lexical_names_the_stage_that_lost_or_found_a_function() -> None:
    """`benchmarks/static_vs_lexical.py` (sixth round): a function lexical selects and static
    does not is lost to the static decision, the corroboration drop, the fusion's depth or the
    BM25 tail; one static finds is found by the vouch, an empty lane's rescue, the fused lane
    or the tail; an added false positive is named by its cause."""
    from static_vs_lexical import fp_cause, gained_stage, lost_stage

    lexical = {"decision": True, "decided": ["a::x", "b::y"]}
    assert lost_stage({"decision": False, "lexical": ["a::x"], "fused": ["a::x"]}, lexical,
                      "a::x") == "refused"
    assert lost_stage({"decision": True, "lexical": ["a::x"], "fused": []}, lexical,
                      "a::x") == "dropped"
    assert lost_stage({"decision": True, "lexical": ["a::x"], "fused": ["c::z", "a::x"]},
                      lexical, "a::x") == "deep"
    assert lost_stage({"decision": True, "lexical": ["a::x"], "fused": ["a::x"]}, lexical,
                      "d::w") == "tail"
    vouched = {"decision": True, "answerable": False, "lexical": ["a::x"], "fused": ["a::x"]}
    assert gained_stage(vouched, {}, "a::x") == "vouch"
    answered = {"decision": True, "answerable": True, "lexical": [], "fused": ["a::x"]}
    assert gained_stage(answered, {}, "a::x") == "rescued"
    assert gained_stage(dict(answered, lexical=["b::y"]), {}, "a::x") == "fused"
    assert gained_stage(dict(answered, lexical=["b::y"]), {}, "c::z") == "tail"
    assert fp_cause(vouched, {"decided": []}) == "vouch"
    assert fp_cause(answered, {"decided": []}) == "alone"
    assert fp_cause(dict(answered, lexical=["b::y"]), {"decided": []}) == "expanded"
    assert fp_cause(dict(answered, lexical=["b::y"]), {"decided": ["b::y"]}) == "decision"


def test_the_shipped_static_calibration_is_the_measured_fit_with_concepts() -> None:
    """`benchmarks/static_rules.py` measures the static family's refits of the sixth round;
    the shipped constants are its eval-catalog fit with the concept coverage (`eval7`), and a
    6-weight calibration there leaves the concept input out (`score` zips weights and inputs)."""
    from iii_directory.search import answerability

    import static_rules

    names = answerability.FEATURE_NAMES["static"]
    assert names[-1] == "concepts"
    assert answerability.CALIBRATION["static"] == static_rules.CALIBRATIONS["eval7"]
    for weights, _, _ in static_rules.CALIBRATIONS.values():
        assert len(weights) in (len(names) - 1, len(names))


def test_static_lexical_head_guards_the_window_and_counts_what_static_lost() -> None:
    """`benchmarks/static_lexical_head.py` (seventh round): the head guard moves lexical's
    missing hits to the end of the window without displacing the leader, and a set's row counts
    the relevant functions lexical selected and static did not (and the reverse) and, for
    negatives, the answers lexical refuses by cause."""
    from static_lexical_head import compare, guard

    lane = [("s::1", 1.0), ("s::2", 0.9), ("s::3", 0.8), ("a::x", 0.7), ("s::4", 0.6)]
    guarded = guard(lane, [("s::1", 9.0), ("a::x", 8.0), ("s::4", 7.0)], 3, 3)
    assert [d for d, _ in guarded] == ["s::1", "a::x", "s::4", "s::2", "s::3"]
    assert [s for _, s in guarded][:3] == [1.0, 1.0, 1.0]
    assert guard(lane, [("s::2", 9.0)], 1, 3) == lane
    cases = [{"id": "c1", "kind": "match", "split": "dev", "capabilities": ["t"],
              "qrels": [{"function_id": "a::x", "grade": 3}, {"function_id": "b::y", "grade": 2},
                        {"function_id": "c::z", "grade": 1}]}]
    row = compare("dev", cases, {"c1": ["a::x", "c::z"]}, {"c1": ["b::y"]}, {}, {})
    assert row.endswith("-1+1")
    negatives = [{"id": "n1", "kind": "no_match", "split": "nearmiss", "capabilities": ["q"],
                  "qrels": []}]
    seen = {"q": {"decision": True, "answerable": False, "lexical": ["a::x"]}}
    assert compare("nearmiss", negatives, {}, {"n1": ["a::x"]}, {}, seen) \
        == "nearmiss 1/1 (+vouch:1)"
    assert compare("nearmiss", negatives, {"n1": ["a::x"]}, {"n1": ["a::x"]}, {}, seen) \
        == "nearmiss 1/1 (+0)"


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
