"""The 200 scale queries once, for instruction counts of `_rank`'s BM25 search under callgrind.

Builds the benchmark's synthetic Zipf corpus (`_corpora.synthetic_corpus`, the one
`bench_rank.py scale` times), then runs every query once with k = 10. Generating a corpus under
valgrind takes minutes, so `--cache` keeps it as a pickle: run once natively to write it, then
count (the core must keep its symbols: an in-place `setup.py build_ext --inplace` build does):

    python benchmarks/bench_rank_count.py --docs 100000 --cache /tmp/syn100k.pkl
    valgrind --tool=callgrind --toggle-collect=rk_top_k --toggle-collect=rk_score_all \\
        python benchmarks/bench_rank_count.py --docs 100000 --cache /tmp/syn100k.pkl
    callgrind_annotate callgrind.out.<pid> | grep TOTALS

With `--check` every answer is compared with the exhaustive path of the same core first (pruning
off), so a count is never taken from a build that answers differently.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

K = 10


def load(docs: int, queries: int, cache: str | None) -> tuple[list[list[str]], list[list[str]]]:
    """The corpus and queries, from `cache` when it exists (written there otherwise)."""
    if cache and os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)  # a file this script wrote
    from _corpora import synthetic_corpus

    c = synthetic_corpus(docs, n_queries=queries)
    if cache:
        with open(cache, "wb") as f:
            pickle.dump((c.documents, c.queries), f, protocol=5)
    return c.documents, c.queries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cache", help="pickle of the corpus (read if present, else written)")
    parser.add_argument("--check", action="store_true",
                        help="compare every answer with the exhaustive path first")
    args = parser.parse_args(argv)
    from _rank import _core

    documents, queries = load(args.docs, args.queries, args.cache)
    index = _core.BM25Index(documents)
    if args.check:
        previous = _core._set_prune_postings(1 << 40)
        exact = [index.search(q, k=K) for q in queries]
        _core._set_prune_postings(previous)
        if [index.search(q, k=K) for q in queries] != exact:
            print("pruned answers differ from the exhaustive ones", file=sys.stderr)
            return 1
    hits = sum(len(index.search(q, k=K)) for q in queries)
    print(f"{len(documents)} documents, {len(queries)} queries, {hits} hits, "
          f"footprint {index._footprint()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
