"""Gate 6, once per turn (search.md §12.4): the ledger rules, per session, bounded."""

from __future__ import annotations

import pytest

from iii_directory.hints.hint_text import ExposeMode
from iii_directory.hints.hook import DiscoveryReason, HintLedger, HintRecord, decide

from .payloads import WIDE_TOOLS, user


def rec(turn: str, step: int, generation: int = 1, expose: ExposeMode = "agent_trigger") -> HintRecord:
    return HintRecord(turn_id=turn, step=step, functions_generation=generation, expose=expose)


# Each sequence runs against one session; (record, expected send) in order.
SEQUENCES: list[tuple[str, list[tuple[HintRecord, bool]]]] = [
    ("first_generation_sends", [(rec("t1", 0), True)]),
    ("later_step_same_turn_does_not", [(rec("t1", 0), True), (rec("t1", 1), False), (rec("t1", 5), False)]),
    ("replay_of_same_step_resends", [(rec("t1", 3), True), (rec("t1", 3), True), (rec("t1", 3), True)]),
    ("earlier_step_counts_as_replay", [(rec("t1", 3), True), (rec("t1", 2), True), (rec("t1", 0), True)]),
    ("refused_step_leaves_record_unchanged",
     [(rec("t1", 3), True), (rec("t1", 5), False), (rec("t1", 4), False), (rec("t1", 3), True)]),
    ("replay_leaves_record_unchanged", [(rec("t1", 3), True), (rec("t1", 1), True), (rec("t1", 2), True),
                                        (rec("t1", 4), False)]),
    ("new_turn_rearms", [(rec("t1", 0), True), (rec("t1", 1), False), (rec("t2", 9), True),
                         (rec("t2", 10), False)]),
    ("returning_to_an_old_turn_id_rearms", [(rec("t1", 0), True), (rec("t2", 0), True), (rec("t1", 1), True)]),
    ("generation_change_does_not_rearm", [(rec("t1", 0, generation=1), True),
                                          (rec("t1", 1, generation=2), False)]),
    ("expose_change_does_not_rearm", [(rec("t1", 0, expose="agent_trigger"), True),
                                      (rec("t1", 1, expose="native"), False)]),
]


@pytest.mark.parametrize("sequence", [s[1] for s in SEQUENCES], ids=[s[0] for s in SEQUENCES])
def test_once_per_turn_rules(sequence: list[tuple[HintRecord, bool]]) -> None:
    ledger = HintLedger()
    for index, (record, expected) in enumerate(sequence):
        assert ledger.should_send("s", record) is expected, f"generation #{index}: {record}"


def test_record_is_the_first_step_of_the_turn() -> None:
    ledger = HintLedger()
    ledger.should_send("s", rec("t1", 2, generation=4, expose="native"))
    ledger.should_send("s", rec("t1", 1, generation=5))
    ledger.should_send("s", rec("t1", 7, generation=6))
    assert ledger.get("s") == rec("t1", 2, generation=4, expose="native")


def test_sessions_are_independent() -> None:
    ledger = HintLedger()
    assert ledger.should_send("a", rec("t1", 0))
    assert ledger.should_send("b", rec("t1", 1))
    assert not ledger.should_send("a", rec("t1", 1))
    assert not ledger.should_send("b", rec("t1", 2))
    assert ledger.should_send("b", rec("t1", 1))


def test_ledger_is_bounded_and_forgets_least_recently_used() -> None:
    ledger = HintLedger(capacity=3)
    for name in ("a", "b", "c"):
        ledger.should_send(name, rec("t1", 0))
    ledger.should_send("a", rec("t1", 1))  # touch "a": "b" is now the least recently used
    ledger.should_send("d", rec("t1", 0))
    assert len(ledger) == 3
    assert ledger.get("b") is None
    assert ledger.get("a") is not None and ledger.get("d") is not None
    # a forgotten session simply gets the hint again
    assert ledger.should_send("b", rec("t1", 5))


def test_ledger_stays_bounded_under_many_sessions() -> None:
    ledger = HintLedger(capacity=64)
    for index in range(10_000):
        ledger.should_send(f"s{index}", rec("t", 0))
    assert len(ledger) == 64


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        HintLedger(capacity=0)


def _decide(ledger: HintLedger, session_id: str, turn: str, step: int, messages: list | None = None,
            min_workers: int = 2) -> DiscoveryReason | None:
    return decide(
        ledger=ledger, session_id=session_id, turn_id=turn, step=step, functions_generation=1,
        expose="agent_trigger", tool_names=WIDE_TOOLS,
        messages=messages if messages is not None else [user("plan")], min_workers=min_workers,
    ).reason


def test_earlier_gates_do_not_consume_the_turn() -> None:
    ledger = HintLedger()
    # step 0 is skipped by a gate: nothing recorded, so step 1 (gates clear) still gets the hint
    assert _decide(ledger, "s", "t1", 0, min_workers=9) == DiscoveryReason.narrow_surface
    assert ledger.get("s") is None
    assert _decide(ledger, "s", "t1", 1) is None
    assert _decide(ledger, "s", "t1", 2) == DiscoveryReason.hint_already_sent


def test_hint_already_sent_is_the_last_gate() -> None:
    ledger = HintLedger()
    assert _decide(ledger, "s", "t1", 0) is None
    assert _decide(ledger, "s", "t1", 1, messages=[user("call web::fetch")]) == DiscoveryReason.task_guided


def test_blank_session_keeps_no_record() -> None:
    ledger = HintLedger()
    assert _decide(ledger, "", "t1", 0) is None
    assert _decide(ledger, "", "t1", 1) is None
    assert len(ledger) == 0
