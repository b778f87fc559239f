"""The measurement of hybrid vouches and floor thresholds (`benchmarks/hybrid_vouch.py`, issue
18): its signals over recorded rows, the vouch conditions, and the choice on one side."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from iii_directory.search import answerability


def measurement() -> ModuleType:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import hybrid_vouch

    return hybrid_vouch


SIGNALS = {"words": 6, "known_share": 1.0, "coverage": 0.2, "rare_matched": 0.5,
           "cosine": 0.42, "margin": 0.2, "action": True, "extra": None, "refused": "",
           "admitted": False, "corroborated": False, "concepts": None}
DENSE = [["maps::geocode", 0.42], ["maps::reverse", 0.40], ["weather::now", 0.30],
         ["maps::route", 0.29]]
AGREE = {"second": "maps::geocode", "views_max": "maps::geocode", "views_mean": "maps::geocode"}


def row(case: str, kind: str = "match", set_name: str = "dev", decision: bool = False,
        **signals: Any) -> dict[str, Any]:
    return {"set": set_name, "case": case, "kind": kind, "text": f"request {case}",
            "lane": ["maps::geocode"], "relevant": ["maps::geocode"] if kind == "match" else [],
            "decision": decision, "signals": {**SIGNALS, **signals}, "dense": DENSE,
            "agree": AGREE}


def test_head_margin_and_agreement_read_the_dense_head() -> None:
    measured = measurement()
    assert measured.head_share(DENSE, 2) and not measured.head_share(DENSE, 3)
    assert abs(measured.other_margin(DENSE) - 0.12) < 1e-9  # 0.42 − weather's 0.30
    assert measured.agreeing(row("a")) == 3
    assert measured.agreeing({**row("a"), "agree": {**AGREE, "second": "maps::route"}}) == 2


def test_a_vouch_needs_every_condition_of_its_variant() -> None:
    measured = measurement()
    variant = measured.Vouch(2, 0.40, 0.06, "agree", 3)
    assert measured.vouches(row("a"), variant)
    assert not measured.vouches(row("a", refused="intrinsic"), variant)
    assert not measured.vouches(row("a", action=False), variant)
    assert measured.vouches(row("a", action=False), measured.Vouch(2, 0.40, 0.06, "any", 3))
    assert not measured.vouches(row("a", action=None), measured.Vouch(2, 0.40, 0.06, "any", 3))
    assert not measured.vouches(row("a", cosine=0.39), variant)
    assert not measured.vouches(row("a"), measured.Vouch(3, 0.40, 0.06, "agree", 3))
    assert not measured.vouches(row("a"), measured.Vouch(0, 0.40, 0.13, "agree", 3))
    assert not measured.vouches(row("a"), measured.Vouch(0, 0.30, 0.0, "all", 0, True))
    named = {**row("a"), "text": "move WEB-7 to Done"}
    assert measured.vouches(named, measured.Vouch(0, 0.30, 0.0, "all", 0, True))


def test_identifiers_are_what_the_identifier_vouch_reads() -> None:
    measured = measurement()
    rng = random.Random(7)
    for _ in range(50):
        assert measured.RECORD_ID.search(measured.with_identifier(rng, "turn up the TV volume"))
    for text in ("book a taxi for 6am", "3D print the bracket", "post in #ops"):
        assert not measured.RECORD_ID.search(text)


def test_the_choice_keeps_most_without_answering_more_no_match_cases() -> None:
    measured = measurement()
    rows = [row("served"), row("served-low", cosine=0.36),
            row("no-1", "no_match", cosine=0.37, action=True),
            row("no-2", "no_match", decision=True)]
    grid = (measured.Vouch(0, 0.35, 0.0, "agree", 3), measured.Vouch(0, 0.40, 0.0, "agree", 3),
            measured.Vouch(0, 0.40, 0.0, "any", 3))
    # 0.35 keeps both served capabilities but answers `no-1`: not eligible; the two 0.40
    # variants keep one each, and the tie goes to the stricter action condition
    assert measured.choose(rows, ("dev",), grid) == grid[1]
    probe = row("probe", "no_match", set_name="probe-eval-sentences")
    assert not measured.eligible(rows + [probe], ("dev",), grid[1])
    assert measured.tally(rows, grid[1])["dev"] == (1, 2, 1)


def test_refloor_decides_again_and_restores_the_shipped_thresholds() -> None:
    measured = measurement()
    shipped = (answerability.FLOOR_COSINE, answerability.SUPPORTED_COSINE,
               answerability.CONFIDENT_COSINE)
    weak = row("w", cosine=0.47, rare_matched=0.0, action=None, admitted=True)
    assert measured.refloor(weak, measured.Floor(*shipped)) == answerability.answerable(
        answerability.Signals(**weak["signals"]))
    assert not measured.refloor(weak, measured.Floor(0.20, 0.32, 0.50))  # below the floor
    assert (answerability.FLOOR_COSINE, answerability.SUPPORTED_COSINE,
            answerability.CONFIDENT_COSINE) == shipped


def test_the_second_query_cosine_stands_in_for_the_best_one() -> None:
    measured = measurement()
    weak = {**row("w", cosine=0.30, rare_matched=0.0, action=None, admitted=True),
            "second_best": 0.60}
    assert not answerability.answerable(answerability.Signals(**weak["signals"]))
    assert measured.resecond(weak, measured.Second("max"))  # 0.60: past CONFIDENT_COSINE
    assert not measured.resecond({**weak, "second_best": 0.20}, measured.Second("max"))
    assert not measured.resecond({**weak, "second_best": 0.40}, measured.Second("mean"))  # 0.35
    assert measured.resecond({**weak, "second_best": 0.90}, measured.Second("mean"))  # 0.60
