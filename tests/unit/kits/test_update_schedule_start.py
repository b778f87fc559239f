"""The boot-time update schedule imports the kit flows only after start, off the event loop."""

from __future__ import annotations

import anyio
import pytest
from kitenv import KitEnv

from iii_directory.functions import kits as surface


async def test_the_schedule_imports_the_flows_later_and_keeps_its_first_check_time(
        kits: KitEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = await kits.update_pending()
    monkeypatch.setattr(surface, "_flows_loaded", lambda: None)  # as in a fresh `serve`
    monkeypatch.setattr(surface, "FLOWS_IMPORT_DELAY_S", 0.0)
    await surface.start_update_checks(kits.directory)
    assert kits.directory in surface._deferred
    with anyio.fail_after(10):
        while not cache.exists():
            await anyio.sleep(0.02)
    assert {"op": "updates"} in kits.engine.events("directory::kits::on-change")
    monkeypatch.undo()
    await surface.stop(kits.directory)


async def test_the_waited_time_counts_toward_the_first_check(kits: KitEnv) -> None:
    import iii_directory.kits.service as flows

    kits.service.first_check_delay_s = 15.0
    kits.service.update_interval_s = 3600.0
    surface._schedule(kits.directory, flows, surface.FLOWS_IMPORT_DELAY_S)
    assert kits.service.first_check_delay_s == 15.0 - surface.FLOWS_IMPORT_DELAY_S
    await anyio.sleep(0)  # the schedule task starts (and waits for its first check)
    await surface.stop(kits.directory)


async def test_stop_cancels_a_pending_import(kits: KitEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(surface, "_flows_loaded", lambda: None)
    monkeypatch.setattr(surface, "FLOWS_IMPORT_DELAY_S", 3600.0)
    await surface.start_update_checks(kits.directory)
    pending = surface._deferred[kits.directory]
    await surface.stop(kits.directory)
    assert kits.directory not in surface._deferred
    with anyio.fail_after(5):
        while not pending.done():
            await anyio.sleep(0)
    assert pending.cancelled()


async def test_without_a_listed_kit_the_flows_wait_for_one(kits: KitEnv,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock is read at each of the check's times; the flows are imported (and the check
    runs) only once it lists a kit."""
    cache = await kits.update_pending()
    assert surface._kits_listed()
    answers = iter([False, False, True])
    reads: list[bool] = []

    def listed() -> bool:
        reads.append(next(answers))
        return reads[-1]

    monkeypatch.setattr(surface, "_flows_loaded", lambda: None)
    monkeypatch.setattr(surface, "FLOWS_IMPORT_DELAY_S", 0.0)
    monkeypatch.setattr(surface, "_kits_listed", listed)
    monkeypatch.setattr(surface, "_pause", lambda waited_s: 0.0)
    await surface.start_update_checks(kits.directory)
    with anyio.fail_after(10):
        while not cache.exists():
            await anyio.sleep(0.02)
    assert reads == [False, False, True]
    monkeypatch.undo()
    await surface.stop(kits.directory)


def test_the_lock_is_read_at_the_checks_times() -> None:
    assert surface._pause(5.0) == surface.FIRST_CHECK_DELAY_S - 5.0
    assert surface._pause(surface.FIRST_CHECK_DELAY_S) == surface.UPDATE_INTERVAL_S
