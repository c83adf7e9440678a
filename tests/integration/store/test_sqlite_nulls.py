"""What a run leaves unset is SQL NULL in a SQLite results file: the store lets sqlite3 bind
``None`` at once (``labctl.store.store._bind_none_directly``) instead of through its failed
adapter lookup, and a NULL must stay a NULL for every reader (``IS NULL``, ``typeof``)."""

from __future__ import annotations

import sqlite3

from eventkit import Script

from labctl.engine import events as ev
from labctl.store import Recorder, open_store


def record_step(path, run_id: str, measurements: list[tuple], *, io: bool = False) -> None:
    """One run of one step recording ``measurements`` (name, value, limits, labels) in a
    SQLite file; ``io``: and one query in its instrument I/O log."""
    store = open_store(f"sqlite:///{path}")
    try:
        recorder = Recorder(store)
        s = Script(recorder, run_id)
        s.start()
        key = "steps/read[0]#1"
        s.emit(ev.StepStarted, step_key=key, step_id="read", group="steps", check="measure", attempt=1)
        for name, value, limits, labels in measurements:
            s.emit(ev.MeasurementRecorded, step_key=key, name=name, value=value, unit="V", limits=limits,
                   verdict=ev.Verdict.NONE if limits is None else ev.Verdict.PASS, labels=labels)
        s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.PASS, message="", duration=0.5)
        if io:
            recorder.add_session_log(run_id, [{"t": s.tick(), "instrument": "psu", "resource": "TCPIP0::x::SOCKET",
                                               "kind": "query", "text": "MEAS:VOLT?"}], step_key=key)
        s.emit(ev.RunEnded, outcome=ev.RunOutcome.PASSED, message="")
        recorder.close()
    finally:
        store.close()


def test_unset_values_of_a_recorded_step_are_sql_null(tmp_path):
    path = tmp_path / "results.db"
    record_step(path, "nulls-1", [("v", 1.5, None, {})], io=True)
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT typeof(low), typeof(high), typeof(nominal), typeof(limit_text), typeof(lane), "
                           "typeof(labels), typeof(value_text), typeof(value) FROM measurements").fetchone()
        assert row == ("null",) * 7 + ("real",)
        assert conn.execute("SELECT typeof(corner), typeof(corner_index), typeof(tags), typeof(duration_sim) "
                            "FROM steps").fetchone() == ("null",) * 4
        assert conn.execute("SELECT count(*) FROM io_log WHERE elapsed_s IS NULL AND kind = 'query'").fetchone() == (1,)


def test_measurements_of_mixed_shapes_keep_their_order_and_every_column(tmp_path):
    """A step whose measurements leave different columns unset (no limits, one limit, a text
    value, a flag, a non-finite number, other labels) is stored row by row as recorded: the
    rows in the order recorded, each NULL where the measurement had nothing, never a value
    carried over from a neighbour of another shape."""
    path = tmp_path / "results.db"
    both = ev.Limits(low=0.7, high=0.8, text="0.7 V ≤ x ≤ 0.8 V")
    low_only = ev.Limits(low=0.5, text="≥ 0.5 V")
    recorded = [  # name, value, limits, labels
        ("a", 0.75, both, {"rail": "VDD"}),
        ("b", 0.76, both, {"rail": "VDD"}),
        ("c", 0.6, low_only, {"lane": "3"}),
        ("d", "ok", None, {}),
        ("e", True, ev.Limits(equals=True, text="true"), {"rail": "VIO", "sensor": "t1"}),
        ("f", float("nan"), both, {"rail": "VDD"}),
        ("g", None, None, {}),
        ("h", 0.77, both, {"rail": "VDD"}),
    ]
    record_step(path, "shapes-1", recorded)
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name, value, value_text, low, high, limit_equals, limit_text, lane, rail, sensor, "
                            "labels FROM measurements ORDER BY id").fetchall()
        seqs = [r[0] for r in conn.execute("SELECT seq FROM measurements ORDER BY id")]
    assert seqs == sorted(seqs)
    assert rows == [
        ("a", 0.75, None, 0.7, 0.8, None, "0.7 V ≤ x ≤ 0.8 V", None, "VDD", None, '{"rail": "VDD"}'),
        ("b", 0.76, None, 0.7, 0.8, None, "0.7 V ≤ x ≤ 0.8 V", None, "VDD", None, '{"rail": "VDD"}'),
        ("c", 0.6, None, 0.5, None, None, "≥ 0.5 V", "3", None, None, '{"lane": "3"}'),
        ("d", None, "ok", None, None, None, None, None, None, None, None),
        ("e", 1.0, "true", None, None, "true", "true", None, "VIO", "t1", '{"rail": "VIO", "sensor": "t1"}'),
        ("f", None, "nan", 0.7, 0.8, None, "0.7 V ≤ x ≤ 0.8 V", None, "VDD", None, '{"rail": "VDD"}'),
        ("g", None, None, None, None, None, None, None, None, None, None),
        ("h", 0.77, None, 0.7, 0.8, None, "0.7 V ≤ x ≤ 0.8 V", None, "VDD", None, '{"rail": "VDD"}'),
    ]
