"""Fit the learned fusion's weights with the static lane's cosine in place of MiniLM's (issue 19).

    .venv/bin/python benchmarks/fit_static_fusion.py [--eval-dir ../shared/eval] [--write | --check]

The same features (`fusion.features`), training (pairwise logistic regression) and cross-check
as `benchmarks/fit_fusion.py`, over the same sets (eval `dev`, our `extra*` case sets; never
`test`), but the dense ranking of each capability is its static ranking (`_rank.static`, cosine
to `Tool.dense_text`, top 64). Prints the static-only baseline, each set scored with weights
fitted on the others (and those weights, to score that set through the bench with them in
`static_lane.STATIC_WEIGHTS`), and the weights fitted on all sets — what ships: `--write` writes them to
`src/iii_directory/search/ranking/data/fitted.json`, `--check` exits 1 when that file no longer matches. Then the
cross-catalog check, both directions: the shipped fit scored on the held-out catalog
(`benchmarks/data/heldout_*.json`), and weights fitted on the held-out catalog scored on each
eval-catalog set (printed as "held-out fit").

Through the pipeline the weights order an answered lane below its first place only
(`static_fusion.learned_order`: the rule's leader after action agreement stays first, the rest
scored `exp((score − best) / 7)`). Recall@12 / MRR@1 with the weights fitted on the other two
sets: dev .895 / .739, extra .835 / .633, extra2 .778 / .671; with the shipped weights .895,
.818, .778 and held-out catalog .765 (the rule alone: .888, .769, .759, .760; MRR@1 the same).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fitted_file  # noqa: E402
import fit_fusion  # noqa: E402

from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
from iii_directory.search.ranking.fusion import FEATURES, Request, features
from iii_directory.search.ranking.lanes import lexical_ranking
from iii_directory.search.ranking.query import make_query

DATA = Path(__file__).resolve().parent / "data"


def samples(corpus: Corpus, matrix: np.ndarray, encoder: _Static,
            graded: list[tuple[str, dict[str, int]]]) -> list[fit_fusion.Sample]:
    """`fit_fusion.samples` as the static lane scores them: the static top 64 as the dense
    ranking and no view cosines (`static_fusion.learned_order` calls `fusion.features` without
    views, so the rows have the thirteen `FEATURES`)."""
    ids = [tool.name for tool in corpus.tools]
    out = []
    for capability, grades in graded:
        query = make_query(capability)
        if query is None:
            continue
        cosines = matrix @ encoder.encode([query.dense_text])[0]
        order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))[:fit_fusion.DENSE_K]
        names, rows = features(Request.of(query.terms), corpus.documents,
                               lexical_ranking(corpus.documents, query.terms),
                               [(ids[i], float(cosines[i])) for i in order],
                               corpus.descriptions.__getitem__)
        out.append((names, np.asarray(rows, dtype=np.float64), grades))
    return out


class _Static:
    """`encode(texts)` → numpy rows, from `_rank.static` (numpy only here, at fit time)."""

    def __init__(self) -> None:
        from _rank import static

        self.encoder = static.default_encoder()

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray([list(v) for v in self.encoder.encode(texts)], dtype=np.float32)


def static_sets(eval_dir: Path) -> tuple[dict[str, list[fit_fusion.Sample]], list[fit_fusion.Sample]]:
    """The samples of eval `dev`, our `extra*` case sets (by split name) and the held-out
    catalog's cases, each capability's dense ranking its static top 64."""
    records = json.loads((eval_dir / "catalog.json").read_text())
    corpus = Corpus.build(
        [tool_from_schema(r["function_id"], r.get("description"), r.get("request_schema"))
         for r in records if not (r.get("metadata") or {}).get("internal")])
    encoder = _Static()
    matrix = encoder.encode([tool.dense_text for tool in corpus.tools])
    sets = {"dev": samples(corpus, matrix, encoder, fit_fusion.graded_capabilities(
        eval_dir / "cases.json", "dev"))}
    for path in sorted(DATA.glob("extra*_cases.json")):
        split = json.loads(path.read_text())["cases"][0]["split"]
        sets[split] = samples(corpus, matrix, encoder, fit_fusion.graded_capabilities(path, split))
    held_corpus = fit_fusion.load_corpus(DATA / "heldout_catalog.json")
    held_matrix = encoder.encode([tool.dense_text for tool in held_corpus.tools])
    held = samples(held_corpus, held_matrix, encoder, fit_fusion.graded_capabilities(
        DATA / "heldout_cases.json", None))
    return sets, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--l2", type=float, default=fit_fusion.L2,
                        help="the ridge of the fit (chosen by cross-validation: "
                             "docs/record/search-quality.md)")
    _fitted_file.add_arguments(parser, "STATIC_WEIGHTS")
    args = parser.parse_args()
    if (args.write or args.check) and args.l2 != fit_fusion.L2:
        parser.error("--write and --check fit what ships: no --l2")
    sets, held = static_sets(args.eval_dir)
    if args.write or args.check:
        weights = fit_fusion.fit([s for data in sets.values() for s in data], args.l2)
        _fitted_file.apply({"static_lane.STATIC_WEIGHTS": {"values": _fitted_file.rounded(weights, 3)}},
                           args)
        return
    static_only = np.zeros(len(FEATURES))
    static_only[FEATURES.index("cos")] = 1.0
    for name, data in sets.items():
        first, recall = fit_fusion.quality(static_only, data)
        print(f"static only  {name:6s}  first {first:.3f}  recall@12 {recall:.3f}")
    for held_out in sets:
        weights = fit_fusion.fit([s for name, data in sets.items() if name != held_out
                                  for s in data], args.l2)
        first, recall = fit_fusion.quality(weights, sets[held_out])
        print(f"fit on the others -> {held_out:6s}  first {first:.3f}  recall@12 {recall:.3f}"
              f"  weights ({', '.join(f'{w:.3f}' for w in weights)})")
    first, recall = fit_fusion.quality(static_only, held)
    print(f"static only  heldout  first {first:.3f}  recall@12 {recall:.3f}")
    weights = fit_fusion.fit([s for data in sets.values() for s in data], args.l2)
    first, recall = fit_fusion.quality(weights, held)
    print(f"fit on the eval catalog's sets -> heldout  first {first:.3f}  recall@12 {recall:.3f}")
    back = fit_fusion.fit(held, args.l2)
    for name, data in sets.items():
        first, recall = fit_fusion.quality(back, data)
        print(f"fit on the held-out catalog -> {name:6s}  first {first:.3f}  recall@12 {recall:.3f}")
    print("held-out fit: (" + ", ".join(f"{w:.3f}" for w in back) + ")")
    print("STATIC_WEIGHTS: tuple[float, ...] = (" + ", ".join(f"{w:.3f}" for w in weights) + ")")


if __name__ == "__main__":
    main()
