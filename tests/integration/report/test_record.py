"""The run record built from the store holds what the lab recorded: plan text and hash,
station, instruments with calibration, DUT, operator, every attempt, measurements with
limits and verdicts, samples, prompts and answers. Selected like `labctl runs` selects."""

from __future__ import annotations

import hashlib

import pytest

from labctl.report.record import load_records, measurements_frame
from labctl.store import open_store
from labctl.store.query import RunFilters, list_runs
from labctl.store.testing import temporary_database
from tests.integration.report.conftest import SIGNOFF, make_runs


def _by_plan(records):
    return {r.plan.name: r for r in records}


def test_record_of_a_failed_signoff_run(lab):
    rec = _by_plan(load_records(str(lab.db)))["signoff-sample"]
    assert (rec.outcome, rec.dut_serial, rec.station, rec.plan.version) == ("failed", "SIM-GOLD-0001", "sim-bench-1", "2.1")
    assert rec.plan.text == SIGNOFF.read_text(encoding="utf-8")
    assert rec.plan.hash == hashlib.sha256(rec.plan.text.encode()).hexdigest()
    assert [dict(c) for c in rec.plan.corners] == [{"vin": "4.75 V"}, {"vin": "5 V"}]
    assert rec.operator and len(rec.sessions) == 1 and rec.ended_at > rec.started_at
    psu = next(i for i in rec.current_instruments if i.role == "psu")
    assert psu.idn.startswith("Keysight Technologies,E36312A") and psu.calibration_due
    [prompt] = rec.prompts
    assert (prompt.prompt_id, prompt.answer, prompt.answer_source) == ("fan_installed", "yes", "answers-file")
    # the step that failed at the low corner was tried twice; the second attempt counts
    low = [s for s in rec.steps if s.step_id == "input_voltage" and s.corner_index == 0]
    assert [(s.attempt, s.outcome, s.final) for s in low] == [(1, "FAIL", False), (2, "FAIL", True)]
    [m] = low[-1].measurements
    assert m.verdict == "FAIL" and m.unit == "V" and m.limits.low == pytest.approx(4.9) and m.value < 4.9
    assert rec.step_counts() == {"PASS": 8, "FAIL": 1}
    core = [m for s, m in rec.measurements() if m.name == "VDD_CORE"]
    assert len(core) == 2 and all(m.labels["rail"] == "VDD_CORE" and m.verdict == "PASS" for m in core)
    assert any(s.is_safe_state and s.outcome == "PASS" for s in rec.steps)


def test_records_are_selected_with_the_runs_filters(lab):
    with open_store(str(lab.db)) as store:
        assert [r.plan.name for r in load_records(store, filters=RunFilters(outcome="failed"))] == ["signoff-sample"]
        assert [r.plan.name for r in load_records(store, filters=RunFilters(plan_version="1.*"))] == ["smoke"]
        assert [r.dut_serial for r in load_records(store, filters=RunFilters(dut="SIM-GOLD-*"))] == [
            "SIM-GOLD-0001", "SIM-GOLD-0002"]  # oldest first
        assert load_records(store, filters=RunFilters(until="2000-01-01")) == []
        newest = list_runs(store)[0]["id"]
        assert [r.run_id for r in load_records(store, filters=RunFilters(limit=1))] == [newest]
        # ids (or prefixes) keep the order given; with filters only those that match
        ids = [r["id"] for r in list_runs(store)]
        assert [r.run_id for r in load_records(store, [ids[0][:10], ids[1]])] == ids
        assert [r.run_id for r in load_records(store, ids, RunFilters(outcome="passed"))] == [newest]


def test_frame_of_stored_runs_has_one_row_per_final_measurement(lab):
    records = load_records(str(lab.db))
    df = measurements_frame(records)
    assert len(df) == sum(len(s.measurements) for r in records for s in r.final_steps)
    fail = df[df["verdict"] == "FAIL"]
    assert fail[["plan", "step", "corner", "attempt", "measurement"]].values.tolist() == [
        ["signoff-sample", "input_voltage", "vin=4.75 V", 2, "value"]]
    assert len(measurements_frame(records, final_only=False)) == len(df) + 1


@pytest.mark.postgres
def test_record_from_postgresql_matches_the_same_runs_on_sqlite(lab, tmp_path):
    with temporary_database("postgresql", tmp_path) as url:
        make_runs(tmp_path, url)
        pg = _by_plan(load_records(url))
    lite = _by_plan(load_records(str(lab.db)))

    def shape(rec):
        return (rec.outcome, rec.plan.hash, rec.dut_serial, [(s.step_key, s.outcome, s.final) for s in rec.steps],
                [(m.name, m.unit, m.verdict, m.limits) for _, m in rec.measurements()],
                [(p.prompt_id, p.answer) for p in rec.prompts], [i.role for i in rec.instruments])

    assert {k: shape(v) for k, v in pg.items()} == {k: shape(v) for k, v in lite.items()}


def test_loading_a_long_run_holds_little_more_than_its_record(tmp_path):
    """Every export, ``stats`` and the HTML report load the run's record first: for a run of
    many steps the load's peak memory is about the record itself, not a copy of every row on
    top of it (a dict per step row held for the whole run doubled the peak: 182 MB for a
    record of 88 MB at 100,000 steps)."""
    import tracemalloc

    from labctl.bench.readback import record_run

    db = tmp_path / "long.db"
    record_run(db, "long-run-000001", 20_000)
    load_records(str(db), ["long-run-000001"])  # imports and caches of the first load
    tracemalloc.start()
    try:
        [rec] = load_records(str(db), ["long-run-000001"])
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rec.steps) == 20_000 and all(len(s.measurements) == 1 for s in rec.steps)
    assert peak <= 1.5 * held, f"peak {peak / 1e6:.1f} MB while loading a record of {held / 1e6:.1f} MB"
