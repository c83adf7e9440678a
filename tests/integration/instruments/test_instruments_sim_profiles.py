"""Every emulated profile against the simulated lab over real sockets (pyvisa-py) and
ptys (pyserial): the role objects checks use, end to end."""

from __future__ import annotations

import time

import pytest

from labctl.instruments.roles import (
    DutConsole,
    ElectronicLoad,
    LinkTester,
    Multimeter,
    PowerSupply,
    TemperatureScanner,
    ThermalChamber,
)

pytestmark = pytest.mark.timeout(120)


def wait_for(predicate, seconds: float, what: str):
    """Poll until ``predicate()`` is truthy (finite, wall-clock bounded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def power_up(station):
    psu = station.role("psu")
    psu.set_voltage("1", 5.0)
    psu.set_current_limit("1", 5.0)
    psu.set_output("1", True)
    return psu


def test_roles_satisfy_their_interfaces(station):
    expected = {"psu": PowerSupply, "load": ElectronicLoad, "dmm": Multimeter, "daq": TemperatureScanner,
                "chamber": ThermalChamber, "bert": LinkTester, "dut": DutConsole}
    for name, proto in expected.items():
        assert isinstance(station.role(name), proto), name


def test_power_supply_drives_the_board(station):
    psu = power_up(station)
    assert psu.voltage("1") == pytest.approx(5.0)
    assert psu.output("1") is True
    assert psu.measure_voltage("1") == pytest.approx(5.0, abs=0.1)
    assert 0.5 < psu.measure_current("1") < 2.0  # the idle board draws about 1 A
    assert psu.drain_errors() == []
    assert psu.safe_state() == ["OUTP 0,(@1)", "OUTP 0,(@2)", "OUTP 0,(@3)", "output = OFF on channels 1,2,3 (read back)"]
    assert psu.output("1") is False


def test_multimeter_reads_the_core_rail(station):
    power_up(station)
    dmm = station.role("dmm")
    core = wait_for(lambda: (v := dmm.measure("dc_voltage")) > 0.5 and v, 10, "VDD_CORE up")
    assert core == pytest.approx(0.75, rel=0.02)
    assert 0 <= dmm.measure("ac_voltage") < 0.01  # golden ripple about 1 mV rms
    dmm.set_nplc(1)
    dmm.set_sample_count(3)
    readings = dmm.read()
    assert len(readings) == 3
    assert dmm.drain_errors() == []


def test_scanner_reads_thermocouples_and_rails(station, sim_fixture):
    power_up(station)
    daq = station.role("daq")
    daq.configure_thermocouple(["101", "102", "103", "104"], "K")
    temps = daq.scan_temperatures(["(@101)", "(@102)", "(@103)", "(@104)"])
    assert all(15 < t < 60 for t in temps.values()), temps
    assert daq.read_temperature("104") == pytest.approx(25, abs=3)  # inlet air = room
    role, ch = station.channel("VDD_CORE")
    assert ch == "111"
    assert wait_for(lambda: role.read_voltage(ch) > 0.5, 10, "VDD_CORE on the DAQ") is True
    assert daq.drain_errors() == []


def test_electronic_load_on_the_aux_rail(station):
    power_up(station)
    load = station.role("load")
    load.set_mode("CC")
    assert load.mode() == "CC"
    load.set_level(1.0)
    load.set_input(True)
    assert load.input() is True
    volts = wait_for(lambda: (v := load.measure_voltage()) > 3 and v, 10, "VDD_AUX at the load")
    assert volts == pytest.approx(3.3, abs=0.1)
    assert load.measure_current() == pytest.approx(1.0, abs=0.05)
    assert load.measure_power() == pytest.approx(volts * 1.0, rel=0.1)
    load.safe_state()
    assert load.input() is False
    assert load.drain_errors() == []


def test_chamber_reaches_a_setpoint(station):
    chamber = station.role("chamber")
    chamber.set_ramp_rate(9999)
    chamber.set_window(1.0)
    chamber.set_soak(10)
    chamber.set_setpoint(35)
    chamber.start()
    assert chamber.setpoint() == 35.0
    wait_for(chamber.at_temperature, 60, "chamber at 35 degC")
    assert chamber.temperature() == pytest.approx(35, abs=1.0)
    status = chamber.status()
    assert status["at_temperature"] is True and status["error_word"] == 0
    assert chamber.drain_errors() == []
    chamber.safe_state()
    assert chamber.setpoint() == 25.0


def test_dut_console(station, lab):
    dut = station.role("dut")
    assert dut.identify()["serial"] == lab.dut_serial
    power_up(station)
    pg = wait_for(lambda: (p := dut.power_good()) and all(p.values()) and p, 10, "every rail power-good")
    assert set(pg) == {"VDD_AUX", "VDD_CORE", "VDD_IO", "VDD_HBM"}
    sensors = dut.sensors()
    assert sensors["VDD_CORE_V"] == pytest.approx(0.75, rel=0.02) and "die_temp" in sensors
    link = wait_for(lambda: (s := dut.link_status()) and s.get("ltssm") == "L0" and s, 10, "link in L0")
    assert link["width"] == 8 and len(link["lanes"]) == 8
    dut.set_load(40)
    assert dut.load() == 40.0
    assert dut.perf()["throughput"] > 0
    dut.prbs_start("PRBS31")
    counters = wait_for(lambda: (c := dut.prbs_counters()) and c["1"].bits > 0 and c, 10, "PRBS bits counted")
    assert set(counters) == {str(n) for n in range(1, 9)}
    assert dut.safe_state() == ["prbs stop", "prbs_state = stopped (read back)", "load idle", "load = 0 (read back)"]
    assert dut.load() == 0.0


def test_bert_gated_run_on_a_golden_board(station):
    power_up(station)
    dut = station.role("dut")
    wait_for(lambda: dut.link_status().get("ltssm") == "L0", 10, "link in L0")
    dut.prbs_start(31)
    bert = station.role("bert")
    bert.configure("PRBS31", rate_gbps=32)
    bert.set_gating(2)  # 2 simulated seconds
    bert.start()
    wait_for(lambda: not bert.running(), 30, "gated run complete")
    for lane in bert.lanes:
        r = bert.results(lane)
        assert r.bits > 1e10 and r.errors == 0 and not r.sync_loss, (lane, r)
    eye = bert.eye("1")
    assert eye["height"] > 50 and 0.3 < eye["width"] < 1.0
    assert bert.drain_errors() == []
    bert.safe_state()


def test_station_safe_state_covers_every_role(station):
    power_up(station)
    results = station.safe_state()
    assert set(results) == set(station.names)
    assert all(r.ok for r in results.values()), results
    assert station.role("psu").output("1") is False


def test_an_instrument_error_is_drained_with_its_code(station):
    psu = station.driver("psu")
    psu.write("VOLT:BOGUS 1")
    psu.write("VOLT 99,(@1)")  # beyond the range: the instrument refuses it
    errors = station.drain_errors()["psu"]
    assert [e.code for e in errors] == [-113, -222]
    assert station.drain_errors() == {}, "the queue is empty after draining"


def test_session_log_has_every_exchange(station):
    station.role("psu").measure_voltage("1")
    recs = [r for r in station.session_log.records if r["instrument"] == "psu"]
    assert ("query", "MEAS:VOLT? (@1)") in [(r["kind"], r["text"]) for r in recs]
    assert recs[-1]["kind"] == "reply" and "elapsed_s" in recs[-1]


def test_serial_roles_also_work_through_visa_asrl(sim_fixture, lab):
    from labctl.instruments import open_station

    fixture = sim_fixture.model_copy(deep=True)
    for role in ("chamber", "dut"):
        fixture.roles[role].resource = f"ASRL{sim_fixture.roles[role].resource}::INSTR"
    with open_station(fixture) as st:
        assert st.driver("chamber").transport.kind == "visa"
        assert st.role("chamber").temperature() == pytest.approx(25, abs=2)
        assert st.role("dut").identify()["serial"] == lab.dut_serial


def test_console_exchanges_stay_whole_across_threads(station):
    """A safety monitor polling sensors beside a check reading the link: no mixed replies."""
    import threading

    dut = station.role("dut")
    problems: list[str] = []

    def poll(fn, check):
        for _ in range(15):
            try:
                if not check(fn()):
                    problems.append(f"{fn.__name__}: wrong reply")
            except Exception as err:  # noqa: BLE001 - collected and asserted below
                problems.append(f"{fn.__name__}: {err}")

    threads = [threading.Thread(target=poll, args=(dut.sensors, lambda s: "die_temp" in s)),
               threading.Thread(target=poll, args=(dut.link_status, lambda s: len(s["lanes"]) == 8))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert problems == []
