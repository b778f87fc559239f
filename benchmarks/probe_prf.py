"""Probe: do pseudo-relevance feedback or a second query help the learned fusion? (issue 18)

    cd benchmarks && python probe_prf.py [--eval-dir ../../shared/eval] [--group NAME ...] \
        [--cache FILE]

Every candidate of a lane (dense top 20 ∪ BM25 top 20, as `fusion.features` builds it) keeps the
seventeen features shipped before this probe (`fusion.VIEWED_FEATURES`) and a group of these is
added:

| column | meaning |
|---|---|
| `prf{k}_{β}` | dense Rocchio: cos(q′, d), q′ = unit(q + β · mean of the vectors of the lane's dense top k) |
| `prf{k}_{β}_rr` | `1 / (1 + rank)` of d in the catalog ranked by q′, 0 outside its top 64 |
| `prfw5` | as `prf5_1`, the top five weighted by their cosine to q |
| `prfhead` | as `prf5_1`, the top five cut to those within 0.06 of the best cosine (a coherent head) |
| `xprf3` | cross-lane Rocchio: q′ = unit(q + mean of the vectors of the BM25 top 3) |
| `nbr{k}` | d's mean cosine to the dense top k (without q: the cluster hypothesis alone) |
| `rm3` | BM25 feedback (RM3-style): the ten terms the BM25 top 3 hold most, weighted by Σ_doc normalised BM25 score · term share of the document, not in the request; Σ_t w_t · BM25(t, d) over its best |
| `mq` | cos(m, d): m = the request cut to its action and object (`second_query.py`: leading verb + concept words; all non-stop, non-filler words when it names no concept) |
| `mq_desc`, `mq_act` | m against the description and action views (`views.py`) |
| `mq_max`, `mq_mean` | max / mean of `cos` and `mq` |
| `mqo`, `mqc` (+ `_max`, `_mean`) | other second queries: the concept words alone; every prose word that is neither a stop word nor filler |
| `st`, `st_rr` | the static table's cosine (`_rank.static`, no encoder) of the request to d, and d's rank by it |
| `cos_z`, `vmax_z`, `mq_z` | `cos`, `view_max`, `mq` as z-scores over the lane's candidates (a catalog's cosine scale left out) |
| `cos_gap` | `cos` minus the lane's best `cos` |
| `*_zc`, `*_zd` | the z-scores clipped to [−2, 2]; z-scores against the mean and spread of the dense top 20 |
| `mq_rr`, `xprf3_rr` | `1 / (1 + rank)` of d in the catalog ranked by m / by `xprf3`'s q′ |
| `cos_copy`, `rr_copy` | controls: copies of `cos` and `dense_rr` (no new information) |

The same cross-checks as `fit_fusion.py --heldout` are printed per group: each eval-catalog set
scored with weights fitted on the other two, the held-out catalog with weights fitted on the eval
catalog's sets, and each eval-catalog set with weights fitted on the held-out catalog (lane level:
share of capabilities whose first candidate is relevant / share of relevant functions in the first
twelve). Embeddings are kept in `--cache` (an `.npz`, default under /tmp) between runs.
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import _rank
from fit_fusion import dense_ranking, graded_capabilities, print_groups, probe_sets
from iii_directory.search.answerability import concept_words, request_words
from iii_directory.search.corpus import FILLER_TERMS, Corpus, document_terms
from iii_directory.search.fusion import VIEWED_FEATURES, Request, features
from iii_directory.search.lanes import lexical_ranking
from iii_directory.search.query import make_query
from iii_directory.search.views import Views, view_texts
from iii_directory.search.vocabulary import normal_term

HEAD_GAP = 0.06
RM3_DOCS = 3
RM3_TERMS = 10
PRF = [(k, beta) for k in (2, 3, 5) for beta in (0.5, 1.0)]
EXTRA: tuple[str, ...] = tuple(
    [f"prf{k}_{b}" for k, b in PRF] + [f"prf{k}_{b}_rr" for k, b in PRF]
    + ["prfw5", "prfhead", "xprf3", "nbr2", "nbr3", "nbr5", "rm3",
       "mq", "mq_desc", "mq_act", "mq_max", "mq_mean", "cos_copy", "mq_rr", "xprf3_rr",
       "rr_copy", "mqo", "mqo_max", "mqo_mean", "mqc", "mqc_max", "mqc_mean", "st", "st_rr",
       "cos_z", "vmax_z", "mq_z", "cos_gap", "cos_zc", "vmax_zc", "mq_zc", "cos_zd", "vmax_zd",
       "mq_zd"])
GROUPS: dict[str, tuple[str, ...]] = {"none": ()}
for _k, _b in PRF:
    GROUPS[f"prf{_k}_{_b}"] = (f"prf{_k}_{_b}",)
    GROUPS[f"prf{_k}_{_b}+rr"] = (f"prf{_k}_{_b}", f"prf{_k}_{_b}_rr")
GROUPS.update({
    "prfw5": ("prfw5",), "prfhead": ("prfhead",), "xprf3": ("xprf3",),
    "nbr2": ("nbr2",), "nbr3": ("nbr3",), "nbr5": ("nbr5",), "rm3": ("rm3",),
    "mq": ("mq",), "mq+maxmean": ("mq", "mq_max", "mq_mean"),
    "mq+views": ("mq", "mq_desc", "mq_act", "mq_max", "mq_mean"),
    "cos-copy": ("cos_copy",),
    "rr-copy": ("rr_copy",),
    "prf3_0.5_rr": ("prf3_0.5_rr",),
    "xprf3+rr": ("xprf3", "xprf3_rr"),
    "mqo+maxmean": ("mqo", "mqo_max", "mqo_mean"),
    "mqc+maxmean": ("mqc", "mqc_max", "mqc_mean"),
    "mq+mqc+maxmean": ("mq", "mq_max", "mq_mean", "mqc", "mqc_max", "mqc_mean"),
    "st": ("st",), "st+rr": ("st", "st_rr"),
    "z": ("cos_z", "vmax_z"), "mq+maxmean+z": ("mq", "mq_max", "mq_mean", "cos_z", "vmax_z", "mq_z"),
    "vmax_z": ("vmax_z",), "mq+maxmean+mq_z": ("mq", "mq_max", "mq_mean", "mq_z"),
    "mq+maxmean+vmax_z": ("mq", "mq_max", "mq_mean", "vmax_z"),
    "mq+maxmean+zc": ("mq", "mq_max", "mq_mean", "cos_zc", "vmax_zc", "mq_zc"),
    "mq+maxmean+zd": ("mq", "mq_max", "mq_mean", "cos_zd", "vmax_zd", "mq_zd"),
    "gap": ("cos_gap",), "mq+maxmean+gap": ("mq", "mq_max", "mq_mean", "cos_gap"),
    "mq+maxmean+st": ("mq", "mq_max", "mq_mean", "st"),
    "mq+rr": ("mq", "mq_rr"),
    "mq+maxmean+rr": ("mq", "mq_max", "mq_mean", "mq_rr"),
    "mq+maxmean+prf2_0.5+rr": ("mq", "mq_max", "mq_mean", "prf2_0.5", "prf2_0.5_rr"),
    "mq+maxmean+prf3_0.5+rr": ("mq", "mq_max", "mq_mean", "prf3_0.5", "prf3_0.5_rr"),
    "mq+maxmean+prf3_1.0+rr": ("mq", "mq_max", "mq_mean", "prf3_1.0", "prf3_1.0_rr"),
    "mq+maxmean+prf5_0.5+rr": ("mq", "mq_max", "mq_mean", "prf5_0.5", "prf5_0.5_rr"),
    "prf3_1+rm3": ("prf3_1.0", "rm3"),
})


class CachedEncoder:
    """The packaged MiniLM with every text's vector kept in an `.npz` (keyed by sha256)."""

    def __init__(self, path: Path) -> None:
        from _rank import dense

        self.path = path
        self.encoder: Any = None
        self.make = dense.Encoder
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            with np.load(path) as stored:
                self.vectors = {key: stored[key] for key in stored.files}
        self.dirty = False

    def encode(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode()).hexdigest()[:24] for t in texts]
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self.vectors))
        if missing:
            if self.encoder is None:
                self.encoder = self.make()
            made = np.asarray(self.encoder.encode(missing), dtype=np.float32)
            for text, vector in zip(missing, made):
                self.vectors[hashlib.sha256(text.encode()).hexdigest()[:24]] = vector
            self.dirty = True
        return np.stack([self.vectors[k] for k in keys])

    def save(self) -> None:
        if self.dirty:
            np.savez(self.path, **self.vectors)


_STATIC: dict[int, np.ndarray] = {}


def static_row(text: str) -> np.ndarray:
    """The static table's unit vector of a text (`_rank.static`, distilled from MiniLM)."""
    from _rank import static

    if -1 not in _STATIC:
        _STATIC[-1] = static.default_encoder()  # type: ignore[assignment]
    vector = np.asarray(_STATIC[-1].encode_one(text), dtype=np.float32)  # type: ignore[attr-defined]
    return vector / (np.linalg.norm(vector) or 1.0)


def static_rows(corpus: Corpus) -> np.ndarray:
    """The static vectors of a corpus's dense texts, made once."""
    if id(corpus) not in _STATIC:
        _STATIC[id(corpus)] = np.stack([static_row(t.dense_text) for t in corpus.tools])
    return _STATIC[id(corpus)]


def static_cosines(corpus: Corpus, text: str) -> np.ndarray:
    return static_rows(corpus) @ static_row(text)


def objects_only(dense_text: str) -> str:
    """The concept words alone (`answerability.concept_words`); the text when it names none."""
    return " ".join(concept_words(dense_text)) or dense_text


def content_words(dense_text: str) -> str:
    """Every prose word that is neither a stop word nor filler (ordinary English kept)."""
    words = [w for w in request_words(dense_text)
             if w not in _rank.STOPWORDS and normal_term(w) not in FILLER_TERMS]
    return " ".join(words) or dense_text


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / (np.linalg.norm(vector) or 1.0)


def rr_of(matrix: np.ndarray, query: np.ndarray, ids: list[str]) -> dict[str, float]:
    """`1 / (1 + rank)` of each id in the dense top 64 of `query` (absent: outside it)."""
    _, ranking = dense_ranking(ids, matrix @ query)
    return {doc_id: 1.0 / (1 + rank) for rank, (doc_id, _) in enumerate(ranking)}


def rm3_scores(corpus: Corpus, terms: tuple[str, ...], names: list[str]) -> np.ndarray:
    """The RM3-style expansion score of each candidate (see the module docstring)."""
    documents = corpus.documents
    hits = documents.bm25(list(terms), 1, RM3_DOCS)
    asked = {normal_term(t) for t in terms}
    if not hits:
        return np.zeros(len(names))
    best = hits[0][1]
    weight: Counter[str] = Counter()
    for doc_id, score, _ in hits:
        held = Counter(document_terms(documents.documents[documents.positions[doc_id]].lexical))
        size = sum(held.values()) or 1
        for term, count in held.items():
            if term not in asked and not term.isdigit():
                weight[term] += (score / best) * count / size
    expansion = weight.most_common(RM3_TERMS)
    total = np.zeros(len(names))
    at = {name: i for i, name in enumerate(names)}
    for term, w in expansion:
        for doc_index, score, _ in documents.index.search([term], None, 1):
            i = at.get(documents.documents[doc_index].id)
            if i is not None:
                total[i] += w * score
    top = total.max()
    return total / top if top > 0 else total


def samples(corpus: Corpus, encoder: CachedEncoder,
            graded: list[tuple[str, dict[str, int]]]) -> list[Any]:
    ids = [tool.name for tool in corpus.tools]
    position = {name: i for i, name in enumerate(ids)}
    main = encoder.encode([tool.dense_text for tool in corpus.tools])
    views = Views.of(corpus.tools, encoder.encode(view_texts(corpus.tools)))
    out = []
    for capability, grades in graded:
        query = make_query(capability)
        if query is None:
            continue
        q, m = encoder.encode([query.dense_text, query.second_text])
        cosines = main @ q
        order, dense = dense_ranking(ids, cosines)
        names, rows = features(Request.of(query.terms), corpus.documents,
                               lexical_ranking(corpus.documents, query.terms), dense,
                               corpus.descriptions.__getitem__,
                               lambda n, v=q: views.cosines(n, v))
        base = np.asarray(rows, dtype=np.float64)
        at = np.asarray([position[n] for n in names])
        cand = main[at]
        columns: dict[str, np.ndarray] = {}
        for k, beta in PRF:
            shifted = unit(q + beta * main[order[:k]].mean(0))
            columns[f"prf{k}_{beta}"] = cand @ shifted
            rr = rr_of(main, shifted, ids)
            columns[f"prf{k}_{beta}_rr"] = np.asarray([rr.get(n, 0.0) for n in names])
        top5 = np.asarray(order[:5])
        weights = np.maximum(cosines[top5], 0.0)
        columns["prfw5"] = cand @ unit(q + (weights[:, None] * main[top5]).sum(0)
                                       / (weights.sum() or 1.0))
        head = [i for i in order[:5] if cosines[i] >= cosines[order[0]] - HEAD_GAP]
        columns["prfhead"] = cand @ unit(q + main[head].mean(0))
        lexical_top = [position[d] for d, _, _ in corpus.documents.bm25(list(query.terms), 1, 3)]
        columns["xprf3"] = cand @ unit(q + main[lexical_top].mean(0)) if lexical_top \
            else cand @ q
        for k in (2, 3, 5):
            columns[f"nbr{k}"] = (cand @ main[order[:k]].T).mean(1)
        columns["rm3"] = rm3_scores(corpus, query.terms, names)
        columns["mq"] = cand @ m
        desc, act = views.cosines(names, m)
        columns["mq_desc"], columns["mq_act"] = np.asarray(desc), np.asarray(act)
        cos = base[:, VIEWED_FEATURES.index("cos")]
        columns["mq_max"] = np.maximum(cos, columns["mq"])
        columns["mq_mean"] = (cos + columns["mq"]) / 2.0
        columns["cos_copy"] = cos
        columns["rr_copy"] = base[:, VIEWED_FEATURES.index("dense_rr")]
        def z(values: np.ndarray) -> np.ndarray:
            return (values - values.mean()) / (values.std() or 1.0)

        columns["cos_z"] = z(cos)
        columns["vmax_z"] = z(base[:, VIEWED_FEATURES.index("view_max")])
        columns["mq_z"] = z(columns["mq"])
        columns["cos_gap"] = cos - cos.max()
        head = np.asarray([name in {d for d, _ in dense[:20]} for name in names])

        def zd(values: np.ndarray) -> np.ndarray:
            ref = values[head] if head.any() else values
            return (values - ref.mean()) / (ref.std() or 1.0)

        for key, values in (("cos", cos), ("vmax", base[:, VIEWED_FEATURES.index("view_max")]),
                            ("mq", columns["mq"])):
            columns[f"{key}_zc"] = np.clip(z(values), -2.0, 2.0)
            columns[f"{key}_zd"] = zd(values)
        st = static_cosines(corpus, query.dense_text)
        columns["st"] = st[at]
        rr = rr_of(static_rows(corpus), static_row(query.dense_text), ids)
        columns["st_rr"] = np.asarray([rr.get(n, 0.0) for n in names])
        for key, text in (("mqo", objects_only(query.dense_text)),
                          ("mqc", content_words(query.dense_text))):
            other = cand @ encoder.encode([text])[0]
            columns[key], columns[f"{key}_max"] = other, np.maximum(cos, other)
            columns[f"{key}_mean"] = (cos + other) / 2.0
        rr = rr_of(main, m, ids)
        columns["mq_rr"] = np.asarray([rr.get(n, 0.0) for n in names])
        rr = rr_of(main, unit(q + main[lexical_top].mean(0)) if lexical_top else q, ids)
        columns["xprf3_rr"] = np.asarray([rr.get(n, 0.0) for n in names])
        extra = np.column_stack([columns[c] for c in EXTRA])
        out.append((names, np.column_stack([base, extra]), grades))
    return out


def pick(data: list[Any], columns: tuple[str, ...]) -> list[Any]:
    keep = list(range(len(VIEWED_FEATURES))) + [len(VIEWED_FEATURES) + EXTRA.index(c)
                                                 for c in columns]
    return [(names, rows[:, keep], grades) for names, rows, grades in data]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../../shared/eval"))
    parser.add_argument("--group", action="append", choices=tuple(GROUPS))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/probe_prf_vectors.npz"))
    parser.add_argument("--show-queries", action="store_true",
                        help="print each dev capability's second query and stop")
    args = parser.parse_args()
    if args.show_queries:
        for capability, _ in graded_capabilities(args.eval_dir / "cases.json", "dev"):
            query = make_query(capability)
            if query is not None:
                print(f"{capability!r:90s} -> {query.second_text!r}")
        return
    encoder = CachedEncoder(args.cache)
    sets, heldout = probe_sets(args.eval_dir,
                               lambda corpus, graded: samples(corpus, encoder, graded))
    encoder.save()
    print_groups(GROUPS, args.group or list(GROUPS), sets, heldout, pick, len(VIEWED_FEATURES))

if __name__ == "__main__":
    main()
