"""A group commit writes a step whose end is in the same batch as one whole row; a batch
written again, or a step row already there without its end, still ends up with its end."""

from __future__ import annotations

from eventkit import Script
from sqlalchemy import select

from labctl.engine import events as ev
from labctl.store.schema import steps
from labctl.store.sink import Batch, DbSink


def _batch(run_id: str, session: int, events: list[ev.Event], first_seq: int = 1) -> Batch:
    return Batch(run_id, session, [(first_seq + i, e) for i, e in enumerate(events)])


def _rows(store, run_id: str) -> dict[str, tuple]:
    with store.read_engine.connect() as conn:
        rows = conn.execute(select(steps.c.step_key, steps.c.outcome, steps.c.message, steps.c.ended_at,
                                   steps.c.duration).where(steps.c.run_id == run_id)).all()
    return {r[0]: tuple(r[1:]) for r in rows}


def _script(run_id: str) -> tuple[list[ev.Event], Script]:
    events: list[ev.Event] = []
    return events, Script(events.append, run_id)


def test_steps_ended_in_the_batch_are_stored_whole_and_a_second_write_changes_nothing(store):
    events, s = _script("whole-1")
    s.start()
    sink = DbSink(store, heartbeat_interval=5.0)
    sink.write(_batch("whole-1", 0, events[:1], first_seq=0))
    del events[:]
    keys = [s.step("rail", {"vdd": 0.75}, corner_index=i, outcome=o)
            for i, o in enumerate((ev.StepOutcome.PASS, ev.StepOutcome.FAIL, ev.StepOutcome.PASS))]
    open_key = s.step("rail", {"vdd": 0.75}, corner_index=9, end=False)
    batch = _batch("whole-1", 0, list(events))
    sink.write(batch)
    rows = _rows(store, "whole-1")
    ends = {e.step_key: e for e in events if isinstance(e, ev.StepEnded)}
    for key in keys:
        assert rows[key] == (ends[key].outcome.value, ends[key].message, ends[key].time, 1.0)
    assert rows[open_key] == (None, "", None, None)
    DbSink(store, heartbeat_interval=5.0).write(batch)  # a retry or a replayed journal
    assert _rows(store, "whole-1") == rows


def test_a_step_row_already_there_without_its_end_gets_it(store):
    events, s = _script("whole-2")
    s.start()
    a = s.step("rail", {"vdd": 0.75}, corner_index=0, end=False)
    b = s.step("rail", {"vdd": 0.75}, corner_index=1, end=False)
    starts = [e for e in events if isinstance(e, ev.StepStarted)]
    sink = DbSink(store, heartbeat_interval=5.0)
    sink.write(_batch("whole-2", 0, [events[0], *starts], first_seq=0))  # flushed while the steps ran
    assert _rows(store, "whole-2") == {a: (None, "", None, None), b: (None, "", None, None)}
    ends = [s.emit(ev.StepEnded, step_key=k, outcome=ev.StepOutcome.PASS, duration=2.0) for k in (a, b)]
    # a spooled batch carries the open steps' starts again (its prologue), with their ends
    DbSink(store, heartbeat_interval=5.0).write(_batch("whole-2", 0, [*starts, *ends], first_seq=10))
    assert _rows(store, "whole-2") == {e.step_key: ("PASS", "", e.time, 2.0) for e in ends}


def test_ended_steps_leave_no_row_id_behind_and_late_data_still_finds_its_step(store):
    """A long run keeps no cached row id a step once the step has ended (the cache held one a
    step for the whole run); data arriving for an ended step later (a replayed journal) is
    still stored against its row, read back from the table."""
    from labctl.store.schema import samples

    events, s = _script("whole-3")
    s.start()
    sink = DbSink(store, heartbeat_interval=5.0)
    sink.write(_batch("whole-3", 0, events[:1], first_seq=0))
    del events[:]
    keys = [s.step("rail", {"vdd": 0.75}, corner_index=i) for i in range(50)]
    open_key = s.step("rail", {"vdd": 0.75}, corner_index=99, end=False)
    sink.write(_batch("whole-3", 0, list(events)))
    assert list(sink._steps) == [("whole-3", 0, open_key)]
    del events[:]
    s.emit(ev.SampleRecorded, step_key=keys[3], series="chamber", value=25.5, unit="degC")
    sink.write(_batch("whole-3", 0, list(events), first_seq=1000))
    with store.read_engine.connect() as conn:
        got = conn.execute(select(steps.c.step_key, samples.c.value)
                           .join(steps, steps.c.id == samples.c.step_ref)
                           .where(samples.c.run_id == "whole-3")).all()
    assert [tuple(r) for r in got] == [(keys[3], 25.5)]
    assert _rows(store, "whole-3")[keys[3]][0] == "PASS"
