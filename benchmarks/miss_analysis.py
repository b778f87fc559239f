"""Where hybrid search loses recall and first place (issue 18, failure analysis).

    .venv/bin/python benchmarks/miss_analysis.py [--eval-dir ../shared/eval] [--set NAME ...] \
        [--cases] [--json PATH]

Sets: eval `dev` (never `test`), `benchmarks/data/extra_cases.json`, `extra2_cases.json` and the
held-out catalog (`heldout`). Every case runs through the search handler in hybrid, as the bench
does (`iii_directory.bench.run_mode`), with an answerability observer that records, per
capability, the lane the decision saw and its answer. Beside that, each capability is ranked
offline the way the lane ranks it: its dense ranking over the catalog (the packaged MiniLM, top
64), its raw BM25 hits (one matched term, depth 50) and the learned fusion over them
(`fusion.learned_lane`, with the catalog's extra views and the second query), and whether the
lane admits its dense ranking (`CATALOG.admit`).

Every relevant function (grade ≥ 2) of a match or multi case that the response's first twelve do
not hold is put in one class, the first that applies:

| class | meaning |
|---|---|
| `no-lane` | the capability got no lane the decision could see (no dense ranking and an empty lexical lane) |
| `unsupported` | the decision said no because the dense ranking was neither admitted nor corroborated the lexical lane (`answerability.supported`, the spec's lane gates) |
| `refused` | its lane held the function; the decision said no on its evidence floor or score |
| `pool` | neither the dense top 20 nor the BM25 top 20 holds it (not a fusion candidate) |
| `fusion` | a candidate of an answered lane that the learned score put below 12th |
| `selection` | the lane ranked it in its first 12 and said yes; the batch's round robin, worker cap or grouping dropped it |

and every case whose first result is not relevant in one of: `empty` (no result), `refused`
(the first capability's lane held a relevant function and was refused), `lane-first` (the first
capability's lane put a non-relevant function first; the dense and BM25 ranks of its best
relevant function are printed), `order` (the lane's first was relevant, the response's first is
not: grouping by worker or another capability's lane). Multi cases are counted apart.

Then the eval's own metrics (`bench.score_cases`) at every stage between the lanes and the
response (`stage_runs`: the lanes without the decision; the spec's §7.2 selection in rank order
and grouped by worker as §7.3 groups it; the shipped selection, with the worker cap inside the
walk, in rank order and grouped, the response), match and multi cases apart, and for every graded capability (the
population of `fit_fusion.py`'s lane-level figures) whether a relevant function is first in the
offline learned fusion, in the lane the pipeline built, in that lane after the decision, and
anywhere in the response's first twelve — the chain from the lane-level "first" to MRR@1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_sets import tuning_sets  # noqa: E402
from fit_fusion import corpus_views, index_cosines, load_corpus  # noqa: E402

from iii_directory.search.fusion import (DENSE_CANDIDATES, LEXICAL_CANDIDATES,  # noqa: E402
                                         LEXICAL_DEPTH, Request, learned_lane)
from iii_directory.search.lanes import CATALOG, lexical_ranking  # noqa: E402
from iii_directory.search.query import make_query  # noqa: E402

DENSE_K = 64
TOP = 12


def load_sets(eval_dir: Path) -> dict[str, tuple[Path, list[dict[str, Any]]]]:
    """dev, extra, extra2 and heldout (`case_sets.tuning_sets`)."""
    return tuning_sets(eval_dir)


def run_observed(catalog: list[dict[str, Any]], cases: list[dict[str, Any]],
                 batches: dict[tuple[str, ...], dict[str, Any]] | None = None
                 ) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
    """The hybrid run (case id → response ids) and, per capability text, the lane the decision
    saw and its answer. With `batches`, every batch's lanes after the decision, their tails and
    learned flags are recorded there too, keyed by the batch's capability texts."""
    import anyio

    from iii_directory.bench import run_mode
    from iii_directory.search import answerability
    from iii_directory.search.service import SearchService

    seen: dict[str, dict[str, Any]] = {}
    original = SearchService._installed_lanes

    async def recorded(self: Any, call: Any, queries: list[Any]) -> Any:
        out = await original(self, call, queries)
        if batches is not None:
            lanes, tier, tails, learned = out[:4]
            batches[tuple(q.text for q in queries)] = {
                "lanes": [list(lane) for lane in lanes], "tails": [list(t) for t in tails],
                "learned": list(learned), "tier": tier}
        return out

    def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
        seen[text] = {"lane": [doc_id for doc_id, _ in lane], "decision": decision,
                      "refused": found.refused, "cosine": found.cosine,
                      "rare": found.rare_matched, "coverage": found.coverage,
                      "action": found.action, "supported": answerability.supported(found),
                      "scored": list(lane)}

    previous = answerability.observe(observer)
    SearchService._installed_lanes = recorded  # type: ignore[method-assign]
    try:
        run, _, _ = anyio.run(run_mode, "hybrid", catalog, cases, 1, None)
    finally:
        answerability.observe(previous)
        SearchService._installed_lanes = original  # type: ignore[method-assign]
    return run, seen


STAGES = ("no decision", "§7.2 ungrouped", "§7.2 grouped", "ungrouped", "response")


def flattened_groups(ids: list[str]) -> list[str]:
    """`ids` in the order the response lists them: one entry per worker, first-seen order, rank
    order within (`select.group_by_namespace`), flattened."""
    from iii_directory.search.select import group_by_namespace

    return [f["function_id"] for worker in group_by_namespace(ids, dict.fromkeys(ids, ""))
            for f in worker["functions"]]


def stage_runs(case: dict[str, Any], batches: dict[tuple[str, ...], dict[str, Any]],
               seen: dict[str, dict[str, Any]], response: list[str]) -> dict[str, list[str]]:
    """The case's list at every stage between its lanes and its response (one batch: ≤ 6
    capabilities): `no decision` (the shipped selection with the refused lanes restored, as
    ranked, without a tail, grouped as the response is), `§7.2 ungrouped` (the spec's
    selection: round robin of the lanes, then their tails, to 12, then the worker cap, in rank
    order), `§7.2 grouped` (that selection with one entry per worker, as §7.3 groups it: main's
    response before the capped walk), `ungrouped` (the shipped selection, `select.select_batch`,
    in rank order: what a response in rank order, work/18g, returned) and `response` (as
    returned: that selection grouped by worker)."""
    from iii_directory.search.select import (SELECTION_BUDGET, namespace_floor, round_robin,
                                             select_batch, worker_cap)

    texts = [q.text for q in (make_query(c) for c in case["capabilities"]) if q is not None]
    keys = [k for k in batches if set(k) <= set(texts)]
    if not keys:
        return {stage: response for stage in STAGES}
    key = max(keys, key=len)
    batch = batches[key]
    lanes, tails, learned = batch["lanes"], batch["tails"], batch["learned"]
    judged = batch["tier"] == "judge"
    unfloored = learned + [False] * (len(lanes) - len(learned))
    floored = [lane if skip or judged else namespace_floor(lane)
               for lane, skip in zip(lanes, unfloored)]
    merged = round_robin([[d for d, _ in lane] for lane in floored], SELECTION_BUDGET)
    if tails and len(merged) < SELECTION_BUDGET:
        merged += round_robin([[d for d, _ in t] for t in tails], SELECTION_BUDGET - len(merged),
                              exclude=merged)
    spec = worker_cap(merged, len(lanes))
    restored = [lane if lane else seen.get(text, {}).get("scored", [])
                for text, lane in zip(key, lanes)]
    return {"no decision": flattened_groups(select_batch(restored, judged=judged, tails=tails,
                                                         learned=learned)),
            "§7.2 ungrouped": spec, "§7.2 grouped": flattened_groups(spec),
            "ungrouped": select_batch(lanes, judged=judged, tails=tails, learned=learned),
            "response": response}


def offline_ranks(corpus: Any, matrix: np.ndarray, encoder: Any, capability: str
                  ) -> dict[str, Any] | None:
    """The capability's dense, BM25 and learned rankings (ids), and whether it is admitted."""
    query = make_query(capability)
    if query is None:
        return None
    ids = [tool.name for tool in corpus.tools]
    vector, second = np.asarray(encoder.encode([query.dense_text, query.second_text]),
                                dtype=np.float32)
    cosines = matrix @ vector
    order = sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))[:DENSE_K]
    dense = [(ids[i], float(cosines[i])) for i in order]
    lexical = lexical_ranking(corpus.documents, query.terms)
    hits = corpus.documents.bm25(list(query.terms), 1, LEXICAL_DEPTH)
    views = corpus_views(corpus, encoder)
    learned = learned_lane(Request.of(query.terms), corpus.documents, lexical, dense,
                           corpus.descriptions.__getitem__,
                           lambda names: views.cosines(names, vector),
                           index_cosines(ids, matrix, second))
    return {"text": query.text, "dense": [d for d, _ in dense], "bm25": [h[0] for h in hits],
            "learned": [d for d, _ in learned], "admitted": CATALOG.admit(dense, lexical),
            "lexical": [d for d, _ in lexical]}


CHAIN = ("offline learned", "pipeline lane", "answered lane", "in response")


def _chain(ranks: dict[str, Any], observed: dict[str, Any] | None, wanted: set[str],
           top: list[str]) -> tuple[bool, ...]:
    """For one graded capability, whether a relevant function is first: in the offline learned
    fusion over all its candidates (`fit_fusion`'s lane-level figure), in the lane the pipeline
    built (a lexical head where the dense ranking was not admitted, the exact-id lane …), in
    that lane once the decision has spoken (empty when refused), and anywhere in the response's
    first twelve (recall, not rank: a multi case's later capabilities are not first)."""
    lane = observed["lane"] if observed else []
    answered = lane if observed and observed["decision"] else []
    return (bool(ranks["learned"]) and ranks["learned"][0] in wanted,
            bool(lane) and lane[0] in wanted, bool(answered) and answered[0] in wanted,
            bool(wanted & set(top)))


def rank_of(doc_id: str, ranking: list[str]) -> int | None:
    return ranking.index(doc_id) + 1 if doc_id in ranking else None


def classify_miss(doc_id: str, observed: dict[str, Any] | None, ranks: dict[str, Any]) -> str:
    if observed is None:
        return "no-lane"
    lane = observed["lane"]
    if not observed["decision"] and not observed.get("supported", True):
        return "unsupported"
    if not observed["decision"] and doc_id in lane[:TOP]:
        return "refused"
    candidate = (doc_id in ranks["dense"][:DENSE_CANDIDATES]
                 or doc_id in ranks["bm25"][:LEXICAL_CANDIDATES])
    if not candidate:
        return "pool"
    if doc_id not in lane[:TOP]:
        return "fusion"
    if not observed["decision"]:
        return "refused"
    return "selection"


def analyse(name: str, catalog_path: Path, cases: list[dict[str, Any]], encoder: Any,
            show_cases: bool) -> dict[str, Any]:
    catalog = json.loads(catalog_path.read_text())
    corpus = load_corpus(catalog_path)
    matrix = np.asarray(encoder.encode([tool.dense_text for tool in corpus.tools]),
                        dtype=np.float32)
    batches: dict[tuple[str, ...], dict[str, Any]] = {}
    run, seen = run_observed(catalog, cases, batches)
    stages = stage_table(cases, run, batches, seen, catalog)
    misses: Counter[str] = Counter()
    firsts: Counter[str] = Counter()
    multi_misses: Counter[str] = Counter()
    multi_firsts: Counter[str] = Counter()
    positions: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    lines = []
    ranked = 0
    chain: list[tuple[bool, ...]] = []
    for case in cases:
        if case["kind"] not in ("match", "multi"):
            continue
        ranked += 1
        top = list(dict.fromkeys(run.get(case["id"], [])))[:TOP]
        grades = {q["function_id"]: q["grade"] for q in case["qrels"]}
        relevant = {f for f, g in grades.items() if g >= 2}
        per_capability = []
        for index, capability in enumerate(case["capabilities"]):
            ranks = offline_ranks(corpus, matrix, encoder, capability)
            text = ranks["text"] if ranks else capability
            wanted = {q["function_id"] for q in case["qrels"] if q["grade"] >= 2
                      and index in q.get("covers", [index])}
            per_capability.append((capability, ranks, seen.get(text), wanted))
            if wanted and ranks is not None:
                chain.append(_chain(ranks, seen.get(text), wanted, top))
        counter, first_counter = (multi_misses, multi_firsts) if case["kind"] == "multi" \
            else (misses, firsts)
        for doc_id in sorted(relevant - set(top)):
            owners = [p for p in per_capability if doc_id in p[3]] or per_capability[:1]
            capability, ranks, observed, _ = owners[0]
            kind = "no-query" if ranks is None else classify_miss(doc_id, observed, ranks)
            counter[kind] += 1
            if ranks is not None:
                positions[kind].append((rank_of(doc_id, ranks["dense"]),
                                        rank_of(doc_id, ranks["bm25"]),
                                        rank_of(doc_id, ranks["learned"])))
                lines.append(f"  miss {kind:12s} {case['id']}: {doc_id}  dense "
                             f"{rank_of(doc_id, ranks['dense'])} bm25 "
                             f"{rank_of(doc_id, ranks['bm25'])} learned "
                             f"{rank_of(doc_id, ranks['learned'])} admitted {ranks['admitted']}"
                             f" | {capability!r}")
        if top and top[0] in relevant:
            continue
        capability, ranks, observed, wanted = per_capability[0]
        if not top:
            kind = "empty" if not (observed and not observed["decision"]
                                   and set(observed["lane"][:TOP]) & wanted) else "refused"
        elif observed and not observed["decision"] and set(observed["lane"][:TOP]) & wanted:
            kind = "refused"
        elif observed and observed["lane"] and observed["lane"][0] in relevant:
            kind = "order"
        else:
            kind = "lane-first"
        first_counter[kind] += 1
        if ranks is not None:
            best = min(wanted or relevant, key=lambda f: rank_of(f, ranks["learned"]) or 999)
            lines.append(f"  first {kind:11s} {case['id']}: got {top[0] if top else None}, "
                         f"want {best} (dense {rank_of(best, ranks['dense'])} bm25 "
                         f"{rank_of(best, ranks['bm25'])} learned "
                         f"{rank_of(best, ranks['learned'])}) | {capability!r}")
    print(f"== {name}: {ranked} ranked cases")
    print(f"   recall misses (match):  {dict(misses)}")
    print(f"   recall misses (multi):  {dict(multi_misses)}")
    print(f"   first-place misses (match): {dict(firsts)}")
    print(f"   first-place misses (multi): {dict(multi_firsts)}")
    for kind, values in sorted(positions.items()):
        dense = [v[0] for v in values]
        print(f"   {kind:12s} dense ranks {sorted(d or 99 for d in dense)}")
    print_stages(stages)
    shares = [sum(row[i] for row in chain) / len(chain) for i in range(len(CHAIN))]
    print(f"   first relevant, {len(chain)} graded capabilities: " + ", ".join(
        f"{label} {share:.3f}" for label, share in zip(CHAIN, shares)))
    stages["chain"] = dict(zip(CHAIN, shares))
    if show_cases:
        print("\n".join(lines))
    return {"misses": dict(misses), "multi_misses": dict(multi_misses),
            "firsts": dict(firsts), "multi_firsts": dict(multi_firsts), "ranked": ranked,
            "stages": stages}


def stage_table(cases: list[dict[str, Any]], run: dict[str, list[str]],
                batches: dict[tuple[str, ...], dict[str, Any]], seen: dict[str, dict[str, Any]],
                catalog: list[dict[str, Any]]) -> dict[str, Any]:
    """The eval's metrics (`bench.score_cases`) of every stage (`stage_runs`), match and multi
    cases apart, and per graded capability (a capability some grade-≥ 2 qrel covers, the
    population of `fit_fusion`'s lane-level figures): its own lane and tail in the budget of 12
    (as if searched alone) against the response."""
    from iii_directory.bench import score_cases

    internal = {r["function_id"] for r in catalog if (r.get("metadata") or {}).get("internal")}
    ranked = [c for c in cases if c["kind"] in ("match", "multi")]
    per_stage: dict[str, dict[str, list[str]]] = {stage: {} for stage in STAGES}
    for case in ranked:
        for stage, ids in stage_runs(case, batches, seen, run.get(case["id"], [])).items():
            per_stage[stage][case["id"]] = ids
    out: dict[str, Any] = {}
    for kind in ("match", "multi"):
        chosen = [c for c in ranked if c["kind"] == kind]
        if not chosen:
            continue
        out[kind] = {stage: {k: score_cases(chosen, runs, internal)[k] for k in
                             ("recall_at_1", "recall_at_3", "recall_at_6", "recall_at_12",
                              "mrr_at_1", "ndcg_at_12")}
                     for stage, runs in per_stage.items()}
    own_first = own_recall = got_recall = 0
    graded = 0
    for case in ranked:
        top = list(dict.fromkeys(run.get(case["id"], [])))[:TOP]
        for index, capability in enumerate(case["capabilities"]):
            wanted = {q["function_id"] for q in case["qrels"]
                      if q["grade"] >= 2 and index in q["covers"]}
            query = make_query(capability)
            if not wanted or query is None:
                continue
            graded += 1
            lane = seen.get(query.text, {}).get("scored", []) if seen.get(
                query.text, {}).get("decision") else []
            own = [d for d, _ in lane][:TOP]
            own_first += bool(own and own[0] in wanted)
            own_recall += len(wanted & set(own)) / len(wanted)
            got_recall += len(wanted & set(top)) / len(wanted)
    out["capabilities"] = {"graded": graded, "own lane first": own_first / graded,
                           "own lane recall@12": own_recall / graded,
                           "response recall@12": got_recall / graded}
    return out


def print_stages(stages: dict[str, Any]) -> None:
    for kind in ("match", "multi"):
        if kind not in stages:
            continue
        print(f"   stages ({kind}):        R@1   R@3   R@6  R@12 MRR@1 nDCG@12")
        for stage, m in stages[kind].items():
            print(f"     {stage:14s} " + " ".join(
                f"{m[k]:.3f}" for k in ("recall_at_1", "recall_at_3", "recall_at_6",
                                        "recall_at_12", "mrr_at_1", "ndcg_at_12")))
    c = stages["capabilities"]
    print(f"   graded capabilities {c['graded']}: answered lane alone first "
          f"{c['own lane first']:.3f} recall@12 {c['own lane recall@12']:.3f}; "
          f"response recall@12 {c['response recall@12']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--set", action="append", choices=("dev", "extra", "extra2", "heldout"))
    parser.add_argument("--cases", action="store_true", help="print every miss")
    parser.add_argument("--json", type=Path, help="write the counts here")
    args = parser.parse_args()
    from _rank import dense

    encoder = dense.Encoder()
    out = {}
    for name, (catalog_path, cases) in load_sets(args.eval_dir).items():
        if args.set and name not in args.set:
            continue
        out[name] = analyse(name, catalog_path, cases, encoder, args.cases)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
