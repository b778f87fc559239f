"""The soak's verdict does not depend on the host (issue 33, item 5): its RSS growth baseline is
read an event after the worker is ready — its first search answer and, in hybrid, its encoder
loaded — not at a share of the run, so a host that loads the model late gives the same verdict
as a quiet one; every soak counts its hybrid and lexical answers; the long-capability mode sends
18 new maximum-length capabilities per search. Timelines are simulated: no test times anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iii_directory.search.request_limits import CAPABILITY_MAX_CHARS
from iii_directory.testing import soak, soak_report

MIB = 1024 * 1024


def rss_timeline(model_loaded_at: float) -> Any:
    """A healthy hybrid worker: 90 MiB until its model is in, then 230 MiB, +5 MiB by the end."""
    return lambda t: (90 if t < model_loaded_at else 230 + 5 * (t / 60.0)) * MIB


def growth_under(model_loaded_at: float, *, rss_warm_at: float | None = None) -> float | None:
    """Replay a 60 s hybrid run sampled every 0.25 s, as `SoakSession.load` does: the growth
    from the baseline to the end, in MiB (None when no baseline was read)."""
    rss = rss_timeline(model_loaded_at)
    first_answer, baseline, ready_at = 0.3, None, None
    for tick in range(1, 241):
        now = tick * 0.25
        encoder_at = model_loaded_at if now >= model_loaded_at else None
        if ready_at is None:
            ready_at = soak_report.ready_moment("hybrid", first_answer, encoder_at)
        if baseline is None and soak_report.baseline_due(now, 0.0, ready_at, 0.0, rss_warm_at):
            baseline = rss(now)
    return None if baseline is None else (rss(60.0) - baseline) / MIB


def test_a_late_model_load_moves_the_baseline_and_keeps_the_verdict() -> None:
    quiet, busy = growth_under(4.0), growth_under(40.0)
    assert quiet is not None and busy is not None
    assert quiet <= 64 and busy <= 64  # the same verdict on a quiet and a loaded host
    # the old rule (a sample at 10 % of the run) read the busy host before its model was in
    assert growth_under(4.0, rss_warm_at=6.0) <= 64 < growth_under(40.0, rss_warm_at=6.0)  # type: ignore[operator]


def test_no_baseline_until_ready() -> None:
    assert soak_report.ready_moment("lexical", None, None) is None
    assert soak_report.ready_moment("lexical", 0.5, None) == 0.5
    assert soak_report.ready_moment("hybrid", 0.5, None) is None
    assert soak_report.ready_moment("hybrid", 0.5, 12.0) == 12.0
    assert not soak_report.baseline_due(100.0, 0.0, None, 0.0, None)
    assert not soak_report.baseline_due(12.5, 0.0, 12.0, 0.0, None)
    assert soak_report.baseline_due(13.0, 0.0, 12.0, 0.0, None)
    assert not soak_report.baseline_due(13.0, 0.0, 12.0, 20.0, None)  # never inside the warm-up
    assert growth_under(1e9) is None  # the encoder never loaded: growth is not judged


def test_the_encoder_line_is_found_in_a_growing_log(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_bytes(b"")
    worker = soak.SubprocessWorker("ws://127.0.0.1:9", soak.Project(tmp_path), log)
    assert not worker.encoder_loaded()
    log.write_bytes(b"INFO registered 42 functions\nINFO dense lane re")
    assert not worker.encoder_loaded()
    with log.open("ab") as handle:
        handle.write(b"ady (0 cached vectors)\n")
    assert worker.encoder_loaded()


def test_reports_count_answers_by_mode() -> None:
    report = soak_report.SoakReport(seconds=10.0, callers=2, functions={}, rss_boot=None, rss_warm=None,
                             rss_end=None, rss_bound=64 * MIB, in_process=False,
                             search_modes={"hybrid": 30, "lexical": 10}, first_hybrid_after=7.5)
    assert report.hybrid_share == 0.75
    assert report.modes_line() == ("search answers: hybrid 30 (75%), lexical 10 (25%); "
                                   "first hybrid answer after 7.5 s")
    assert report.ok  # no errors; growth not judged without a baseline
    assert report.to_json()["hybrid_share"] == 0.75


def test_long_callers_send_18_new_capabilities_of_the_maximum_length(tmp_path: Path) -> None:
    session = soak.SoakSession(tmp_path, long_callers=2)
    sent = [session._capabilities(caller) for caller in (0, 2, 0)]
    assert all(len(batch) == 18 and all(len(c) == CAPABILITY_MAX_CHARS for c in batch) for batch in sent)
    assert len({c for batch in sent for c in batch}) == 54
    ordinary = session._capabilities(1) + session._capabilities(4)
    assert all(len(c) < 40 for c in ordinary)


def test_calls_of_long_and_ordinary_callers_are_counted_apart() -> None:
    report = soak_report.SoakReport(seconds=10.0, callers=4, functions={
        "directory::skills::get": soak_report.FunctionStats(latencies=[0.01] * 30)},
        rss_boot=None, rss_warm=None, rss_end=None, rss_bound=64 * MIB, in_process=False,
        long_callers=2, long_caller_calls=5)
    assert "calls by the 2 ordinary callers 25 (2.5/s), by the 2 long callers 5 (0.5/s)" in report.table()
    assert report.to_json()["long_caller_calls"] == 5
