"""A shared instrument's error queue is read within the lease of the call that may have filled
it, so an error one slot caused is that slot's, never the next slot to read the queue; and
the slots' single readings of the shared DAQ are served by channel-list scans."""

from __future__ import annotations

import threading

from slots_support import rack

from labctl.engine.abort import AbortController
from labctl.fixture import load_fixture
from labctl.launch import make_clock
from labctl.sim.testing import served_lab
from labctl.slots.station import SharedBench, SlotStation


def _stations(fx):
    fixture = load_fixture(str(fx))
    clock = make_clock(fixture)
    shared = SharedBench(fixture, clock=clock, lease_timeout=10.0)
    stations = {}
    for slot in fixture.slots[:2]:
        stations[slot.id] = SlotStation(fixture.slot_view(slot.id), shared, slot.id,
                                        shared_roles=shared.roles_of(slot), abort=AbortController(), clock=clock)
    return shared, stations


def test_an_error_on_the_shared_daq_is_the_slot_that_caused_it(tmp_path):
    fx = rack(tmp_path, time_scale=60)
    with served_lab(fx):
        shared, st = _stations(fx)
        try:
            st["1"].driver("daq").write("BOGUS:COMMAND")  # slot 1's mistake, queued by the DAQ
            role, ch = st["2"].channel("VDD_CORE")
            role.read_voltage(ch)  # slot 2 uses the DAQ next (its board is off: about 0 V)
            assert st["2"].drain_errors(["daq"]) == {}
            errors = st["1"].drain_errors(["daq"])
            assert [e.code for e in errors["daq"]] == [-113], errors
            assert st["1"].drain_errors(["daq"]) == {}  # reported once
            # the bench's log has both commands; each slot's log only its own
            slot1 = [r["text"] for r in st["1"].session_log.records if r.get("shared")]
            slot2 = [r["text"] for r in st["2"].session_log.records if r.get("shared")]
            assert "BOGUS:COMMAND" in slot1 and "BOGUS:COMMAND" not in slot2
        finally:
            for s in st.values():
                s.close()
            shared.close()


def test_an_error_behind_a_timed_out_query_is_still_the_slot_that_caused_it(tmp_path):
    # a query the DAQ cannot answer (a channel it does not have) times out and queues -222: the
    # queue is read under that call's lease all the same, never by the next slot (nor left
    # behind for the next run's pre-flight to find)
    import pytest

    from labctl.errors import InstrumentTimeout

    fx = rack(tmp_path, time_scale=60)
    with served_lab(fx):
        shared, st = _stations(fx)
        try:
            with pytest.raises(InstrumentTimeout):
                st["1"].driver("daq").query("MEAS:VOLT:DC? AUTO,DEF,(@150)")
            role, ch = st["2"].channel("VDD_CORE")
            role.read_voltage(ch)
            assert st["2"].drain_errors(["daq"]) == {}
            errors = st["1"].drain_errors(["daq"])
            assert [e.code for e in errors["daq"]] == [-222], errors
            assert shared.station.driver("daq").query("SYST:ERR?").startswith("+0")
        finally:
            for s in st.values():
                s.close()
            shared.close()


def test_single_readings_of_many_slots_share_one_scan(tmp_path):
    fx = rack(tmp_path, time_scale=60)
    with served_lab(fx):
        shared, st = _stations(fx)
        try:
            batcher = shared.batchers["daq"]
            start = threading.Barrier(len(st))
            readings: dict[str, list[float]] = {}

            def read(slot: str) -> None:
                role, ch = st[slot].channel("VDD_CORE")
                start.wait()
                readings[slot] = [role.read_voltage(ch) for _ in range(20)]

            threads = [threading.Thread(target=read, args=(slot,)) for slot in st]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert sorted(readings) == ["1", "2"] and all(len(v) == 20 for v in readings.values())
            assert batcher.requests == 40
            assert batcher.scans < batcher.requests  # some scans served both slots
            # each slot's session log shows the scans that served it
            for s in st.values():
                assert sum(1 for r in s.session_log.records if r.get("shared") and r["text"].startswith("MEAS:VOLT")) >= 1
        finally:
            for s in st.values():
                s.close()
            shared.close()
