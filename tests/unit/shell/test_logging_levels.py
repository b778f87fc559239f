"""`configure_logging`: libraries that log every request or file event stay at WARNING unless
`LOG_LEVEL=debug` asks for everything."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from iii_directory.cli import QUIET_LIBRARIES, configure_logging


@pytest.fixture(autouse=True)
def restore_levels() -> Iterator[None]:
    saved = {name: logging.getLogger(name).level for name in QUIET_LIBRARIES}
    yield
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


@pytest.mark.parametrize(("log_level", "expected"), [
    (None, logging.WARNING), ("info", logging.WARNING), ("INFO", logging.WARNING),
    ("warning", logging.WARNING), ("error", logging.ERROR), ("debug", logging.DEBUG),
])
def test_chatty_libraries_log_warnings_unless_debugging(log_level: str | None, expected: int) -> None:
    configure_logging({} if log_level is None else {"LOG_LEVEL": log_level})
    for name in ("httpx", "httpcore", "watchfiles", "watchfiles.main"):
        assert logging.getLogger(name).getEffectiveLevel() == expected, name


def test_our_own_loggers_keep_the_root_level() -> None:
    configure_logging({"LOG_LEVEL": "info"})
    assert "iii_directory" not in QUIET_LIBRARIES
    assert logging.getLogger("iii_directory.search").level == logging.NOTSET
