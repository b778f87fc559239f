"""Reconnect back-off (docs/rules/protocol.md §14): `base × 2ⁿ` seconds, capped, with ± jitter."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Backoff:
    """Delay before reconnect attempt `n` (0-based) = `min(cap, base × 2ⁿ) × (1 + jitter × u)`,
    `u` uniform in [-1, 1]. Defaults: 1 s base, 30 s cap, ±30 % jitter; retries never stop."""

    base: float = 1.0
    cap: float = 30.0
    jitter: float = 0.3
    rng: Callable[[], float] = field(default=random.random, repr=False)
    attempt: int = 0

    def delay(self, attempt: int) -> float:
        exponent = min(attempt, 62)
        nominal = min(self.cap, self.base * (2.0 ** exponent))
        u = self.rng() * 2.0 - 1.0
        return max(0.0, nominal * (1.0 + self.jitter * u))

    def next_delay(self) -> float:
        """The delay for the current attempt, then count the attempt."""
        value = self.delay(self.attempt)
        self.attempt += 1
        return value

    def reset(self) -> None:
        """A session was established: the next outage starts again at `base`."""
        self.attempt = 0
