"""On PostgreSQL the bulk rows of a batch (measurements, samples, instrument I/O) go by COPY;
what is stored is the same as SQLite stores, odd values included, and a batch written twice
(a retried commit, a replayed spool) still adds nothing."""

from __future__ import annotations

import math

import pytest
from eventkit import Script
from sqlalchemy import func, select

from labctl.engine import events as ev
from labctl.store import Recorder, open_store, query
from labctl.store.schema import io_log, measurements, samples
from labctl.store.sink import Batch, DbSink
from labctl.store.testing import temporary_database


def record(url: str) -> None:
    """A run with the values COPY has to carry: non-finite numbers, text, booleans, quotes,
    tabs, backslashes and newlines, empty and missing limits, labels (JSON)."""
    with open_store(url) as store:
        rec = Recorder(store)
        s = Script.on_bus(rec, run_id="copy-1")
        s.start()
        s.step("first", {"a": 0.75})  # started and ended in one batch: a whole step row
        s.emit(ev.StepStarted, step_key="steps/open#1", step_id="open", group="steps", check="measure",
               tags=("x\ty", 'q"'), corner={"vin": "4 V"})
        rec.flush()  # a step row without its end (then updated)
        s.emit(ev.StepEnded, step_key="steps/open#1", outcome=ev.StepOutcome.ERROR, message="a\nb\\c")
        key = s.step("rails", {"vdd": 0.75, "vio": 0.9}, end=False, labels={"rail": "VDD", "lane": "3"})
        odd = [("nan", math.nan), ("inf", -math.inf), ("text", 'say "hi"\tnow\\n\nnext'), ("flag", True),
               ("none", None), ("big", 1e300)]
        for name, value in odd:
            s.emit(ev.MeasurementRecorded, step_key=key, name=name, value=value, unit="",
                   limits=ev.Limits(equals="x\ty", regex=r"^a\d+$", low=-math.inf, text="tab\there"))
        s.emit(ev.SampleRecorded, step_key=key, series="temp", value=45.25, unit="degC")
        rec.add_session_log("copy-1", [
            {"t": s.tick(), "instrument": "psu", "resource": "TCPIP0::127.0.0.1::5025::SOCKET", "kind": "query",
             "text": "MEAS:VOLT? (@1)"},
            {"t": s.tick(), "instrument": "psu", "resource": "TCPIP0::127.0.0.1::5025::SOCKET", "kind": "reply",
             "text": '+0,"No error"\\\t', "elapsed_s": 0.000125}], step_key=key)
        s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.FAIL, message="x")
        s.end(ev.RunOutcome.FAILED)
        rec.close()


def stored(url: str) -> tuple:
    with open_store(url, mark_interrupted=False) as store:
        d = query.run_detail(store, "copy-1")
        with store.read_engine.connect() as conn:
            io = [tuple(r) for r in conn.execute(select(io_log.c.seq, io_log.c.step_key, io_log.c.instrument,
                                                       io_log.c.kind, io_log.c.text, io_log.c.elapsed_s)
                                                .order_by(io_log.c.seq))]
            sm = [tuple(r) for r in conn.execute(select(samples.c.series, samples.c.value, samples.c.unit))]
    keep = ("name", "value", "value_text", "unit", "low", "high", "limit_equals", "limit_regex", "limit_text",
            "verdict", "lane", "rail", "labels")
    ms = [tuple(m.get(k) for k in keep) for m in sorted(d["measurements"], key=lambda m: m["name"])]
    st = [tuple(r.get(k) for k in ("step_key", "step_id", "group", "outcome", "message", "corner", "attempt",
                                   "tags", "duration")) for r in d["steps"]]
    return ms, sm, io, st


def test_postgresql_stores_by_copy_what_sqlite_stores(tmp_path):
    with temporary_database("postgresql", tmp_path) as pg:
        record(pg)
        record(str(tmp_path / "lite.db"))
        pg_rows, lite_rows = stored(pg), stored(str(tmp_path / "lite.db"))
        assert [len(rows) for rows in pg_rows] == [9, 1, 2, 3]
        assert repr(pg_rows) == repr(lite_rows)  # repr: nan == nan


@pytest.mark.parametrize("twice", ["whole", "half"])
def test_a_batch_written_again_by_copy_adds_nothing(tmp_path, twice):
    with temporary_database("postgresql", tmp_path) as pg:
        record(pg)
        with open_store(pg) as store:
            with store.read_engine.connect() as conn:
                rows = conn.execute(select(measurements.c.seq).where(measurements.c.run_id == "copy-1",
                                                                     measurements.c.name != "a")).all()  # rails
            sink = DbSink(store, heartbeat_interval=5.0)
            step_key = "steps/rails[0]#1"
            again = [(seq, ev.MeasurementRecorded(run_id="copy-1", time=1.0, step_key=step_key, name=f"m{seq}",
                                                  value=1.0)) for (seq,) in rows]
            if twice == "half":  # rows there already and new ones in one batch: the new ones are kept
                again.append((999, ev.MeasurementRecorded(run_id="copy-1", time=1.0, step_key=step_key,
                                                          name="new", value=2.0)))
            sink.write(Batch("copy-1", 0, again))
            with store.read_engine.connect() as conn:
                n = conn.execute(select(func.count()).where(measurements.c.run_id == "copy-1")).scalar()
        assert n == len(rows) + 1 + (1 if twice == "half" else 0)  # (+1: step first's)


def test_a_batch_rolled_back_from_copy_leaves_no_step_id_of_its_own_behind(tmp_path):
    """The COPY attempt of a replayed batch created the row of a step that never announced
    itself, then failed on a row already there: written again, that step's data goes to the
    step row that now exists (not to the id of the row rolled back)."""
    with temporary_database("postgresql", tmp_path) as pg:
        record(pg)
        with open_store(pg) as store:
            with store.read_engine.connect() as conn:
                (seq,) = conn.execute(select(measurements.c.seq).where(measurements.c.run_id == "copy-1",
                                                                       measurements.c.name == "vdd")).one()
            sink = DbSink(store, heartbeat_interval=5.0)
            sink.write(Batch("copy-1", 0, [
                (5000, ev.MeasurementRecorded(run_id="copy-1", time=1.0, step_key="steps/ghost#1", name="g",
                                              value=1.0)),
                (seq, ev.MeasurementRecorded(run_id="copy-1", time=1.0, step_key="steps/rails[0]#1", name="vdd",
                                             value=0.75))]))
            d = query.run_detail(store, "copy-1")
        ghost = [m for m in d["measurements"] if m["name"] == "g"]
        assert len(ghost) == 1 and ghost[0]["step_key"] == "steps/ghost#1"
        assert [m["name"] for m in d["measurements"]].count("vdd") == 1
