"""The measurements table every table exporter writes: the documented columns, one row per
measurement, the final attempts by default, context carried onto every row."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pandas as pd
import pytest

from labctl.report.record import FRAME_COLUMNS, Limits, measurements_frame
from tests.unit.report.records import failing_record, record


def test_frame_has_exactly_the_documented_columns_and_one_row_per_final_measurement():
    df = measurements_frame([failing_record()])
    assert list(df.columns) == list(FRAME_COLUMNS)
    assert len(df) == 2  # the retried attempt is left out
    fail = df[df["verdict"] == "FAIL"].iloc[0]
    assert (fail["run_id"], fail["plan"], fail["plan_version"], fail["station"], fail["dut"]) == (
        "run-1", "power-rails", "1.2", "bench-3", "DUT-7")
    assert (fail["step"], fail["corner"], fail["corner_index"], fail["attempt"]) == ("rails", "vin=5 V", 1, 2)
    assert (fail["measurement"], fail["labels"], fail["rail"], fail["value"], fail["unit"]) == (
        "VDD_CORE", "rail=VDD_CORE", "VDD_CORE", pytest.approx(0.71), "V")
    assert (fail["low"], fail["high"], fail["limits"]) == (0.725, 0.775, "0.75 V ± 3 %")
    assert fail["time"] == pd.Timestamp("2025-11-24T16:00:01Z")
    assert str(df["time"].dt.tz) == "UTC"


def test_every_attempt_on_request_marked_by_final():
    df = measurements_frame([failing_record()], final_only=False)
    assert len(df) == 3
    assert sorted(zip(df["attempt"], df["final"], strict=True)) == [(1, False), (1, True), (2, True)]


def test_no_records_give_an_empty_frame_with_the_columns():
    df = measurements_frame([])
    assert list(df.columns) == list(FRAME_COLUMNS) and df.empty


def test_records_are_immutable():
    rec = record()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.outcome = "passed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        rec.plan.parameters["rail_tol"] = "5 %"  # type: ignore[index]


@pytest.mark.parametrize(("limits", "text"), [
    (Limits(low=1.0, high=2.5), "1..2.5"), (Limits(high=3.0), "..3"), (Limits(equals="OK"), '== "OK"'),
    (Limits(regex="^SN"), "~ /^SN/"), (Limits(low=1.0, text="x ≥ 1 V"), "x ≥ 1 V"),
])
def test_limits_read_as_a_person_reads_them(limits, text):
    assert limits.describe() == text


def test_calibration_at_the_run_is_judged_by_the_day_it_started():
    from labctl.report.record import Instrument
    from labctl.report.tables import calibrated_at
    from tests.unit.report.records import T0  # 2025-11-24

    def due(d):
        return Instrument("psu", "d", "r", "idn", "A1", d, 0)

    assert calibrated_at(due("2025-11-30"), T0) is True
    assert calibrated_at(due("2025-11-01"), T0) is False
    assert calibrated_at(due(None), T0) is None and calibrated_at(due("soon"), T0) is None


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles", "Pacific/Kiritimati"])
def test_calibration_at_the_run_is_the_same_wherever_the_report_is_made(monkeypatch, zone):
    """Due 2025-11-24, a run at 2025-11-24T23:30Z: Los Angeles (still the 24th) and Kiritimati
    (already the 25th) export the same answer as UTC (they had answered True and False)."""
    import time

    from labctl.report.record import Instrument
    from labctl.report.tables import calibrated_at

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        t = 1_764_027_000.0  # 2025-11-24T23:30:00Z
        assert calibrated_at(Instrument("psu", "d", "r", "idn", "A1", "2025-11-24", 0), t) is True
        assert calibrated_at(Instrument("psu", "d", "r", "idn", "A1", "2025-11-23", 0), t) is False
    finally:
        monkeypatch.undo()
        time.tzset()


def test_csv_writes_recorded_text_a_spreadsheet_would_run_as_a_formula_as_text(tmp_path):
    """An answer, a DUT serial or a plan version beginning with =, +, -, @ opens in a
    spreadsheet as text (a leading '), never as a formula (CSV injection); numbers stay numbers."""
    from labctl.report.formats import ExportOptions
    from labctl.report.record import Measurement
    from labctl.report.tables import write_csv
    from tests.unit.report.records import T0, measurement, step

    answer = Measurement(name="answer", value=None, value_text="=cmd|' /C calc'!A0", unit="", limits=None,
                         verdict="NONE", labels=MappingProxyType({}), time=T0 + 1, seq=2)
    rec = record(step("label", "FAIL", answer, measurement("offset", -0.5, "V", "PASS")), dut="-DUT-1")
    out = tmp_path / "r.csv"
    write_csv([rec], out, ExportOptions())
    df = pd.read_csv(out, dtype=str)
    assert set(df["value_text"].dropna()) == {"'=cmd|' /C calc'!A0"}
    assert set(df["dut"]) == {"'-DUT-1"}
    assert float(df[df["measurement"] == "offset"]["value"].iloc[0]) == -0.5
