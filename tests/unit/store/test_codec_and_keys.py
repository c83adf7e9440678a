"""Event JSON round trips (the spool journal), step keys and --since parsing."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

import pytest

from labctl.engine import events as ev
from labctl.errors import UsageError
from labctl.store.codec import event_from_json, event_to_json
from labctl.store.query import parse_since
from labctl.store.store import split_step_key

EVENTS = [
    ev.RunStarted(run_id="r", time=1.0, plan_name="p", plan_version="1", plan_hash="h", plan_text="t",
                  plan_path="p.yaml", station="s", dut_serial=None, operator="o", labctl_version="0.1",
                  host="h", pid=1, parameters={"v": [1, 2]}, corners=[{"temp": 25}],
                  instruments=[ev.InstrumentInfo(role="psu", driver="d", resource="r", asset_serial="A")],
                  resumed_from="r"),
    ev.StepStarted(run_id="r", time=2.0, step_key="steps/a[0]#1", step_id="a", group="steps", check="c",
                   corner={"temp": 25}, corner_index=0, tags=("power", "smoke")),
    ev.MeasurementRecorded(run_id="r", time=3.0, step_key="k", name="v", value=0.75, unit="V",
                           limits=ev.Limits(low=0.7, high=0.8, marginal_low=0.71, text="0.75 V ± 6 %"),
                           verdict=ev.Verdict.MARGINAL, labels={"rail": "VDD"}),
    ev.MeasurementRecorded(run_id="r", time=3.0, step_key="k", name="id", value="ACME", verdict=ev.Verdict.NONE),
    ev.SampleRecorded(run_id="r", time=4.0, step_key="k", series="temp", value=45.5, unit="degC"),
    ev.PromptAsked(run_id="r", time=5.0, step_key="k", prompt_id="p1", text="ok?", choices=("yes", "no")),
    ev.PromptAnswered(run_id="r", time=6.0, step_key="k", prompt_id="p1", answer="yes", source="answers-file"),
    ev.LogMessage(run_id="r", time=7.0, level="info", message="hello"),
    ev.Progress(run_id="r", time=7.5, step_key="k", text="waiting", fraction=0.5),
    ev.InstrumentErrorReported(run_id="r", time=8.0, step_key=None, role="psu", code=-222, message="range"),
    ev.AttachmentAdded(run_id="r", time=9.0, step_key="k", name="eye", media_type="image/png", path="/x.png"),
    ev.StepEnded(run_id="r", time=10.0, step_key="k", outcome=ev.StepOutcome.FAIL, message="m", duration=1.5),
    ev.RunEnded(run_id="r", time=11.0, outcome=ev.RunOutcome.ABORTED, message="operator"),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_every_event_survives_the_journal(event):
    assert event_from_json(event_to_json(event)) == event


def test_unknown_kinds_are_refused_and_unknown_fields_tolerated():
    with pytest.raises(ValueError):
        event_from_json('{"event": "Nope", "run_id": "r", "time": 1}')
    e = event_from_json('{"event": "LogMessage", "run_id": "r", "time": 1, "level": "info", "message": "m", "new": 1}')
    assert e == ev.LogMessage(run_id="r", time=1, level="info", message="m")


@pytest.mark.parametrize("key, want", [
    ("steps/vout[2]#3", ("steps/vout[2]", 3)),
    ("setup/power_on#1", ("setup/power_on", 1)),
    ("steps/plain", ("steps/plain", 1)),
    ("steps/odd#name", ("steps/odd#name", 1)),
])
def test_split_step_key(key, want):
    assert split_step_key(key) == want


def test_since_accepts_ages_dates_and_datetimes():
    now = 1_800_000_000.0
    assert parse_since("30m", now) == now - 1800
    assert parse_since("7d", now) == now - 7 * 86400
    assert parse_since(datetime(2026, 11, 30, tzinfo=UTC)) == datetime(2026, 11, 30, tzinfo=UTC).timestamp()
    assert parse_since("2026-11-30T08:00+00:00") == datetime(2026, 11, 30, 8, tzinfo=UTC).timestamp()
    assert abs(parse_since("2026-11-30") - time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))) < 1
    # a date or a date-time without a zone from Python reads as local time, as typed ones do
    assert parse_since(datetime(2026, 11, 30, 8)) == parse_since("2026-11-30T08:00")
    assert parse_since(date(2026, 11, 30)) == parse_since("2026-11-30")
    assert parse_since(None) is None
    with pytest.raises(UsageError, match="cannot read --since"):
        parse_since("yesterday-ish")


def test_until_a_date_includes_that_whole_day():
    assert abs(parse_since("2026-11-30", option="--until") - time.mktime((2026, 12, 1, 0, 0, 0, 0, 0, -1))) < 1
    assert parse_since("20261130", option="--until") == parse_since("2026-11-30", option="--until")
    assert parse_since("2026-11-30T08:00+00:00", option="--until") == datetime(2026, 11, 30, 8, tzinfo=UTC).timestamp()
    with pytest.raises(UsageError, match="cannot read --until"):
        parse_since("soon", option="--until")


@pytest.fixture(params=["Europe/Berlin", "America/New_York"])
def zone_with_dst(request, monkeypatch):
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


#: (the hour the clocks go back: it happens twice, its two UTC offsets; the hour they go forward)
DST_2026 = {"Europe/Berlin": ("2026-10-25T02:30", "+02:00", "+01:00", "2026-03-29T02:30"),
            "America/New_York": ("2026-11-01T01:30", "-04:00", "-05:00", "2026-03-08T02:30")}


def test_a_local_time_the_clocks_skip_or_repeat_is_refused_with_the_offsets_to_use(zone_with_dst):
    twice, first, second, never = DST_2026[zone_with_dst]
    with pytest.raises(UsageError, match="happens twice in local time") as info:
        parse_since(twice)
    assert f"{twice}{first} (the first) or {twice}{second} (the second)" in info.value.hint
    # each offset the hint names is a distinct instant, an hour apart
    assert parse_since(f"{twice}{second}") - parse_since(f"{twice}{first}") == 3600
    with pytest.raises(UsageError, match="does not exist in local time"):
        parse_since(never, option="--until")
    # a plain date on those days is the day's first instant; other times read as before
    day = twice[:10]
    assert datetime.fromtimestamp(parse_since(day)).hour == 0
    assert parse_since(f"{day}T12:00") - parse_since(day) == 12 * 3600 + 3600  # the day had 25 hours
