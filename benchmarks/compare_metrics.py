"""Before → after tables from `python -m iii_directory.bench --metrics-json` files (issue 31).

    .venv/bin/python benchmarks/compare_metrics.py BEFORE_DIR AFTER_DIR [--sets eval extra ...]

Each directory holds one metrics file per set (`<set>.json`, all three modes). A "before" tree
without confidences counts every result as `high`. Prints, per set, split and mode: R@12,
MRR@1, answerable requests answered with nothing, no-tool requests answered (any `high` answer /
any answer) and, where the set has `needs`, the share with all needs in the top 12 — `high`
only and all results — beside plain BM25; and the relevant top-12 hits and first results lost
(with `low` counted as returned) gained or lost: the issue's non-regression check.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

KEYS = (("recall_at_12", "R@12"), ("mrr_at_1", "MRR@1"), ("answered_nothing_rate", "empty"),
        ("false_positive_rate", "no-tool"), ("all_needs_at_12", "needs"))


def fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def cell(before: dict[str, Any], after: dict[str, Any], key: str) -> str:
    old, new = before.get(key), after.get(key)
    if old is None and new is None:
        return "–"
    return fmt(new) if old == new else f"{fmt(old)} → {fmt(new)}"


def rows(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for mode in ("hybrid", "lexical", "static"):
        if mode not in after:
            continue
        for split, metrics in after[mode].items():
            if not isinstance(metrics, dict) or "recall_at_12" not in metrics:
                continue
            old = before.get(mode, {}).get(split, {})
            old_high = old.get("high", old)
            high = metrics.get("high", metrics)
            ranked = metrics.get("ranked_cases") or 0
            lost_hits = (metrics.get("recall_at_12") or 0) - (old.get("recall_at_12") or 0)
            lost_first = (metrics.get("mrr_at_1") or 0) - (old.get("mrr_at_1") or 0)
            bm25 = after.get("bm25", {}).get(split, {})
            cells = [f"{mode} {split}"]
            for key, _ in KEYS:
                cells.append(f"{cell(old_high, high, key)} / {cell(old, metrics, key)}")
            cells.append(f"{fmt(bm25.get('recall_at_12'))} / {fmt(bm25.get('mrr_at_1'))}"
                         f" / {fmt(bm25.get('all_needs_at_12'))}")
            cells.append(f"{lost_hits * ranked:+.1f} / {lost_first * ranked:+.1f}")
            out.append("| " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--sets", nargs="*")
    args = parser.parse_args(argv)
    names = args.sets or sorted(p.stem for p in Path(args.after).glob("*.json"))
    header = ("| set | " + " | ".join(f"{label} high / all" for _, label in KEYS)
              + " | BM25 R@12 / MRR@1 / needs | top-12 hits / firsts gained (all) |")
    print(header)
    print("|" + "---|" * (len(KEYS) + 3))
    for name in names:
        after_path = Path(args.after) / f"{name}.json"
        before_path = Path(args.before) / f"{name}.json"
        if not after_path.is_file():
            continue
        before = json.loads(before_path.read_text()) if before_path.is_file() else {}
        for row in rows(before, json.loads(after_path.read_text())):
            print(row.replace("| ", f"| {name} ", 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
