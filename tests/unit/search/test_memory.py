"""Session memory (search.md §10)."""

from __future__ import annotations

from iii_directory.search.memory import PREAMBLE_GUIDANCE, PREAMBLE_INSTALL, SessionMemory


def test_no_session_means_no_memory() -> None:
    memory = SessionMemory()
    assert memory.split(None, "fp", ["a::1"]).new == ["a::1"]
    assert memory.split(None, "fp", ["a::1"]).repeated == []
    assert memory.first_send(None, "fp", PREAMBLE_GUIDANCE)
    assert memory.first_send(None, "fp", PREAMBLE_GUIDANCE)
    assert len(memory) == 0


def test_suppression_and_full_resend() -> None:
    memory = SessionMemory()
    first = memory.split("s", "fp", ["a::1", "b::1"])
    assert (first.new, first.repeated) == (["a::1", "b::1"], [])
    second = memory.split("s", "fp", ["a::1", "c::1"])
    assert (second.new, second.repeated) == (["c::1"], ["a::1"])
    assert memory.first_send("s", "fp", PREAMBLE_GUIDANCE)
    assert not memory.first_send("s", "fp", PREAMBLE_GUIDANCE)
    everything = memory.split("s", "fp", ["a::1", "c::1"])
    assert (everything.new, everything.repeated) == (["a::1", "c::1"], [])
    assert memory.first_send("s", "fp", PREAMBLE_GUIDANCE)  # preambles cleared by the re-send


def test_empty_selection_is_not_a_full_repeat() -> None:
    memory = SessionMemory()
    memory.first_send("s", "fp", PREAMBLE_INSTALL)
    assert memory.split("s", "fp", []).new == []
    assert not memory.first_send("s", "fp", PREAMBLE_INSTALL)


def test_fingerprint_change_resets_delivery() -> None:
    memory = SessionMemory()
    memory.split("s", "fp1", ["a::1"])
    memory.first_send("s", "fp1", PREAMBLE_GUIDANCE)
    after = memory.split("s", "fp2", ["a::1", "b::1"])
    assert after.repeated == []
    assert memory.first_send("s", "fp2", PREAMBLE_GUIDANCE)


def test_reset_delivery_for_every_session() -> None:
    memory = SessionMemory()
    memory.split("s", "fp", ["a::1", "b::1"])
    memory.reset_delivery()
    assert memory.split("s", "fp", ["a::1", "c::1"]).repeated == []


def test_fifo_capacity_evicts_first_inserted() -> None:
    memory = SessionMemory(capacity=1024)
    for i in range(1025):
        memory.split(f"s{i}", "fp", ["a::1"])
    assert len(memory) == 1024
    assert "s0" not in memory
    memory.split("s1", "fp", ["a::1"])  # touching does not refresh FIFO position
    memory.split("new", "fp", ["a::1"])
    assert "s1" not in memory and "s2" in memory
