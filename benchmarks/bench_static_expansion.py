"""Cost of the static query expansion (`search/ranking/static_expansion.py`, issue 19): building the
catalog's word table, and per capability the expansion plus the expanded BM25 lane against the
plain lexical lane, measured in the same run.

    .venv/bin/python benchmarks/bench_static_expansion.py [--functions 512] [--repeat 3]

The catalog is the eval catalog cycled with numbered namespaces up to `--functions` (as
`bench_static.py`); the capabilities are every capability of the eval cases and our case sets.
Best of `--repeat` passes per capability; median and p95 in ms.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_static import EVAL, capabilities, timed  # noqa: E402


def catalog(n: int) -> list[dict]:
    records = [r for r in json.loads((EVAL / "catalog.json").read_text(encoding="utf-8"))
               if not (r.get("metadata") or {}).get("internal")]
    out = []
    for i in range(n):
        record = dict(records[i % len(records)])
        if i >= len(records):
            record["function_id"] = f"w{i // len(records)}{record['function_id']}"
        out.append(record)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import _rank
    from _rank import static

    from iii_directory.search.ranking.corpus import Corpus, tool_from_schema
    from iii_directory.search.ranking.lanes import lexical_lane
    from iii_directory.search.ranking.static_expansion import CatalogWords, expanded_terms

    corpus = Corpus.build([tool_from_schema(r["function_id"], r.get("description"),
                                            r.get("request_schema")) for r in catalog(args.functions)])
    documents = corpus.documents
    encoder = static.default_encoder()
    started = time.perf_counter()
    words = CatalogWords.build(encoder, documents)
    build_ms = (time.perf_counter() - started) * 1e3
    queries = capabilities()
    for text in queries:  # warm the tokenizer's word cache as a running worker has it
        encoder.tokenizer.ids(text)

    def plain(text: str) -> object:
        return lexical_lane(documents, _rank.tokenize_query(text))

    def expanded(text: str) -> object:
        terms = _rank.tokenize_query(text)
        return lexical_lane(documents, expanded_terms(terms, words.neighbours(encoder, text)))

    rows = {"lexical lane": timed(plain, queries, args.repeat),
            "expansion only": timed(lambda t: words.neighbours(encoder, t), queries, args.repeat),
            "expansion + expanded lane": timed(expanded, queries, args.repeat)}
    print(f"static expansion, {len(corpus)} functions, {len(words.words)} catalog words, "
          f"{len(queries)} capabilities ({static.IMPLEMENTATION} kernels)")
    print(f"  word table build  {build_ms:.1f} ms")
    for name, row in rows.items():
        print(f"  {name:<28} median {row['median_ms']:.3f} ms, p95 {row['p95_ms']:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
