"""The catalog-adapted MiniLM space measurement (`benchmarks/catalog_space.py`, issue 18): the
label-free transform (centring, all-but-the-top), the learned query adapter and its gradient,
and the dense-lane figures it reports."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import catalog_space as cs  # noqa: E402


def _documents(seed: int = 0, count: int = 40, dimension: int = 12) -> np.ndarray:
    rng = np.random.default_rng(seed)
    common = rng.normal(size=dimension) * 3  # the anisotropy: a large shared component
    return cs.unit(rng.normal(size=(count, dimension)) + common)


def test_centring_removes_the_catalog_mean_and_abtt_its_top_directions() -> None:
    documents = _documents()
    centred = cs.CatalogSpace.of(documents, 0)
    assert np.allclose(centred.mean, documents.mean(axis=0))
    moved = centred(documents)
    assert np.allclose(np.linalg.norm(moved, axis=1), 1.0)
    # before the renormalisation the centred documents average to zero
    assert np.allclose((documents - centred.mean).mean(axis=0), 0.0, atol=1e-9)
    # raw cosines of these documents sit high; centred ones spread around zero
    raw = documents @ documents.T
    assert raw[np.triu_indices(40, 1)].mean() > 0.5
    assert abs((moved @ moved.T)[np.triu_indices(40, 1)].mean()) < 0.1
    top = cs.CatalogSpace.of(documents, 2)
    assert top.directions.shape == (2, 12)
    assert np.allclose(top(documents) @ top.directions.T, 0.0, atol=1e-9)
    half = cs.CatalogSpace.of(documents, 0, share=0.5)
    assert np.allclose(half.mean, 0.5 * documents.mean(axis=0))


def test_an_untrained_adapter_is_the_identity_on_unit_queries() -> None:
    queries = _documents(1, 5)
    for rank in (0, 4):
        assert np.allclose(cs.Adapter(rank, 12)(queries), queries)


@pytest.mark.parametrize("rank", [0, 3])
def test_adapter_gradient_matches_finite_differences(rank: int) -> None:
    rng = np.random.default_rng(2)
    documents = _documents(3, 30)
    capabilities = [cs.Capability(cs.unit(rng.normal(size=12)), (i % 30, (7 * i) % 30))
                    for i in range(10)]
    adapter = cs.Adapter(rank, 12)
    for parameter in adapter.parameters():
        parameter += rng.normal(scale=0.1, size=parameter.shape)
    _, gradients = cs.adapter_loss(adapter, documents, capabilities, 0.3)
    for parameter, gradient in zip(adapter.parameters(), gradients):
        index = (1, 0) if parameter.ndim == 2 else (1,)
        old = parameter[index]
        parameter[index] = old + 1e-6
        up, _ = cs.adapter_loss(adapter, documents, capabilities, 0.3)
        parameter[index] = old - 1e-6
        down, _ = cs.adapter_loss(adapter, documents, capabilities, 0.3)
        parameter[index] = old
        assert (up - down) / 2e-6 == pytest.approx(gradient[index], rel=1e-4, abs=1e-8)


def test_a_fitted_adapter_moves_queries_towards_their_relevant_documents() -> None:
    rng = np.random.default_rng(4)
    documents = _documents(5, 30)
    # each query is its relevant document seen through a fixed distortion
    distortion = np.eye(12) + rng.normal(scale=0.6, size=(12, 12))
    capabilities = [cs.Capability(cs.unit(documents[i] @ distortion), (i,)) for i in range(30)]
    before, _ = cs.adapter_loss(cs.Adapter(8, 12), documents, capabilities, 0.01)
    adapter = cs.fit_adapter([(documents, capabilities)], 8, 0.01, steps=200)
    after, _ = cs.adapter_loss(adapter, documents, capabilities, 0.01)
    assert after < before
    hits = [int(np.argmax(documents @ adapter(c.vector[None, :])[0])) == c.relevant[0]
            for c in capabilities]
    plain = [int(np.argmax(documents @ c.vector)) == c.relevant[0] for c in capabilities]
    assert sum(hits) > sum(plain)


def test_auc_background_and_set_figures() -> None:
    assert cs.auc([0.9, 0.8], [0.1, 0.8]) == pytest.approx((2 + 1 + 0.5) / 4)
    assert np.isnan(cs.auc([0.5], []))
    cosines = np.array([0.9, 0.1, 0.5, 0.3])
    order, _ = cs.ranking(np.eye(4), ["d", "c", "b", "a"], cosines)
    assert order == [0, 2, 3, 1]
    assert cs.background(cosines, order) == pytest.approx(0.5)  # median of 4: the upper middle
    documents = np.eye(3)
    ids = ["x::a", "x::b", "y::c"]
    graded = [(cs.unit(np.array([1.0, 0.2, 0.0])), {"x::a": 3}),
              (cs.unit(np.array([0.3, 1.0, 0.0])), {"x::a": 2, "x::b": 3})]
    nomatch = [cs.unit(np.array([0.4, 0.4, 0.4]))]
    got = cs.figures(documents, ids, graded, nomatch, nomatch)
    assert got.first == 1.0 and got.recall == 1.0
    assert got.auc_nomatch == 1.0  # best cosines .98 and .96 against .58


def _toy() -> tuple[dict[str, cs.Catalog], dict[str, cs.CaseSet]]:
    documents = _documents(6, 6)
    ids = ["a::x", "a::y", "b::x", "b::y", "c::x", "c::y"]
    catalog = cs.Catalog(ids, documents, documents[:2])
    sets = {}
    for n, name in enumerate(cs.EVAL_SETS):
        graded = [(documents[i], {ids[i]: 3}) for i in range(6) if (i + n) % 2 == 0]
        sets[name] = cs.CaseSet("eval", graded, [])
    return {"eval": catalog}, sets


def test_leave_workers_out_never_fits_towards_the_workers_it_scores(
        monkeypatch: pytest.MonkeyPatch) -> None:
    catalogs, sets = _toy()
    fitted: list[set[str]] = []
    real = cs.fit_adapter

    def recording(parts, rank, l2, steps=cs.STEPS, tau=cs.TAU):  # type: ignore[no-untyped-def]
        fitted.append({cs.worker(catalogs["eval"].ids[r]) for _, caps in parts for c in caps
                       for r in c.relevant})
        return real(parts, rank, l2, 5, tau)

    monkeypatch.setattr(cs, "fit_adapter", recording)
    scored: list[set[str]] = []
    real_score = cs.score

    def scoring(catalog, cases, transform):  # type: ignore[no-untyped-def]
        scored.append({cs.worker(n) for _, grades in cases.graded for n in grades})
        return real_score(catalog, cases, transform)

    monkeypatch.setattr(cs, "score", scoring)
    # every capability is its own document: with no adapter every first place is right
    assert cs.leave_workers_out(catalogs, sets, "raw", (0, 0.1, 0.05), 0) == 9
    assert len(fitted) == len(scored) == cs.WORKER_FOLDS
    for train, test in zip(fitted, scored):
        assert test and not train & test
    fitted.clear()
    assert cs.leave_sets_out(catalogs, sets, "raw", (0, 0.1, 0.05), 0) == 9
    assert len(fitted) == len(cs.EVAL_SETS)
