"""Recovering answerable paraphrases in hybrid, measured (issue 18): a dense "vouch", agreement
signals, a record-identifier vouch and the evidence floor's cosine thresholds.

    .venv/bin/python benchmarks/hybrid_vouch.py record --out /tmp/vouch.json
    .venv/bin/python benchmarks/hybrid_vouch.py measure --signals /tmp/vouch.json
    .venv/bin/python benchmarks/hybrid_vouch.py floor --signals /tmp/vouch.json
    .venv/bin/python benchmarks/hybrid_vouch.py second --signals /tmp/vouch.json

`record` runs, in hybrid, the sets of `fit_answerability.record` (dev, extra, extra2, seeded
chatter over both catalogs, near misses, the held-out catalog's cases; never `test`), the near
misses with a seeded record identifier appended (`nearmiss-id`, over the eval catalog: `turn up
the TV volume for order TLEX-97360`), and the property tests' unrelated sentences with their
seeds over the eval, example and held-out catalogs (`probe-*`), through
`fit_answerability.record_cases`. Beside every decision it keeps the head of the capability's
dense ranking (`DENSE_HEAD` ids and cosines; read by wrapping `answerability.signals`) and the
first function of the dense ranking's first `AGREEMENT_DEPTH` hits by each other reading of the
request (`agreement`: the second query, the best and the mean of the three function views; read
by wrapping the service's `learned_lane`, which receives them).

`measure` adds to the decision as run a vouch (`Vouch`): answer a capability the decision
refused when it is not a hard refusal and — per variant of `GRID` — one worker holds the first
`k` dense hits, the best cosine is ≥ `cosine`, it stands ≥ `margin` above the best function of
another worker, the request names a known action (or one that agrees, or no condition), at
least `agree` of the three other readings put the same function first, or (the `id` variants)
the request names a record identifier (`RECORD_ID`). It prints the served capabilities kept
(label 1 of `fit_answerability.label`: the lane holds a relevant function) and the no-match
cases answered per set. A variant is *eligible* on a side when no set of that side has more
no-match cases (chatter and near misses included) answered than as run and no property-test
sentence over the eval and example catalogs is answered; the variant chosen on one side (most
kept there, then the strictest) is scored on the other: eval catalog's sets → held-out, and back.

`floor` re-decides every recorded capability with `answerability.answerable` under other
cosine thresholds of `evidence_floor` (`FLOOR_COSINE`, `SUPPORTED_COSINE`, `CONFIDENT_COSINE`),
chosen and scored both ways by the same rule; `second` re-decides it with the second query's
best cosine over the dense head (`second_best`) standing in for the best cosine (`Second`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_answerability as fa  # noqa: E402

DENSE_HEAD = 8
RECORD_ID = re.compile(r"\b[A-Za-z]+[-_]\d[\w-]*\b|[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
"""A record identifier: letters joined to digits by `-` or `_` (`WEB-7`, `deal_5512`) or an
e-mail address."""
AGREEMENT_DEPTH = 20
SECOND_BEST: dict[int, float] = {}
"""While recording: the best second-query cosine over the dense head, by dense ranking."""
PROBE_COUNT = 1000
EVAL_SIDE = ("dev", "extra", "extra2", "chatter", "nearmiss", "nearmiss-id")
HELDOUT_SIDE = ("heldout", "heldout-chatter")
PROPERTY_SETS = ("probe-eval-sentences", "probe-example-sentences")


ID_SUFFIXES = (" for order {L}-{n}", " (ref {L}_{n})", ", booking {L}-{n}", " for account {l}_{n}",
               " and send the receipt to {l}@{l}corp.com", " under case {L}-{n}")


def with_identifier(rng: random.Random, text: str) -> str:
    """`text` with a seeded record identifier (`RECORD_ID`) appended."""
    letters = "".join(rng.choice("ABCDEFGHKLMNPRSTWXZ") for _ in range(rng.randint(1, 4)))
    return text + rng.choice(ID_SUFFIXES).format(L=letters, l=letters.lower(),
                                                 n=rng.randint(1, 99999))


def record(out: Path, eval_dir: Path, only: Sequence[str] = ()) -> None:
    """Hybrid rows of every set (`only` these, the rows of the others kept from `out`) with the
    dense head of each decision (`dense`), the other readings' first functions (`agree`) and
    the second query's best cosine over the dense head (`second_best`).
    Besides `fit_answerability`'s sets and the property test's sentences, `nearmiss-id`: the
    near misses with a record identifier appended (`with_identifier`), over the eval catalog."""
    from importlib import resources

    from iii_directory.search import answerability, service

    heads: dict[str, list[tuple[str, float]]] = {}
    agreements: dict[str, dict[str, str | None]] = {}
    by_ranking: dict[int, dict[str, str | None]] = {}
    seconds: dict[str, float | None] = {}
    original, original_lane = answerability.signals, service.learned_lane

    def wrapped(text: str, terms: Any, documents: Any, dense: Any = None, *args: Any,
                **kwargs: Any) -> Any:
        heads[text] = [(doc_id, round(cos, 5)) for doc_id, cos in (dense or [])[:DENSE_HEAD]]
        agreements[text] = by_ranking.get(id(dense), {})
        seconds[text] = SECOND_BEST.get(id(dense))
        return original(text, terms, documents, dense, *args, **kwargs)

    def wrapped_lane(request: Any, documents: Any, pruned: Any, dense: Any, describe: Any,
                     views: Any = None, second: Any = None) -> Any:
        by_ranking[id(dense)] = agreement(dense, views, second)
        return original_lane(request, documents, pruned, dense, describe, views, second)

    sys.path.insert(0, str(ROOT / "tests" / "unit" / "search"))
    from unrelated_requests import unrelated_sentence

    sets = fa._sets(eval_dir)
    rng_id = random.Random("hybrid-vouch-nearmiss-id")
    catalog_path, near = sets["nearmiss"]
    sets["nearmiss-id"] = (catalog_path, [
        {**case, "id": f"id-{case['id']}",
         "capabilities": [with_identifier(rng_id, case["capabilities"][0])]} for case in near])
    rng = random.Random("issue-18-sentences")
    probe = [{"id": f"sentences-{i}", "split": "probe", "kind": "no_match",
              "capabilities": [unrelated_sentence(rng)], "qrels": []} for i in range(PROBE_COUNT)]
    for name, path in (("eval", eval_dir / "catalog.json"),
                       ("example", resources.files("iii_directory") / "data" / "example_catalog.json"),
                       ("heldout", ROOT / "benchmarks" / "data" / "heldout_catalog.json")):
        sets[f"probe-{name}-sentences"] = (path, probe)  # type: ignore[assignment]
    rows: list[dict[str, Any]] = []
    answerability.signals = wrapped  # type: ignore[assignment]
    service.learned_lane = wrapped_lane  # type: ignore[assignment]
    try:
        for name, (path, cases) in sets.items():
            if only and name not in only:
                continue
            heads.clear()
            agreements.clear()
            by_ranking.clear()
            seconds.clear()
            SECOND_BEST.clear()
            catalog = json.loads(Path(str(path)).read_text("utf-8"))
            part = fa.record_cases(name, "hybrid", catalog, cases)
            for row in part:
                row["dense"] = heads.get(row["text"], [])
                row["agree"] = agreements.get(row["text"], {})
                row["second_best"] = seconds.get(row["text"])
            rows += part
            print(f"recorded {name}: {len(cases)} cases", flush=True)
    finally:
        answerability.signals = original  # type: ignore[assignment]
        service.learned_lane = original_lane  # type: ignore[assignment]
    if only and out.exists():
        rows = [r for r in json.loads(out.read_text()) if r["set"] not in only] + rows
    out.write_text(json.dumps(rows) + "\n")


def agreement(dense: Sequence[tuple[str, float]], views: Any, second: Any
              ) -> dict[str, str | None]:
    """The first function of the dense ranking's first `AGREEMENT_DEPTH` hits by each other
    view of the request: the second query's cosine (`second_query.py`), the best and the mean
    of the three function views (`views.py`: document, description, id as a phrase)."""
    ids = [doc_id for doc_id, _ in dense[:AGREEMENT_DEPTH]]
    out: dict[str, str | None] = {"second": None, "views_max": None, "views_mean": None}
    if not ids:
        return out
    cos = [c for _, c in dense[:AGREEMENT_DEPTH]]
    if second is not None:
        values = list(second(ids))
        out["second"] = ids[max(range(len(ids)), key=lambda i: values[i])]
        SECOND_BEST[id(dense)] = max(values)
    if views is not None:
        desc, act = views(ids)
        best = [max(c, d, a) for c, d, a in zip(cos, desc, act)]
        mean = [(c + d + a) / 3 for c, d, a in zip(cos, desc, act)]
        out["views_max"] = ids[max(range(len(ids)), key=lambda i: best[i])]
        out["views_mean"] = ids[max(range(len(ids)), key=lambda i: mean[i])]
    return out


# -- the vouch ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Vouch:
    """One variant: head `k` from one worker (0: no condition), best cosine ≥ `cosine`, margin
    over the best other worker ≥ `margin`, `action` "all" (no condition), "any" (a known action
    named) or "agree" (agreeing), at least `agree` of the other views' first functions
    (`agreement`) equal to the dense ranking's first, and with `ident` a record identifier
    named in the request (`RECORD_ID`)."""

    k: int
    cosine: float
    margin: float = 0.0
    action: str = "any"
    agree: int = 0
    ident: bool = False

    def __str__(self) -> str:
        return (f"k{self.k} cos≥{self.cosine:.2f} m≥{self.margin:.2f} {self.action} "
                f"views≥{self.agree}" + (" id" if self.ident else ""))


def worker(doc_id: str) -> str | None:
    head, sep, _ = doc_id.partition("::")
    return head if sep and head else None


def head_share(dense: Sequence[Sequence[Any]], k: int) -> bool:
    """All of the first `k` dense hits belong to one worker (ids with a namespace)."""
    workers = [worker(doc_id) for doc_id, _ in dense[:k]]
    return len(workers) == k and workers[0] is not None and len(set(workers)) == 1


def other_margin(dense: Sequence[Sequence[Any]]) -> float:
    """The best cosine minus the best cosine of a function of another worker in the head."""
    if not dense:
        return 0.0
    first = worker(dense[0][0])
    other = [cos for doc_id, cos in dense if worker(doc_id) != first]
    return dense[0][1] - (other[0] if other else dense[-1][1])


def vouches(row: dict[str, Any], variant: Vouch) -> bool:
    """The variant answers the row's capability (whatever the decision said)."""
    signals = row["signals"]
    if signals is None or signals["refused"] or signals["cosine"] is None:
        return False
    if variant.action != "all" and signals["action"] is None:
        return False
    if variant.action == "agree" and not signals["action"]:
        return False
    if variant.ident and not RECORD_ID.search(row["text"]):
        return False
    dense = row.get("dense") or []
    return (signals["cosine"] >= variant.cosine
            and (variant.k == 0 or head_share(dense, variant.k))
            and other_margin(dense) >= variant.margin and agreeing(row) >= variant.agree)


def agreeing(row: dict[str, Any]) -> int:
    """How many of the other views' first functions equal the dense ranking's first."""
    dense, views = row.get("dense") or [], row.get("agree") or {}
    return sum(1 for top in views.values() if dense and top == dense[0][0])


@dataclass(frozen=True)
class Floor:
    """One setting of the evidence floor's cosine thresholds (`answerability.evidence_floor`)."""

    floor: float
    supported: float
    confident: float

    def __str__(self) -> str:
        return f"floor {self.floor:.2f} supported {self.supported:.2f} confident {self.confident:.2f}"


@dataclass(frozen=True)
class Second:
    """The decision taken again with the second query's best cosine over the dense head
    (`second_best`) standing in for the best cosine: their larger (`max`) or their mean; the
    margin moves with it."""

    mode: str

    def __str__(self) -> str:
        return f"cosine: {self.mode} of the first and second query's"


Variant = Vouch | Floor | Second


def decide(row: dict[str, Any], variant: Variant | None) -> bool:
    """The decision under `variant`: as run or vouched for (`Vouch`), or taken again with the
    floor's thresholds (`Floor`)."""
    if isinstance(variant, Floor):
        return refloor(row, variant)
    if isinstance(variant, Second):
        return resecond(row, variant)
    return bool(row["decision"]) or (variant is not None and vouches(row, variant))


def refloor(row: dict[str, Any], variant: Floor) -> bool:
    from iii_directory.search import answerability as a

    if row["signals"] is None:
        return False
    shipped = a.FLOOR_COSINE, a.SUPPORTED_COSINE, a.CONFIDENT_COSINE
    a.FLOOR_COSINE, a.SUPPORTED_COSINE, a.CONFIDENT_COSINE = \
        variant.floor, variant.supported, variant.confident
    try:
        return a.answerable(a.Signals(**row["signals"]))
    finally:
        a.FLOOR_COSINE, a.SUPPORTED_COSINE, a.CONFIDENT_COSINE = shipped


def resecond(row: dict[str, Any], variant: Second) -> bool:
    from iii_directory.search import answerability as a

    signals, best = row["signals"], row.get("second_best")
    if signals is None:
        return False
    if best is not None and signals["cosine"] is not None:
        shift = max(0.0, best - signals["cosine"]) if variant.mode == "max" \
            else (best - signals["cosine"]) / 2
        signals = {**signals, "cosine": signals["cosine"] + shift,
                   "margin": signals["margin"] + shift}
    return a.answerable(a.Signals(**signals))


def tally(rows: Sequence[dict[str, Any]], variant: Variant | None
          ) -> dict[str, tuple[int, int, int]]:
    """Per set: (served kept, their count, no-match cases answered)."""
    kept: dict[str, int] = defaultdict(int)
    served: dict[str, int] = defaultdict(int)
    answered: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        yes = decide(row, variant)
        if fa.label(row) == 1:
            served[row["set"]] += 1
            kept[row["set"]] += yes
        elif row["kind"] == "no_match" and yes:
            answered[row["set"]].add(row["case"])
    names = sorted({r["set"] for r in rows})
    return {n: (kept[n], served[n], len(answered[n])) for n in names}


GRID: tuple[Vouch, ...] = tuple(
    Vouch(k, c, m, a, v) for k in (0, 3, 4) for c in (0.30, 0.35, 0.40, 0.45)
    for m in (0.0, 0.03, 0.06) for a in ("all", "any", "agree") for v in (0, 2, 3)) \
    + tuple(Vouch(0, c, 0.0, "all", 0, True) for c in (0.20, 0.25, 0.30, 0.35))
FLOOR_GRID: tuple[Floor, ...] = tuple(
    Floor(f, s, c) for f in (0.14, 0.17, 0.20, 0.23, 0.26) for s in (0.26, 0.29, 0.32, 0.35, 0.38)
    for c in (0.36, 0.39, 0.42, 0.45, 0.50, 0.55) if f <= s <= c)


SECOND_GRID: tuple[Second, ...] = (Second("max"), Second("mean"))


def strictness(variant: Variant) -> tuple[float, ...]:
    """Larger is stricter: the tie-break among variants that keep as many."""
    if isinstance(variant, Second):
        return (float(variant.mode == "mean"),)
    if isinstance(variant, Floor):
        return (variant.confident, variant.supported, variant.floor)
    return (float(variant.ident), variant.k, variant.cosine, variant.margin,
            ("all", "any", "agree").index(variant.action), variant.agree)


def eligible(rows: Sequence[dict[str, Any]], side: Sequence[str], variant: Variant) -> bool:
    """No more no-match cases (chatter included) answered on `side` than as run, and no
    property-test sentence answered over the eval and example catalogs."""
    base, now = tally(rows, None), tally(rows, variant)
    if any(now[name][2] > base[name][2] for name in side if name in now):
        return False
    return all(now.get(name, (0, 0, 0))[2] == 0 for name in PROPERTY_SETS)


def choose(rows: Sequence[dict[str, Any]], side: Sequence[str], grid: Sequence[Variant]
           ) -> Variant | None:
    """The eligible variant of `grid` with the most served capabilities kept on `side`, then
    the strictest (`strictness`)."""
    part = [r for r in rows if r["set"] in side or r["set"] in PROPERTY_SETS]
    best: tuple[Any, ...] | None = None
    for variant in grid:
        if not eligible(part, side, variant):
            continue
        kept = sum(v[0] for n, v in tally(part, variant).items() if n in side)
        key = (kept, strictness(variant))
        if best is None or key > best[0]:
            best = (key, variant)
    return None if best is None else best[1]


def show(rows: Sequence[dict[str, Any]], variant: Variant | None, title: str) -> None:
    print(f"  {title}: {variant}")
    base, now = tally(rows, None), tally(rows, variant)
    for name in now:
        (k0, n, f0), (k1, _, f1) = base[name], now[name]
        cases = len({r["case"] for r in rows if r["set"] == name and r["kind"] == "no_match"})
        print(f"    {name:26s} kept {k0:3d} → {k1:3d} of {n:3d}   no-match answered "
              f"{f0:3d} → {f1:3d} of {cases}")


def measure(rows: list[dict[str, Any]], grid: Sequence[Variant] = GRID) -> None:
    for train, test, label in ((EVAL_SIDE, HELDOUT_SIDE, "eval catalog's sets → held-out"),
                               (HELDOUT_SIDE, EVAL_SIDE, "held-out → eval catalog's sets")):
        variant = choose(rows, train, grid)
        print(f"\n== chosen on {label} ==")
        show([r for r in rows if r["set"] in train], variant, "choosing side")
        show([r for r in rows if r["set"] in test or r["set"].startswith("probe")], variant,
             "scored side")
    print("\n== every variant (kept / no-match answered, eval side | held-out side) ==")
    for variant in grid:
        parts = []
        for side in (EVAL_SIDE, HELDOUT_SIDE):
            t = tally([r for r in rows if r["set"] in side], variant)
            parts.append(f"{sum(v[0] for v in t.values()):3d} / {sum(v[2] for v in t.values()):3d}")
        probe = tally([r for r in rows if r["set"].startswith("probe")], variant)
        print(f"  {str(variant):46s} {parts[0]} | {parts[1]}   probe "
              + " ".join(f"{n.split('-')[1]} {v[2]}" for n, v in probe.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("record", "measure", "floor", "second"))
    parser.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--out", "--signals", dest="out", type=Path,
                        default=Path("/tmp/hybrid_vouch.json"))
    parser.add_argument("--set", action="append", default=[],
                        help="record only these sets (repeatable), keeping the others' rows")
    args = parser.parse_args()
    if args.action == "record":
        record(args.out, args.eval_dir, args.set)
    else:
        grids = {"measure": GRID, "floor": FLOOR_GRID, "second": SECOND_GRID}
        measure(json.loads(args.out.read_text()), grids[args.action])


if __name__ == "__main__":
    main()
