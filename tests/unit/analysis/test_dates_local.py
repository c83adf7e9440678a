"""`labctl stats --by date` and `--compare date=…` group by the local day, as `--since` and
`--until` read dates: a run at 23:30 in New York is on that day, not on the next UTC one."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from labctl.analysis.frames import prepare
from labctl.report.record import FRAME_COLUMNS


@pytest.fixture
def new_york(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_date_of_a_measurement_is_its_local_day(new_york):
    frame = pd.DataFrame({c: [None, None] for c in FRAME_COLUMNS})
    frame["time"] = [pd.Timestamp("2026-12-01 04:30", tz="UTC"), pd.Timestamp("2026-11-01 06:30", tz="UTC")]
    frame["value"], frame["final"] = [1.0, 2.0], [True, True]
    # 23:30 EST on Nov 30; 01:30 EST on Nov 1, the hour the clocks went back
    assert prepare(frame)["date"].tolist() == ["2026-11-30", "2026-11-01"]


@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns"])
def test_every_time_of_a_year_gets_the_day_its_own_conversion_gives(monkeypatch, zone):
    """The day is worked out once per quarter hour of UTC: every 28 min 53 s over a year (both
    daylight-saving changes, a half-hour change, offsets of 5:45 and −3:30) agree with each
    time converted on its own."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        times = pd.Series(pd.date_range("2026-01-01", "2027-01-01", freq="1733s", tz="UTC"))
        frame = pd.DataFrame({c: [None] * len(times) for c in FRAME_COLUMNS})
        frame["time"], frame["value"], frame["final"] = times, 1.0, True
        expected = times.dt.tz_convert(zone).dt.strftime("%Y-%m-%d").tolist()
        assert prepare(frame)["date"].tolist() == expected
    finally:
        monkeypatch.undo()
        time.tzset()
