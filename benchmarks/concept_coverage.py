"""Concept coverage as a signal of the answerability decision (issues 18 and 19): the
measurement behind the lexical family's `concepts` input (variant `all_top3_cmean`, shipped as
`search/concept_coverage.py`) and the variants not kept (docs/search-quality.md, "Answerability", "Concept
coverage").

    .venv/bin/python benchmarks/fit_answerability.py record --out /tmp/signals.json
    .venv/bin/python benchmarks/concept_coverage.py --signals /tmp/signals.json

Does *every* content concept of a request have a counterpart in the best candidate function?
For a recorded capability (`fit_answerability.py record`: its signals and its lane's first 12
ids), the request's *concepts* are its prose words (`answerability.request_words`) that are
neither ordinary English (`answerability.ORDINARY_RANK`), stop words nor filler
(`corpus.FILLER_TERMS`); variant `nouns` also drops bare verbs (`answerability.VERBS`). A
candidate's words are the raw words of its BM25 document (id words, description, argument
names). With `v(w)` the static word-piece vector of one word (`_rank.static`, the L2-normalised
sum of its pieces' rows — every target has it), concept `c`'s match in document `d` is
`m(c, d) = clip(max_{w ∈ d} v(c) · v(w), 0, 1)` (1 for a shared word), and per document

    cmin(d)   = min_c m(c, d)
    cmean(d)  = mean_c m(c, d)
    cwmean(d) = Σ_c idf(c) · m(c, d) / Σ_c idf(c)
    crare(d)  = m(c*, d), c* the concept of the highest idf
    cshare(d) = Σ_{c : m(c, d) ≥ CUT} idf(c) / Σ_c idf(c)      (idf over the catalog, as the
                                                                decision's coverage)

over the lane's first candidate (`top1`) and as the best of its first three (`top3`: max over
the three documents of each value); and the *worst concept* `cworst = min_c max_d m(c, d)` (each
concept's best match among the candidates, then the least of those; `top1`: cmin). No concept:
every value 1. Prefix `all_` / `nouns_` reads the lane as fused (every mode); `dense_` the
dense ranking's first candidates instead (hybrid rows recorded with their dense ids; the lane
where there is none).

Each variant adds its value(s) to the calibrated score's features (`answerability.features`)
and is refitted and cross-checked exactly as `fit_answerability.py fit` does (fitted on the
eval catalog's sets with near misses, scored on the held-out catalog; fitted on the held-out
catalog, scored on the eval catalog's sets). `--relax` also lets a hybrid capability that the
lane gates (`answerability.supported`) refuse reach the score when its coverage is complete
(cshare ≥ `--relax` over the top 3), the gates then being features of the score. `--late`
(hybrid, the dense extra) scores token-level variants instead: MiniLM token vectors read
through the encoder's session (`probe_late_interaction.token_vectors`), see `late_interaction`.
`--frontier` prints, instead of the shipped operating point, the kept share at each no-match FP
level (`FP_LEVELS`) over every threshold of each fitted score. `--floor C S` scores with the
hybrid evidence floor's encoder-alone cosines set to C and S (`answerability.CONFIDENT_COSINE`,
`SUPPORTED_COSINE`; .45 and .32 shipped) — every recorded capability with a lane has its signals,
so a lower floor needs no new recording.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import fit_answerability as fa  # noqa: E402

CUTS = (0.4, 0.5, 0.6)
EXTRA_KEY = "_concepts"


def _documents(catalog_path: Path) -> Any:
    from iii_directory.search.corpus import (DocumentSet, canonical_corpus, tool_documents,
                                             tool_from_schema)

    tools = [tool_from_schema(f["function_id"], f.get("description"), f.get("request_schema"))
             for f in json.loads(catalog_path.read_text())]
    return DocumentSet(tool_documents(canonical_corpus(tools)))


class Coverage:
    """The concept-coverage values of requests over one catalog (numpy; fit time only)."""

    def __init__(self, documents: Any, words: dict[str, Any] | None = None) -> None:
        import _rank
        from _rank.static import default_encoder
        from iii_directory.search.answerability import catalog_stats

        self.encoder = default_encoder()
        self.given = words
        self.documents = documents
        self.stats = catalog_stats(documents)
        self.words: dict[str, list[str]] = {
            d.id: sorted({w for w in _rank.tokenize(d.lexical) if w.isalpha()})
            for d in documents.documents}

    @lru_cache(maxsize=None)
    def vector(self, word: str) -> Any:
        if self.given is not None:
            return self.given[word]
        return np.frombuffer(self.encoder.encode_one(word), dtype=np.float32)

    @lru_cache(maxsize=None)
    def matrix(self, doc_id: str) -> Any:
        words = self.words.get(doc_id) or []
        return np.stack([self.vector(w) for w in words]) if words else np.zeros((0, 1))

    def concepts(self, text: str, nouns: bool) -> list[str]:
        import _rank
        from iii_directory.search.answerability import (ORDINARY_RANK, VERBS, request_words,
                                                        tokenizer_words)
        from iii_directory.search.corpus import FILLER_TERMS
        from iii_directory.search.vocabulary import normal_term

        vocabulary = tokenizer_words()
        out = []
        for word in dict.fromkeys(request_words(text)):
            term = normal_term(word)
            if word in _rank.STOPWORDS or term in FILLER_TERMS \
                    or vocabulary.get(word, ORDINARY_RANK) < ORDINARY_RANK:
                continue
            if nouns and term in VERBS:
                continue
            out.append(word)
        return out

    def values(self, text: str, lane: Sequence[str], nouns: bool) -> dict[str, float]:
        """cmin / cmean / cshare@CUT of the first candidate and best of the first three."""
        from iii_directory.search.vocabulary import normal_term

        concepts = self.concepts(text, nouns)
        out: dict[str, float] = {}
        if not concepts or not lane:
            for depth in ("top1", "top3"):
                for name in ("cmin", "cmean", "cwmean", "crare", "cworst",
                             *(f"cshare{c}" for c in CUTS)):
                    out[f"{depth}_{name}"] = 1.0 if concepts == [] else 0.0
            return out
        q = np.stack([self.vector(c) for c in concepts])
        idf = np.array([self.stats.idf(normal_term(c)) for c in concepts])
        rows = []
        worst = np.zeros(len(concepts))
        for doc_id in lane[:3]:
            m = self.matrix(doc_id)
            best = (q @ m.T).max(axis=1) if len(m) else np.zeros(len(concepts))
            best = np.clip(best, 0.0, 1.0)
            worst = np.maximum(worst, best)
            row = {"cmin": float(best.min()), "cmean": float(best.mean()),
                   "cwmean": float((idf * best).sum() / idf.sum()),
                   "crare": float(best[int(np.argmax(idf))])}
            for cut in CUTS:
                row[f"cshare{cut}"] = float(idf[best >= cut - 1e-6].sum() / idf.sum())
            rows.append(row)
        for key in rows[0]:
            out[f"top1_{key}"] = rows[0][key]
            out[f"top3_{key}"] = max(r[key] for r in rows)
        out["top1_cworst"], out["top3_cworst"] = rows[0]["cmin"], float(worst.min())
        return out


def minilm_words(rows: list[dict[str, Any]], documents: Sequence[Any]) -> dict[str, Any]:
    """`--word-vectors minilm`: every document word and request concept embedded alone by
    MiniLM (the pooled sentence vector of the one word), instead of the static table's rows."""
    import _rank
    from _rank import dense

    words = {w for docs in documents for d in docs.documents
             for w in _rank.tokenize(d.lexical) if w.isalpha()}
    probe = Coverage(documents[0])
    words |= {w for r in rows for w in probe.concepts(r["text"], False)}
    ordered = sorted(words)
    return dict(zip(ordered, dense.Encoder().encode(ordered)))


def annotate(rows: list[dict[str, Any]], eval_dir: Path, vectors: str = "static") -> None:
    """Adds `EXTRA_KEY` (both concept variants) to every row with signals."""
    from case_sets import tuning_sets

    sets = tuning_sets(eval_dir)
    documents = (_documents(sets["dev"][0]), _documents(sets["heldout"][0]))
    words = minilm_words(rows, documents) if vectors == "minilm" else None
    coverage = {"eval": Coverage(documents[0], words), "heldout": Coverage(documents[1], words)}
    for row in rows:
        if row["signals"] is None:
            continue
        side = coverage["heldout" if row["set"].startswith("heldout") else "eval"]
        row["signals"][EXTRA_KEY] = row_values(side, row)


def row_values(side: Coverage, row: dict[str, Any]) -> dict[str, float]:
    """The concept values of one recorded row: `all_` and `nouns_` over its lane, `dense_` over
    its dense ranking's ids (`fit_answerability.record_cases` keeps the first 12 in hybrid), the
    lane's where the row has none."""
    dense = row.get("dense") or row["lane"]
    return {**{f"all_{k}": v for k, v in side.values(row["text"], row["lane"], False).items()},
            **{f"nouns_{k}": v for k, v in side.values(row["text"], row["lane"], True).items()},
            **{f"dense_{k}": v for k, v in side.values(row["text"], dense, False).items()}}


def late_interaction(rows: list[dict[str, Any]], eval_dir: Path) -> None:
    """Adds to each hybrid row's concept values the MiniLM token-level ones (`--late`): over the
    request's tokens ([CLS]/[SEP] left out; `tok`) or only those inside its concepts (`ctok`),
    each token's best cosine to a token of the candidate's dense text, then the mean
    (`late_*_mean`) and the minimum (`late_*_min`) — the best of the lane's first three."""
    import re

    from probe_late_interaction import token_vectors

    from _rank import dense
    from case_sets import tuning_sets
    from iii_directory.search.corpus import canonical_corpus, tool_from_schema

    encoder = dense.Encoder()
    sets = tuning_sets(eval_dir)
    doc_tokens: dict[str, dict[str, Any]] = {}
    for side, key in (("eval", "dev"), ("heldout", "heldout")):
        tools = canonical_corpus(tool_from_schema(f["function_id"], f.get("description"),
                                                  f.get("request_schema"))
                                 for f in json.loads(sets[key][0].read_text()))
        doc_tokens[side] = dict(zip([t.name for t in tools],
                                    token_vectors(encoder, [t.dense_text for t in tools])))
    coverage = Coverage.__new__(Coverage)
    hybrid = [r for r in rows if r["mode"] == "hybrid" and r["signals"] is not None]
    texts = sorted({r["text"] for r in hybrid})
    spans: dict[str, Any] = {}
    for start in range(0, len(texts), 32):
        chunk = texts[start:start + 32]
        encodings = encoder._tokenizer.encode_batch(chunk)
        vectors = token_vectors(encoder, chunk)
        for text, encoding, tokens in zip(chunk, encodings, vectors):
            offsets = [o for o, m, special in zip(encoding.offsets, encoding.attention_mask,
                                                  encoding.special_tokens_mask)
                       if m and not special]
            inside = [(m.start(), m.end()) for word in coverage.concepts(text, False)
                      for m in re.finditer(rf"\b{re.escape(word)}\b", text.lower())]
            keep = [i for i, (a, b) in enumerate(offsets)
                    if any(a >= s and b <= e for s, e in inside)]
            spans[text] = (tokens, keep)
    for r in hybrid:
        tokens, keep = spans[r["text"]]
        side = doc_tokens["heldout" if r["set"].startswith("heldout") else "eval"]
        values: dict[str, list[float]] = {}
        for doc_id in r["lane"][:3]:
            if doc_id not in side or not len(tokens):
                continue
            best = (tokens @ side[doc_id].T).max(axis=1)
            for name, part in (("tok", best), ("ctok", best[keep] if keep else np.ones(1))):
                values.setdefault(f"late_{name}_mean", []).append(float(part.mean()))
                values.setdefault(f"late_{name}_min", []).append(float(part.min()))
        r["signals"].setdefault(EXTRA_KEY, {}).update(
            {k: max(v) for k, v in values.items()})


def install(keys: Sequence[str], relax: float | None) -> None:
    """Points `fit_answerability`'s features and `scored` at the concept values of each row (the
    signals dict carries them under `EXTRA_KEY`)."""
    from iii_directory.search.answerability import (FEATURE_NAMES, Signals, evidence_floor,
                                                    features, supported)

    def strip(signals: dict[str, Any]) -> Signals:
        return Signals(**{k: v for k, v in signals.items() if k != EXTRA_KEY})

    def with_concepts(signals: dict[str, Any], family: str) -> list[float]:
        # the shipped `concepts` input is left out: the variants here add their own
        base = [value for name, value in zip(FEATURE_NAMES[family], features(strip(signals),
                                                                             family))
                if name != "concepts"]
        extra = signals.get(EXTRA_KEY) or {}
        values = [extra.get(k, 0.0) for k in keys]
        if relax is not None and family == "hybrid":
            found = strip(signals)
            values += [1.0 if found.admitted else 0.0, 1.0 if found.corroborated else 0.0]
        return base + values

    def scored(signals: dict[str, Any] | None) -> bool:
        if signals is None or signals["refused"]:
            return False
        found = strip(signals)
        if not evidence_floor(found):
            return False
        if supported(found):
            return True
        extra = signals.get(EXTRA_KEY) or {}
        return relax is not None and extra.get(f"all_top3_cshare{CUTS[1]}", 0.0) >= relax

    fa.features = with_concepts
    fa.scored = scored


def both_ways(rows: list[dict[str, Any]], mode: str, l2: float, fp: float) -> tuple[Any, ...]:
    """The eval side's rows (near misses included), the held-out side's, and the fits
    `(model, threshold)` on each (`fit_answerability.fit_family`)."""
    part = [r for r in rows if r["mode"] == mode]
    ev = [r for r in part if r["set"] in (*fa.EVAL_SIDE, "nearmiss")]
    held = [r for r in part if r["set"] in fa.HELDOUT_SIDE]
    return ev, held, fa.fit_family(ev, mode, l2, fp), fa.fit_family(held, mode, l2, fp)


def crosscheck(rows: list[dict[str, Any]], modes: Sequence[str], l2: float,
               fp: float = 0.10) -> dict[str, Any]:
    """Eval → held-out and held-out → eval, per mode: kept / FP per set (as `fit` prints)."""
    out: dict[str, Any] = {}
    for mode in modes:
        ev, held, (model, cut), (back, back_cut) = both_ways(rows, mode, l2, fp)
        forward = fa.evaluate(model, cut, held, mode)
        reverse = fa.evaluate(back, back_cut, ev, mode)
        out[mode] = {"heldout": forward["heldout"], **{k: reverse[k] for k in
                                                       ("dev", "extra", "extra2", "nearmiss")},
                     "weights": [round(float(w), 3) for w in model]}
    return out


FP_LEVELS = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30)


def frontier(model: Any, rows: list[dict[str, Any]], family: str) -> list[float]:
    """The best kept share of served capabilities at each no-match FP level in `FP_LEVELS`, over
    every threshold of `model`'s score (rows the score does not decide count as no)."""
    pos, cases = [], {}
    for r in rows:
        value = -np.inf
        if fa.scored(r["signals"]):
            value = float(fa.scores(model, np.array([fa.features(r["signals"], family)]))[0])
        if r["kind"] == "no_match" and "chatter" not in r["set"]:
            key = (r["set"], r["case"])
            cases[key] = max(cases.get(key, -np.inf), value)
        elif fa.label(r) == 1:
            pos.append(value)
    positives, negatives = np.array(pos), np.array(list(cases.values()))
    out = []
    for level in FP_LEVELS:
        allowed = int(np.floor(level * len(negatives) + 1e-9))
        ordered = np.sort(negatives)[::-1]
        cut = ordered[allowed] if allowed < len(ordered) else -np.inf
        out.append(float((positives > cut).mean()) if len(positives) else float("nan"))
    return out


def frontiers(rows: list[dict[str, Any]], modes: Sequence[str], l2: float) -> dict[str, Any]:
    """Per mode: the held-out frontier of the eval-fitted score, and the frontier over dev +
    extra + extra2 (near misses left out) of the held-out-fitted one."""
    out: dict[str, Any] = {}
    for mode in modes:
        ev, held, (model, _), (back, _) = both_ways(rows, mode, l2, 0.10)
        out[mode] = (frontier(model, [r for r in held if r["set"] == "heldout"], mode),
                     frontier(back, [r for r in ev if r["set"] in ("dev", "extra", "extra2")],
                              mode))
    return out


def frontier_line(name: str, result: dict[str, Any]) -> str:
    cells = [f"{mode} H " + "/".join(f"{v:.3f}" for v in forward) + " E "
             + "/".join(f"{v:.3f}" for v in reverse)
             for mode, (forward, reverse) in result.items()]
    return f"{name:30s} " + " || ".join(cells)


def line(name: str, result: dict[str, Any]) -> str:
    cells = []
    for mode, m in result.items():
        h = m["heldout"]
        cells.append(f"{mode} H {h['kept']:.3f}/{h['fp']:.3f} | dev {m['dev']['kept']:.3f}/"
                     f"{m['dev']['fp']:.2f} x {m['extra']['kept']:.3f}/{m['extra']['fp']:.2f} "
                     f"x2 {m['extra2']['kept']:.3f}/{m['extra2']['fp']:.2f} "
                     f"nm {m['nearmiss']['fp']:.3f}")
    return f"{name:34s} " + "  ||  ".join(cells)


VARIANTS: dict[str, tuple[str, ...]] = {
    "baseline": (),
    **{f"{v}_{d}_{s}": (f"{v}_{d}_{s}",) for v in ("all", "nouns") for d in ("top1", "top3")
       for s in ("cmin", "cmean", "cwmean", "crare", *(f"cshare{c}" for c in CUTS))},
    **{f"{v}_{d}_min+mean+share": (f"{v}_{d}_cmin", f"{v}_{d}_cmean", f"{v}_{d}_cshare0.5")
       for v in ("all", "nouns") for d in ("top1", "top3")},
    **{f"{v}_{d}_{s}": (f"{v}_{d}_{s}",) for v in ("all", "dense") for d in ("top1", "top3")
       for s in ("cmean", "cworst")},
    **{f"{v}_top3_cmean+cworst": (f"{v}_top3_cmean", f"{v}_top3_cworst")
       for v in ("all", "dense")},
}
LATE_VARIANTS: dict[str, tuple[str, ...]] = {
    **{f"late_{t}_{s}": (f"late_{t}_{s}",) for t in ("tok", "ctok") for s in ("mean", "min")},
    "late_tok_mean+min": ("late_tok_mean", "late_tok_min"),
    "late_ctok_mean+min": ("late_ctok_mean", "late_ctok_min"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signals", type=Path, default=Path("/tmp/answerability_signals.json"))
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--mode", action="append", choices=fa.MODES)
    parser.add_argument("--variant", action="append", help="only these (default: all)")
    parser.add_argument("--relax", type=float, default=None,
                        help="hybrid: gate-refused capabilities with top-3 cshare ≥ this reach "
                             "the score, the gates as features")
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument("--fp", type=float, default=0.10,
                        help="the training no-match FP target of the operating point")
    parser.add_argument("--frontier", action="store_true",
                        help="print kept share at FP levels 0.05..0.30, not the operating point")
    parser.add_argument("--word-vectors", choices=("static", "minilm"), default="static",
                        help="word vectors of the concept match: the static table (shipped) or "
                             "MiniLM on each word alone (the dense extra)")
    parser.add_argument("--late", action="store_true",
                        help="hybrid: MiniLM token-level variants (needs the dense extra)")
    parser.add_argument("--dump", type=Path, help="write the annotated rows here")
    parser.add_argument("--floor", type=float, nargs=2, metavar=("CONFIDENT", "SUPPORTED"),
                        help="hybrid evidence floor: the encoder-alone cosines "
                             "(answerability.CONFIDENT_COSINE, SUPPORTED_COSINE) instead of the "
                             "shipped ones")
    args = parser.parse_args()
    if args.floor:
        from iii_directory.search import answerability

        answerability.CONFIDENT_COSINE, answerability.SUPPORTED_COSINE = args.floor
    rows = json.loads(args.signals.read_text())
    annotate(rows, args.eval_dir, args.word_vectors)
    variants = dict(VARIANTS)
    if args.late:
        late_interaction(rows, args.eval_dir)
        variants = {"baseline": (), **LATE_VARIANTS}
    if args.dump:
        args.dump.write_text(json.dumps(rows) + "\n")
    for name, keys in variants.items():
        if args.variant and name not in args.variant:
            continue
        install(keys, args.relax)
        modes = args.mode or fa.MODES
        print(frontier_line(name, frontiers(rows, modes, args.l2)) if args.frontier
              else line(name, crosscheck(rows, modes, args.l2, args.fp)), flush=True)


if __name__ == "__main__":
    main()
