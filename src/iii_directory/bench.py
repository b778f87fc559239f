"""`python -m iii_directory.bench`: run graded search cases through the real
`directory::search_functions` handler in standalone mode and report quality and latency
(docs/rules/search.md §14.2) per split and per mode.

    python -m iii_directory.bench --catalog catalog.json --cases cases.json \\
        [--mode lexical --mode hybrid] [--split dev] [--repeat 3] [--json run.json] \\
        [--metrics-json metrics.json] [--label NAME]
    python -m iii_directory.bench --heldout        # our independent catalog, split `heldout`

The catalog is a JSON array of function records (as for `iii-directory call --catalog`); the
cases file is `{"version": 1, "cases": [...]}` with `id`, `split`, `kind` (`match` | `multi` |
`no_match`), `capabilities`, `qrels` (`function_id`, `grade`, `covers`), `forbidden_prefixes`
and `forbidden_ids`, and optionally `needs` (several needs in one capability: lists of ids, a
need met when any of its ids is returned). Every split is reported twice side by side, with the
`high`-confidence results only and with all results, beside plain BM25 over the same documents
(`plain_bm25_run`). `--json` writes the run file `validate.py --score` reads (case id → ordered
function ids; with several modes the mode name goes before the extension); `--metrics-json`
writes the metrics per mode and split with the keys `recall_at_1` … `latency_p95_ms`, and the
latency of first calls (no capability text seen before in the run) apart from repeated ones
(`latency_first_call`, `latency_repeated_call`; `--repeat 2` or more gives the latter).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

TOP_K = 12
RECALL_KS = (1, 3, 6, 12)
MODES = ("lexical", "hybrid", "judge", "static")
"""`static`: lexical search with the static lane forced on (`search/static_lane.py`), as a host
without the `dense` extra runs it; its responses report `search_mode` lexical."""
HELDOUT_SPLIT = "heldout"
"""The split name of our independent catalog's cases (benchmarks/data/heldout_*.json, written
without seeing the eval set or our other case sets; all its cases are report-only)."""


# -- metrics ------------------------------------------------------------------------------------


def namespace(function_id: str) -> str:
    return function_id.split("::", 1)[0]


def top_ids(response: Sequence[Any], k: int = TOP_K) -> list[str]:
    """Ids in response order, repeats dropped, first `k`."""
    out: list[str] = []
    for item in response:
        function_id = item.get("function_id") if isinstance(item, Mapping) else item
        if isinstance(function_id, str) and function_id not in out:
            out.append(function_id)
        if len(out) == k:
            break
    return out


def response_ids(response: Mapping[str, Any], high_only: bool = False) -> list[str]:
    """The installed candidates of a search response, flattened in order; with `high_only`,
    only those of `confidence` `high`."""
    return [f["function_id"] for worker in response.get("workers", []) for f in worker["functions"]
            if not high_only or f.get("confidence", "high") == "high"]


def relevant_functions(case: Mapping[str, Any], index: int, min_grade: int = 2) -> set[str]:
    """The functions graded ≥ `min_grade` for the case's capability `index`: a qrel without
    `covers` covers every capability of its case."""
    every = range(len(case["capabilities"]))
    return {q["function_id"] for q in case["qrels"]
            if q["grade"] >= min_grade and index in (q.get("covers") or every)}


def contaminated(function_id: str, case: Mapping[str, Any], internal: set[str]) -> bool:
    return (function_id in case.get("forbidden_ids", ())
            or any(function_id.startswith(p) for p in case.get("forbidden_prefixes", ()))
            or function_id in internal)


def nearest_rank(values: Sequence[float], percentile: float) -> float | None:
    """Nearest-rank percentile: the value at rank ⌈p/100 · n⌉ of the sorted sample."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(percentile / 100.0 * len(ordered)))
    return ordered[rank - 1]


def score_cases(cases: Sequence[Mapping[str, Any]], run: Mapping[str, Sequence[Any]],
                internal: set[str]) -> dict[str, Any]:
    """recall@1/3/6/12, mrr@1, ndcg@12, worker recall@12 (macro over match and multi cases);
    multi coverage@12 (micro over coverable capabilities); forbidden contamination (count over
    all cases); false-positive rate (no-match cases with any candidate); answered-nothing rate
    (match and multi cases with no candidate); all needs at 12 (cases with `needs`: every need
    met in the first 12); answer length (mean ids in the first 12, answered match and multi
    cases) and short answers (answered match and multi cases with fewer than 12). Relevant = grade ≥ 2; nDCG gains are `2^grade − 1` at
    `log2(rank + 2)`."""
    sums: dict[str, float] = defaultdict(float)
    ranked = [c for c in cases if c["kind"] in ("match", "multi")]
    no_match = [c for c in cases if c["kind"] == "no_match"]
    with_needs = [c for c in ranked if c.get("needs")]
    covered = coverable = contamination = false_positives = empty = all_needs = 0
    lengths: list[int] = []
    for case in cases:
        top = top_ids(run.get(case["id"], []))
        contamination += sum(contaminated(f, case, internal) for f in top)
        if case["kind"] == "no_match":
            false_positives += bool(top)
            continue
        empty += not top
        if top:
            lengths.append(len(top))
        if case.get("needs"):
            all_needs += all(set(need) & set(top) for need in case["needs"])
        grades = {q["function_id"]: q["grade"] for q in case["qrels"]}
        relevant = {f for f, g in grades.items() if g >= 2}
        for k in RECALL_KS:
            sums[f"recall_at_{k}"] += len(relevant & set(top[:k])) / len(relevant)
        sums["mrr_at_1"] += 1.0 if top and top[0] in relevant else 0.0
        dcg = sum((2 ** grades.get(f, 0) - 1) / math.log2(r + 2) for r, f in enumerate(top))
        ideal = sorted(grades.values(), reverse=True)[:TOP_K]
        idcg = sum((2 ** g - 1) / math.log2(r + 2) for r, g in enumerate(ideal))
        sums["ndcg_at_12"] += dcg / idcg if idcg else 0.0
        wanted = {namespace(f) for f in relevant}
        sums["worker_recall_at_12"] += len(wanted & {namespace(f) for f in top}) / len(wanted)
        if case["kind"] == "multi":
            can = {i for q in case["qrels"] if q["grade"] >= 2 for i in q.get("covers", [])}
            hit = {i for q in case["qrels"]
                   if q["grade"] >= 2 and q["function_id"] in top for i in q.get("covers", [])}
            coverable += len(can)
            covered += len(hit & can)
    metrics: dict[str, Any] = {}
    for key in [f"recall_at_{k}" for k in RECALL_KS] + ["mrr_at_1", "ndcg_at_12",
                                                       "worker_recall_at_12"]:
        metrics[key] = sums[key] / len(ranked) if ranked else None
    metrics["multi_coverage_at_12"] = covered / coverable if coverable else None
    metrics["forbidden_contamination"] = contamination
    metrics["false_positive_rate"] = false_positives / len(no_match) if no_match else None
    metrics["answered_nothing_rate"] = empty / len(ranked) if ranked else None
    metrics["all_needs_at_12"] = all_needs / len(with_needs) if with_needs else None
    metrics["answer_length"] = sum(lengths) / len(lengths) if lengths else None
    metrics["short_answer_rate"] = (sum(n < TOP_K for n in lengths) / len(lengths)
                                    if lengths else None)
    metrics["ranked_cases"] = len(ranked)
    metrics["no_match_cases"] = len(no_match)
    return metrics


def latency_metrics(samples: Sequence[tuple[int, float]]) -> dict[str, Any]:
    """Mean, p50, p95 and max of `latency_ms`, overall and per capability count."""
    values = [ms for _, ms in samples]
    metrics: dict[str, Any] = {
        "latency_mean_ms": sum(values) / len(values) if values else None,
        "latency_p50_ms": nearest_rank(values, 50),
        "latency_p95_ms": nearest_rank(values, 95),
        "latency_max_ms": max(values) if values else None,
    }
    by_count: dict[int, list[float]] = defaultdict(list)
    for count, ms in samples:
        by_count[count].append(ms)
    metrics["latency_by_capabilities"] = {
        str(count): {"samples": len(v), "p50_ms": nearest_rank(v, 50), "p95_ms": nearest_rank(v, 95)}
        for count, v in sorted(by_count.items())
    }
    return metrics


def first_and_repeated(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`latency_metrics` of first calls (no capability text of the call seen before in the run,
    so no per-text cache holds it) and of repeated calls, apart: an agent's new wording pays
    the encoder, a repeated one is served from the query cache, and a mixed figure hides
    either."""
    out: dict[str, Any] = {}
    for key, first in (("latency_first_call", True), ("latency_repeated_call", False)):
        chosen = [(s["capabilities"], s["latency_ms"]) for s in samples if s["first"] is first]
        metrics = latency_metrics(chosen)
        out[key] = {"samples": len(chosen), "p50_ms": metrics["latency_p50_ms"],
                    "p95_ms": metrics["latency_p95_ms"],
                    "by_capabilities": metrics["latency_by_capabilities"]}
    return out


def text_key(capability: str) -> str:
    """A capability as the query caches key it: whitespace collapsed, lower-cased."""
    return " ".join(capability.split()).lower()


# -- running ------------------------------------------------------------------------------------


def bench_settings(mode: str, config: str | None, scratch: Path) -> Any:
    """Settings for a bench run: the `--config` seed when given, else defaults with the skill
    roots pointed at an empty scratch directory and the registry lane off (no network)."""
    from .cli import standalone_settings
    from .config import Settings

    if config:
        base = standalone_settings(config)
        return base.model_copy(update={"function_search_mode": mode})
    empty = scratch / "empty"
    return Settings(
        skills_folder=str(empty / "skills"),
        local_skills_folder=str(empty / "skills" / "iii"),
        agents_folder=str(empty / "agents"),
        agents_skills_folder=str(empty / "agent-skills"),
        global_agents_skills_folder=str(empty / "global-agent-skills"),
        auto_download=False,
        registry_search=False,
        function_search_mode=mode,
    )


async def run_mode(mode: str, catalog: list[dict[str, Any]], cases: Sequence[Mapping[str, Any]],
                   repeat: int, config: str | None,
                   high_run: dict[str, list[str]] | None = None
                   ) -> tuple[dict[str, list[str]], list[dict[str, Any]], str]:
    """Run every case (`repeat` times; the first answer is scored) through the handler. The
    catalog file is the whole engine catalog (this worker's own functions are not added).
    Returns the run (case id → ids), per-call samples and the mode the searches reported;
    `high_run`, when given, receives the run of the `high`-confidence ids only."""
    from .directory import Directory
    from .search.service import SearchService
    from .standalone import standalone_engine

    with tempfile.TemporaryDirectory(prefix="iii-bench-") as scratch:
        settings = bench_settings("lexical" if mode == "static" else mode, config, Path(scratch))
        engine = standalone_engine(catalog)
        directory = Directory(settings=settings, engine=engine)
        service = directory.service(SearchService)
        service.static.enabled = mode == "static" or None
        await service.ensure_ready(directory.context(), views=True)
        warmed = ("send a message", "list files in a folder", "create a calendar event")
        for warm in warmed:
            await directory.invoke("directory::search_functions", {"capabilities": [warm]})
        seen = {text_key(t) for t in warmed}
        run: dict[str, list[str]] = {}
        samples: list[dict[str, Any]] = []
        reported: set[str] = set()
        for _ in range(repeat):
            for case in cases:
                keys = {text_key(c) for c in case["capabilities"]}
                response = await directory.invoke(
                    "directory::search_functions", {"capabilities": list(case["capabilities"])})
                run.setdefault(case["id"], response_ids(response))
                if high_run is not None:
                    high_run.setdefault(case["id"], response_ids(response, high_only=True))
                reported.add(response["search_mode"] + ("+static" if mode == "static" else ""))
                samples.append({"case": case["id"], "split": case["split"],
                                "capabilities": len(case["capabilities"]),
                                "latency_ms": response["latency_ms"],
                                "first": not keys & seen})
                seen |= keys
        await service.stop()
    return run, samples, "/".join(sorted(reported))


def plain_bm25_run(catalog: Sequence[Mapping[str, Any]],
                   cases: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Plain BM25 (`_rank.BM25Index`, k1 1.2, b 0.75) over the documents search sees — each
    function's id, description and argument names, tokenised by `_rank.tokenize`; excluded and
    internal ids left out — the first 12 hits of each capability's words (one word matched),
    a case's capabilities merged round robin to 12: the baseline every mode is shown beside."""
    import _rank

    from .exclusions import is_excluded
    from .search.ranking.select import round_robin

    ids: list[str] = []
    documents: list[list[str]] = []
    for record in catalog:
        function_id = str(record.get("function_id") or record.get("name") or "")
        if not function_id or is_excluded(function_id, record.get("metadata")):
            continue
        schema = record.get("request_schema") or record.get("parameters") or {}
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        arguments = " ".join(properties) if isinstance(properties, Mapping) else ""
        ids.append(function_id)
        documents.append(_rank.tokenize(f"{function_id} {record.get('description') or ''} "
                                        f"{arguments}"))
    index = _rank.BM25Index(documents)
    run: dict[str, list[str]] = {}
    for case in cases:
        lanes = [[ids[i] for i, _, _ in index.search(_rank.tokenize(text), TOP_K, 1)]
                 for text in case["capabilities"]]
        run[case["id"]] = round_robin(lanes, TOP_K)
    return run


SIDE_BY_SIDE = (("recall_at_12", "R@12"), ("mrr_at_1", "MRR@1"),
                ("answered_nothing_rate", "answerable, answered nothing"),
                ("false_positive_rate", "no-tool, answered"),
                ("all_needs_at_12", "all needs in top 12"))
"""The figures printed for `high` only, all results and plain BM25 side by side. For `high`,
"no-tool, answered" counts requests given any `high` answer."""


def side_by_side(high: Mapping[str, Any], every: Mapping[str, Any],
                 bm25: Mapping[str, Any]) -> str:
    """The `SIDE_BY_SIDE` rows of one mode and split: high only | all | plain BM25."""
    def fmt(value: Any) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    lines = [f"  {'':<30}{'high':>8}{'all':>8}{'bm25':>8}"]
    for key, label in SIDE_BY_SIDE:
        lines.append(f"  {label:<30}{fmt(high.get(key)):>8}{fmt(every.get(key)):>8}"
                     f"{fmt(bm25.get(key)):>8}")
    return "\n".join(lines)


def report(mode: str, reported: str, split: str, metrics: Mapping[str, Any]) -> str:
    def fmt(value: Any) -> str:
        if value is None:
            return "n/a"
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    lines = [f"mode={mode} (reported search_mode: {reported})  split={split}  "
             f"cases: {metrics['ranked_cases']} ranked, {metrics['no_match_cases']} no-match"]
    for key in ("recall_at_1", "recall_at_3", "recall_at_6", "recall_at_12", "mrr_at_1",
                "ndcg_at_12", "worker_recall_at_12", "multi_coverage_at_12",
                "forbidden_contamination", "false_positive_rate", "latency_mean_ms",
                "latency_p50_ms", "latency_p95_ms", "latency_max_ms"):
        lines.append(f"  {key:<26}{fmt(metrics.get(key))}")
    for count, row in metrics.get("latency_by_capabilities", {}).items():
        lines.append(f"  latency {count:>2} capabilities  p50 {fmt(row['p50_ms'])} ms  "
                     f"p95 {fmt(row['p95_ms'])} ms  ({row['samples']} calls)")
    for key, label in (("latency_first_call", "first calls (texts not seen before)"),
                       ("latency_repeated_call", "repeated calls")):
        row = metrics.get(key)
        if row is None:
            continue
        lines.append(f"  {label}: p50 {fmt(row['p50_ms'])} ms  p95 {fmt(row['p95_ms'])} ms  "
                     f"({row['samples']} calls)")
        for count, by in row["by_capabilities"].items():
            lines.append(f"    {count:>2} capabilities  p50 {fmt(by['p50_ms'])} ms  "
                         f"p95 {fmt(by['p95_ms'])} ms  ({by['samples']} calls)")
    return "\n".join(lines)


def run_path(base: str, mode: str, several: bool) -> Path:
    path = Path(base)
    return path.with_name(f"{path.stem}.{mode}{path.suffix}") if several else path


def joined_multi(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each multi case as one capability holding all its needs (`--join-multi`): its
    capabilities joined as "a, b and c", with `needs` — per original capability, the functions
    graded ≥ 2 that cover it. A check of several needs in one capability on sets written with
    one need per capability; the other cases are left out."""
    out = []
    for case in cases:
        capabilities = list(case["capabilities"])
        if case["kind"] != "multi" or len(capabilities) < 2:
            continue
        needs = [[q["function_id"] for q in case["qrels"]
                  if q["grade"] >= 2 and index in q.get("covers", [])]
                 for index in range(len(capabilities))]
        if not all(needs):
            continue
        text = ", ".join(capabilities[:-1]) + " and " + capabilities[-1]
        out.append({**case, "id": f"{case['id']}-joined", "capabilities": [text],
                    "qrels": [{**q, "covers": [0]} for q in case["qrels"]], "needs": needs})
    return out


def load_inputs(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    catalog_path = args.catalog or (Path(args.eval_dir) / "catalog.json" if args.eval_dir else None)
    cases_path = args.cases or (Path(args.eval_dir) / "cases.json" if args.eval_dir else None)
    if catalog_path is None or cases_path is None:
        raise SystemExit("bench: give --catalog and --cases (or --eval-dir holding both)")
    catalog = json.loads(Path(catalog_path).read_text(encoding="utf-8"))
    document = json.loads(Path(cases_path).read_text(encoding="utf-8"))
    cases = document["cases"] if isinstance(document, Mapping) else document
    if not isinstance(catalog, list) or not isinstance(cases, list):
        raise SystemExit("bench: the catalog must be a JSON array and the cases a case list")
    return catalog, cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iii_directory.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalog", help="JSON array of function records")
    parser.add_argument("--cases", help="graded cases file")
    parser.add_argument("--eval-dir", help="a directory holding catalog.json and cases.json")
    parser.add_argument("--mode", action="append", choices=MODES,
                        help="search mode (repeatable; default: lexical and hybrid)")
    parser.add_argument("--split", action="append",
                        help="split to report (repeatable; default: every split in the cases)")
    parser.add_argument("--repeat", type=int, default=1, help="calls per case (latency samples)")
    parser.add_argument("--config", help="YAML configuration seed (default: bench settings)")
    parser.add_argument("--json", dest="run_json", help="write the run file(s) for validate.py")
    parser.add_argument("--metrics-json", help="write the metrics per mode and split")
    parser.add_argument("--label", help="report every case under this split name")
    parser.add_argument("--join-multi", action="store_true",
                        help="only the multi cases, each joined into one capability with `needs`")
    parser.add_argument("--heldout", action="store_true",
                        help="the independent catalog and cases in benchmarks/data (heldout_*.json),"
                             " reported as split `heldout`")
    args = parser.parse_args(argv)
    if args.heldout:
        data = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
        args.catalog = args.catalog or str(data / "heldout_catalog.json")
        args.cases = args.cases or str(data / "heldout_cases.json")
        args.label = args.label or HELDOUT_SPLIT

    catalog, cases = load_inputs(args)
    if args.join_multi:
        cases = joined_multi(cases)
    if args.label:
        cases = [{**case, "split": args.label} for case in cases]
    splits = args.split or sorted({c["split"] for c in cases})
    selected = [c for c in cases if c["split"] in splits]
    modes = args.mode or ["lexical", "hybrid"]
    internal = {str(r.get("function_id") or r.get("name")) for r in catalog
                if isinstance(r.get("metadata"), Mapping) and r["metadata"].get("internal") is True}
    bm25_run = plain_bm25_run(catalog, selected)
    all_metrics: dict[str, Any] = {"bm25": {}}
    for split in splits:
        all_metrics["bm25"][split] = score_cases([c for c in selected if c["split"] == split],
                                                 bm25_run, internal)
    for mode in modes:
        started = time.perf_counter()
        high_run: dict[str, list[str]] = {}
        run, samples, reported = anyio.run(run_mode, mode, catalog, selected, max(1, args.repeat),
                                           args.config, high_run)
        elapsed = time.perf_counter() - started
        all_metrics[mode] = {"reported_search_mode": reported}
        for split in splits:
            split_cases = [c for c in selected if c["split"] == split]
            metrics = score_cases(split_cases, run, internal)
            in_split = [s for s in samples if s["split"] == split]
            metrics.update(latency_metrics([(s["capabilities"], s["latency_ms"]) for s in in_split]))
            metrics.update(first_and_repeated(in_split))
            metrics["high"] = score_cases(split_cases, high_run, internal)
            all_metrics[mode][split] = metrics
            print(report(mode, reported, split, metrics))
            print(side_by_side(metrics["high"], metrics, all_metrics["bm25"][split]))
        print(f"  ({len(samples)} calls in {elapsed:.1f} s, catalog {len(catalog)} records)\n")
        if args.run_json:
            path = run_path(args.run_json, mode, len(modes) > 1)
            path.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
            print(f"  run written to {path}")
    if args.metrics_json:
        Path(args.metrics_json).write_text(json.dumps(all_metrics, indent=2) + "\n",
                                           encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
