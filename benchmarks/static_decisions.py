"""Dump the answerability decisions of `--mode static` (issue 19) with their signals and the
static lane's evidence, labelled: positive when the capability's lane (as ranked, before the
decision) holds a relevant function in its first 12, negative for no-match cases, chatter and
near misses (`static_variants.all_sets`). Sets: eval `dev`, `extra`, `extra2`, the held-out
catalog and the negatives; never `test`.

    .venv/bin/python benchmarks/static_decisions.py out.jsonl

Used to read which capabilities the decision refuses and on which signal (docs/search-quality.md, "Static
lane"); one JSON line per decision.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from iii_directory import bench  # noqa: E402
from iii_directory.search import answerability, static_evidence  # noqa: E402

from case_sets import relevant_functions  # noqa: E402
from static_variants import ROOT, all_sets  # noqa: E402


def main() -> None:
    out = open(sys.argv[1], "w", encoding="utf-8")
    seen: dict[str, dict[str, Any]] = {}

    def observer(text: str, found: Any, lane: Any, decision: bool) -> None:
        query = next((q for q in static_evidence.queries() if q.text == text), None)
        seen[text] = {"signals": asdict(found), "decision": decision,
                      "score": answerability.score(found),
                      "floor": answerability.evidence_floor(found),
                      "share": static_evidence.head_share_of(query) if query else None,
                      "lane": [d for d, _ in lane[:12]]}

    answerability.observe(observer)
    for name, catalog, cases in all_sets(ROOT.parent / "shared" / "eval"):
        seen.clear()
        anyio.run(bench.run_mode, "static", catalog, cases, 1, None)
        for case in cases:
            for index, text in enumerate(case["capabilities"]):
                entry = seen.get(text)
                if entry is None:
                    continue
                if case["kind"] == "no_match":
                    label = 0
                else:
                    relevant = relevant_functions(case, index)
                    label = 1 if relevant & set(entry["lane"]) else -1
                out.write(json.dumps({"set": name, "text": text, "label": label, **entry}) + "\n")
    out.close()


if __name__ == "__main__":
    sys.exit(main())
