"""Hung and dropped instruments (the simulated lab's instrument faults): no hang anywhere."""

from __future__ import annotations

import pytest

from labctl.errors import InstrumentDisconnected, InstrumentTimeout
from labctl.instruments import open_station

pytestmark = pytest.mark.timeout(60)


def with_timeout(fixture, role: str, timeout: str):
    data = fixture.model_copy(deep=True)
    data.roles[role].timeout = timeout
    return data


@pytest.mark.parametrize("role", ["dmm", "chamber", "dut"])
def test_instrument_timeout_fault_raises_instrument_timeout(sim_fixture, lab, role):
    fixture = with_timeout(sim_fixture, role, "500 ms")
    with open_station(fixture) as station:
        obj = station.role(role)
        lab.inject({"fault": "instrument_timeout", "role": role})
        call = {"dmm": lambda: obj.measure("dc_voltage"), "chamber": lambda: obj.temperature(),
                "dut": lambda: obj.sensors()}[role]
        with pytest.raises(InstrumentTimeout) as info:
            call()
        err = info.value
        assert err.instrument == role
        assert err.resource == fixture.roles[role].resource
        assert err.command and "0.5 s" in str(err)


def test_disconnect_is_recovered_for_a_query(sim_fixture, lab):
    with open_station(sim_fixture) as station:
        bert = station.role("bert")
        assert bert.running() is False
        lab.inject({"fault": "disconnect", "role": "bert"})
        assert bert.running() is False  # the query is asked again on a new connection
        notes = [r["text"] for r in station.session_log.records if r["kind"] == "note"]
        assert any("reconnected" in n for n in notes)


def test_persistent_disconnect_gives_up_after_bounded_reconnects(sim_fixture, lab):
    fixture = sim_fixture.model_copy(deep=True)
    fixture.roles["bert"].options["reconnect_delay"] = 0.01
    with open_station(fixture) as station:
        bert = station.role("bert")
        bert.running()
        lab.inject({"fault": "disconnect", "role": "bert", "persistent": True})
        with pytest.raises(InstrumentDisconnected):
            bert.running()
        attempts = [r for r in station.session_log.records if r["text"].startswith("reconnect attempt")]
        assert 1 <= len(attempts) <= 2, "bounded by reconnect_attempts (2)"


def test_garbage_reply_is_a_reply_error_not_a_number(sim_fixture, lab):
    from labctl.errors import InstrumentReplyError

    with open_station(sim_fixture) as station:
        daq = station.role("daq")
        lab.inject({"fault": "garbage_reply", "role": "daq"})
        with pytest.raises(InstrumentReplyError):
            daq.read_temperature("101")
        assert daq.read_temperature("101") > 0  # next reply is fine

