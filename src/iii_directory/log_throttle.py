"""Log lines that a busy worker would otherwise repeat on every call.

Rule: `ThrottledLog.info(key, message, *args)` writes the line at INFO the first time a `key` is
seen and then at most once per `interval_s` per key, with the number of repeats it held back
since the last INFO line appended; every held-back repeat goes to DEBUG. The clock is injected
(monotonic seconds), so tests never sleep.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class ThrottledLog:
    """INFO at most once per `interval_s` per key; the repeats in between at DEBUG."""

    def __init__(self, logger: logging.Logger, interval_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.interval_s = interval_s
        self.clock = clock
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def info(self, key: str, message: str, *args: object) -> None:
        now = self.clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval_s:
            self._held[key] = self._held.get(key, 0) + 1
            self.logger.debug(message, *args)
            return
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            self.logger.info(message + " (%d more like it in the last %.0f s)", *args, held, now - last)
        else:
            self.logger.info(message, *args)
