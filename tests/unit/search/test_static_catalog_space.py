"""The catalog-adapted static space of `benchmarks/static_catalog_space.py` (issue 19): catalog
IDF piece weights, centring and all-but-the-top, the AUC of the best cosine, and the unadapted
variant being the static lane itself."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

np = pytest.importorskip("numpy")

import static_catalog_space as space  # noqa: E402

from _rank import static  # noqa: E402
from iii_directory.search.corpus import Corpus, tool_from_schema  # noqa: E402

# pieces 0..4 over four documents: piece 0 in every document, piece 4 in one
DOCS = [[0, 1], [0, 1, 2], [0, 3], [0, 3, 4, 4]]


def test_catalog_idf_weighs_a_piece_every_document_shares_least() -> None:
    df = space.document_frequency(DOCS, 6)
    assert df.tolist() == [4, 2, 1, 2, 1, 0]  # a piece counts once per document
    idf = space.piece_weights(DOCS, 6, "idf1")
    assert idf[0] < idf[1] < idf[2] < idf[5]
    assert idf[2] == pytest.approx(np.log1p(3.5 / 1.5))
    assert space.piece_weights(DOCS, 6, "idf0.5") == pytest.approx(np.sqrt(idf))
    capped = space.piece_weights(DOCS, 6, "idfmed")
    median = float(np.median(idf[:5]))
    assert capped[0] == pytest.approx(idf[0] / median) and capped[0] < 1.0
    assert capped[2] == capped[5] == 1.0  # rarer than the median: unchanged
    assert space.piece_weights(DOCS, 6, "none") is None


def test_centring_removes_the_catalog_mean_and_abtt_its_top_direction() -> None:
    rng = np.random.default_rng(7)
    table = rng.normal(size=(6, 5)) + np.array([3.0, 0, 0, 0, 0])  # a shared direction
    plain = space.vectors(table, DOCS, None)
    centred = space.fit_space(table, DOCS, "none+centre")
    assert centred.mean == pytest.approx(plain.mean(axis=0))
    out = centred.apply(plain)
    assert np.linalg.norm(out, axis=1) == pytest.approx(np.ones(len(DOCS)))
    assert abs(out[:, 0].mean()) < abs(plain[:, 0].mean())
    half = space.fit_space(table, DOCS, "none+centre0.5")
    assert half.mean == pytest.approx(0.5 * plain.mean(axis=0))
    top = space.fit_space(table, DOCS, "none+abtt1")
    assert top.top.shape == (1, 5)
    assert np.abs(top.apply(plain) @ top.top.T).max() < 1e-9
    assert space.fit_space(table, DOCS, "none").apply(plain) is plain
    # the pipeline probe shifts already-encoded unit vectors the same way
    for shift in ("centre", "centre0.5", "abtt1"):
        assert space.shifted_space(plain, shift).apply(plain) == pytest.approx(
            space.fit_space(table, DOCS, "none+" + shift).apply(plain))
    assert space.shifted_space(plain, "none").apply(plain) is plain
    with pytest.raises(ValueError):
        space.fit_space(table, DOCS, "none+spin")


def test_auc_counts_ties_as_half() -> None:
    assert space.auc([0.9, 0.8], [0.1]) == 1.0
    assert space.auc([0.5], [0.5, 0.1]) == 0.75
    assert space.auc([0.2], [0.6]) == 0.0
    assert space.auc([], [0.1]) is None


def test_the_unadapted_variant_is_the_static_lane_and_measure_scores_it() -> None:
    encoder = static.default_encoder()
    table = space.dequantised(encoder.table)
    texts = ["send an email to a contact", "resize an image to a width"]
    ids = [encoder.tokenizer.ids(t) for t in texts]
    ours = space.vectors(table, ids, None)
    theirs = np.asarray([list(v) for v in encoder.encode(texts)])
    assert ours == pytest.approx(theirs, abs=1e-6)

    corpus = Corpus.build([tool_from_schema("mail::send", "Send an email message to a recipient.", {}),
                           tool_from_schema("image::resize", "Resize an image to a new width.", {})])
    cases = [{"id": "a", "kind": "match", "capabilities": ["email my colleague the report"],
              "qrels": [{"function_id": "mail::send", "grade": 3, "covers": [0]}]},
             {"id": "b", "kind": "no_match", "capabilities": ["what a lovely sunny afternoon"],
              "qrels": []}]
    figures = space.measure(table, encoder.tokenizer, space.CaseSet("t", corpus, cases, []), "none")
    assert figures["recall"] == 1.0 and figures["first"] == 1.0
    assert figures["auc"] == 1.0 and figures["auc_nm"] is None  # the request beats the chatter


def test_the_pipeline_probe_orders_by_the_shifted_cosine_and_keeps_the_raw_one() -> None:
    rng = np.random.default_rng(3)
    unit = space.normalised(rng.normal(size=(8, 4)) + np.array([2.0, 0, 0, 0]))
    index = static.StaticIndex(4)
    index.add([row.tolist() for row in unit])
    query = space.normalised(np.array([[2.0, 1.0, -0.5, 0.2]]))[0].tolist()
    raw = dict(index.search(query, 8))
    assert space.ShiftedIndex(index, "none").search(query, 8) == index.search(query, 8)
    shifted = space.ShiftedIndex(index, "centre")
    hits = shifted.search(query, 5)
    centred = space.shifted_space(unit, "centre")
    scores = centred.apply(unit) @ centred.apply(np.asarray([query]))[0]
    assert [row for row, _ in hits] == sorted(range(8), key=lambda i: -scores[i])[:5]
    assert all(cosine == raw[row] for row, cosine in hits)
    assert [row for row, _ in hits] != [row for row, _ in index.search(query, 5)]
