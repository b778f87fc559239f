"""Which answerable requests get no functions, and why (issue 31).

    .venv/bin/python benchmarks/empty_answers.py [--eval-dir ../shared/eval] \
        [--mode hybrid --mode lexical --mode static] [--show]

Runs every answerable case (`match` and `multi`) of the tuning sets (`case_sets.tuning_sets`:
dev, extra, extra2, held-out; never the eval `test` split nor the real-world set) through the
search handler as the bench does, and for each case answered with no function, sorts each of its
capabilities into one reason: `refused:<class>` (`answerability.screen`: unreadable, intrinsic,
excluded), `empty lane` (no lane candidates, so nothing was graded: the lexical lane, its
single-term fallback and the dense lane found nothing) or `below weak floor` (graded, under
`confidence.weak_floor`), with whether that lane held a relevant function. `--show` prints the
capabilities (our own sets only).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from case_sets import relevant_functions, tuning_sets  # noqa: E402


def reasons(mode: str, catalog: list[dict[str, Any]], cases: list[dict[str, Any]],
            show: bool) -> Counter[str]:
    """The reason counts of the capabilities of every case answered with nothing."""
    import anyio

    from iii_directory.bench import run_mode
    from iii_directory.search.ranking import answerability
    from iii_directory.search import sliced_queries as service
    from iii_directory.search.ranking.query import make_query

    graded: dict[str, tuple[list[str], Any]] = {}

    def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
        graded[text] = ([doc_id for doc_id, _ in lane], found)

    refused: dict[str, str] = {}
    original = service.screen

    def screening(text: str, terms: Any, documents: Any) -> Any:
        found = original(text, terms, documents)
        refused[text] = found.refused
        return found

    out: Counter[str] = Counter()
    previous = answerability.observe(observer)
    service.screen = screening
    try:
        run, _, _ = anyio.run(run_mode, mode, catalog, cases, 1, None)
    finally:
        answerability.observe(previous)
        service.screen = original
    for case in cases:
        if run[case["id"]]:
            continue
        out["cases"] += 1
        for index, text in enumerate(case["capabilities"]):
            query = make_query(text)
            relevant = relevant_functions(case, index)
            if query is None:
                reason = "refused:intrinsic or control plane (make_query)"
            elif refused.get(query.text):
                reason = "refused:" + refused[query.text]
            elif query.text not in graded:
                reason = "empty lane"
            else:
                lane, found = graded[query.text]
                held = "relevant in lane" if relevant & set(lane) else "no relevant in lane"
                reason = f"below weak floor ({held})"
            out[reason] += 1
            if show:
                print(f"  {mode} {case['id']}: {reason}: {text}")
    return out


def main(argv: list[str] | None = None) -> int:
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", default=str(Path(__file__).resolve().parents[2] / "shared"
                                                  / "eval"))
    parser.add_argument("--mode", action="append", choices=("hybrid", "lexical", "static"))
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args(argv)
    for name, (catalog_path, cases) in tuning_sets(Path(args.eval_dir)).items():
        catalog = json.loads(Path(catalog_path).read_text(encoding="utf-8"))
        answerable = [c for c in cases if c["kind"] in ("match", "multi")]
        for mode in args.mode or ["hybrid"]:
            counts = reasons(mode, catalog, answerable, args.show)
            print(name, mode, f"{len(answerable)} answerable", dict(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
