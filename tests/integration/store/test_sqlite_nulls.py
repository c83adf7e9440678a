"""What a run leaves unset is SQL NULL in a SQLite results file: the store lets sqlite3 bind
``None`` at once (``labctl.store.store._bind_none_directly``) instead of through its failed
adapter lookup, and a NULL must stay a NULL for every reader (``IS NULL``, ``typeof``)."""

from __future__ import annotations

import sqlite3

from eventkit import Script

from labctl.engine import events as ev
from labctl.store import Recorder, open_store


def test_unset_values_of_a_recorded_step_are_sql_null(tmp_path):
    path = tmp_path / "results.db"
    store = open_store(f"sqlite:///{path}")
    try:
        recorder = Recorder(store)
        s = Script(recorder, "nulls-1")
        s.start()
        key = "steps/read[0]#1"
        s.emit(ev.StepStarted, step_key=key, step_id="read", group="steps", check="measure", attempt=1)
        s.emit(ev.MeasurementRecorded, step_key=key, name="v", value=1.5, unit="V", limits=None,
               verdict=ev.Verdict.NONE, labels={})
        s.emit(ev.StepEnded, step_key=key, outcome=ev.StepOutcome.PASS, message="", duration=0.5)
        recorder.add_session_log("nulls-1", [{"t": s.tick(), "instrument": "psu", "resource": "TCPIP0::x::SOCKET",
                                              "kind": "query", "text": "MEAS:VOLT?"}], step_key=key)
        s.emit(ev.RunEnded, outcome=ev.RunOutcome.PASSED, message="")
        recorder.close()
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT typeof(low), typeof(high), typeof(nominal), typeof(limit_text), typeof(lane), "
                           "typeof(labels), typeof(value_text), typeof(value) FROM measurements").fetchone()
        assert row == ("null",) * 7 + ("real",)
        assert conn.execute("SELECT typeof(corner), typeof(corner_index), typeof(tags), typeof(duration_sim) "
                            "FROM steps").fetchone() == ("null",) * 4
        assert conn.execute("SELECT count(*) FROM io_log WHERE elapsed_s IS NULL AND kind = 'query'").fetchone() == (1,)
