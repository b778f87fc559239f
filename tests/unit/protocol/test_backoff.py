"""Reconnect back-off: 1 s × 2ⁿ, capped at 30 s, ±30 % jitter (protocol.md §14)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from iii_directory.protocol.backoff import Backoff


def test_nominal_delays_double_up_to_the_cap() -> None:
    backoff = Backoff(rng=lambda: 0.5)  # u = 0: no jitter
    assert [backoff.next_delay() for _ in range(8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


def test_jitter_bounds() -> None:
    assert Backoff(rng=lambda: 0.0).delay(0) == 0.7
    assert Backoff(rng=lambda: 1.0).delay(0) == 1.3
    assert Backoff(rng=lambda: 1.0).delay(10) == 39.0


def test_reset_starts_again_at_base() -> None:
    backoff = Backoff(rng=lambda: 0.5)
    for _ in range(5):
        backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() == 1.0


def test_huge_attempt_numbers_stay_capped() -> None:
    assert Backoff(rng=lambda: 0.5).delay(10_000) == 30.0


def test_short_test_backoff_is_a_parameter() -> None:
    assert Backoff(base=0.05, cap=0.2, rng=lambda: 0.5).delay(5) == 0.2


@given(st.integers(min_value=0, max_value=200), st.floats(min_value=0.0, max_value=1.0))
def test_delay_always_within_jitter_of_nominal(attempt: int, r: float) -> None:
    nominal = min(30.0, 2.0 ** min(attempt, 62))
    delay = Backoff(rng=lambda: r).delay(attempt)
    assert nominal * 0.7 - 1e-9 <= delay <= nominal * 1.3 + 1e-9
