"""E36312A supply and EL34143A load against the board model, through pyvisa."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on

pytestmark = pytest.mark.timeout(60)


def test_output_off_reads_zero_and_on_feeds_the_board(mvisa, mconsole, clock):
    psu = mvisa("psu")
    assert float(psu.query("MEAS:VOLT? (@1)")) == pytest.approx(0.0, abs=0.01)
    assert mconsole.table("power-good")["VDD_CORE"] == "off"
    power_on(psu, clock=clock)
    assert float(psu.query("MEAS:VOLT? (@1)")) == pytest.approx(5.0, abs=0.01)
    idle = float(psu.query("MEAS:CURR? (@1)"))
    assert 0.6 < idle < 1.3
    assert float(psu.query("MEAS:CURR? (@2)")) == pytest.approx(0.0, abs=0.005)  # open channel


def test_undervoltage_keeps_the_board_off(mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, volts=4.0, clock=clock)  # below the 4.5 V UVLO
    assert float(psu.query("MEAS:CURR? (@1)")) < 0.01
    assert mconsole.table("power-good")["VDD_AUX"] == "off"


def test_over_voltage_protection_trips_the_output(mvisa):
    psu = mvisa("psu")
    psu.write("VOLT:PROT 5.5,(@1)")
    power_on(psu)
    assert psu.query("VOLT:PROT:TRIP? (@1)") == "0"
    psu.write("VOLT 5.8,(@1)")
    assert psu.query("VOLT:PROT:TRIP? (@1)") == "1"
    assert psu.query("OUTP? (@1)") == "0"
    assert float(psu.query("MEAS:VOLT? (@1)")) == pytest.approx(0.0, abs=0.01)
    psu.write("VOLT 5,(@1);:OUTP:PROT:CLE (@1);:OUTP ON,(@1)")
    assert psu.query("OUTP? (@1)") == "1"


def test_over_current_protection_trips_under_load(mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    psu.write("CURR:PROT:STAT ON,(@1);CURR 2,(@1)")
    assert psu.query("*OPC?") == "1"
    clock.advance(0.1)  # past the OCP delay (50 ms from the last settings change): a trip is at once
    mconsole.cmd("load stress 100")
    assert psu.query("CURR:PROT:TRIP? (@1)") == "1"
    assert psu.query("OUTP? (@1)") == "0"


def test_current_limit_without_ocp_browns_the_board_out_until_power_cycle(mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    psu.write("CURR 2,(@1)")
    assert psu.query("*OPC?") == "1"
    mconsole.cmd("load stress 100")
    assert mconsole.table("power-good")["VDD_CORE"] == "off"
    assert float(psu.query("MEAS:CURR? (@1)")) < 0.1
    psu.write("CURR 5,(@1);:OUTP OFF,(@1);:OUTP ON,(@1)")
    assert psu.query("*OPC?") == "1"
    clock.advance(1.0)
    assert mconsole.table("power-good")["VDD_CORE"] == "off"  # no time off: VIN never fell, still latched
    assert psu.query("OUTP OFF,(@1);*OPC?") == "1"
    clock.advance(0.05)  # VIN at the board falls below UVLO
    assert psu.query("OUTP ON,(@1);*OPC?") == "1"
    clock.advance(1.0)
    assert mconsole.table("power-good")["VDD_CORE"] not in ("never", "off")


def test_pymeasure_style_inst_nsel_and_apply(mvisa):
    psu = mvisa("psu")
    psu.write("INST:NSEL 2;:VOLT 3.3")
    assert psu.query("INST:NSEL 2;:VOLT?") == "+3.30000000E+00"
    psu.write("INST CH3")
    assert psu.query("INST?") == "CH3"
    psu.write("APPL CH1,5.0,4.0")
    assert float(psu.query("CURR? (@1)")) == 4.0
    assert psu.query("APPL? CH1") == '"5.000000,4.000000"'  # the named output, not the selected CH3
    assert psu.query("APPL?") == '"0.000000,1.000000"'  # none named: the selected one (CH3)
    psu.write("APPL? CH9")  # no such output: no reply, an error in the queue
    assert psu.query("SYST:ERR?").startswith("-224")
    psu.write("INST:NSEL 4")
    assert psu.query("SYST:ERR?").startswith("-222")


def test_electronic_load_on_the_aux_rail_droops_it_and_raises_input_current(mvisa, clock):
    psu, load = mvisa("psu"), mvisa("load")
    power_on(psu, clock=clock)
    before_in = float(psu.query("MEAS:CURR? (@1)"))
    v0 = float(load.query("MEAS:VOLT?"))
    assert v0 == pytest.approx(3.3, rel=0.01)
    load.write("MODE CURR;CURR 2;:INP ON")
    assert load.query("MODE?") == "CURR"
    assert float(load.query("MEAS:CURR?")) == pytest.approx(2.0, abs=0.01)
    v1 = float(load.query("MEAS:VOLT?"))
    assert v0 - v1 == pytest.approx(0.02, abs=0.004)  # 10 mOhm load line
    assert float(load.query("MEAS:POW?")) == pytest.approx(2 * v1, rel=0.01)
    assert float(psu.query("MEAS:CURR? (@1)")) > before_in + 1.2  # 6.6 W more through the VRM
    load.write("FUNC RES;RES 3.3")
    assert load.query("FUNC?") == "RES"
    assert float(load.query("MEAS:CURR?")) == pytest.approx(1.0, abs=0.02)
    load.write("INP OFF")
    assert float(load.query("MEAS:CURR?")) == pytest.approx(0.0, abs=0.005)


def test_load_rejects_out_of_range_and_other_channels(mvisa):
    load = mvisa("load")
    load.write("CURR 100")
    load.write("CURR 1,(@2)")
    assert load.query("SYST:ERR?").startswith("-222")
    assert load.query("SYST:ERR?").startswith("-222")
    load.write("CURR:RANG 5")
    assert float(load.query("CURR:RANG?")) == pytest.approx(6.12)


def test_cv_then_cc_into_a_resistor_on_ch2(fixture_path, rm):
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fixture = load_fixture(fixture_path)
    fixture.roles["psu"].options["ch2_load_ohms"] = 10.0
    with SimulatedLab(fixture) as lab:
        psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
        try:
            psu.write("VOLT 5,(@2);CURR 1,(@2);:OUTP ON,(@2)")
            assert float(psu.query("MEAS:CURR? (@2)")) == pytest.approx(0.5, abs=0.005)
            assert psu.query("STAT:QUES:INST:ISUM2:COND?") == "+2"  # constant voltage
            psu.write("CURR 0.2,(@2)")
            assert float(psu.query("MEAS:VOLT? (@2)")) == pytest.approx(2.0, abs=0.01)
            assert float(psu.query("MEAS:CURR? (@2)")) == pytest.approx(0.2, abs=0.005)
            assert psu.query("STAT:QUES:INST:ISUM2:COND?") == "+1"  # constant current
        finally:
            psu.close()


def test_rigol_dp832_dialect(fixture_path, rm):
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fixture = load_fixture(fixture_path)
    fixture.roles["psu"].driver = "rigol-dp832"
    with SimulatedLab(fixture) as lab:
        psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
        try:
            assert psu.query("*IDN?").startswith("RIGOL TECHNOLOGIES,DP832,")
            psu.write(":INST:NSEL 1;:SOUR:VOLT:LEV:IMM:AMPL 5.0000;:SOUR:CURR:LEV:IMM:AMPL 3.0")
            psu.write(":INST:NSEL 1;:OUTP:STAT ON")
            assert psu.query(":INST:NSEL 1;:OUTP:STAT?") == "ON"
            assert float(psu.query(":INST:NSEL 1;:MEAS:VOLT:DC?")) == pytest.approx(5.0, abs=0.01)
            assert psu.query(":OUTP:MODE? CH1") == "CV"
            assert psu.query(":OUTP:OVP:QUES? CH1") == "NO"
            assert psu.query(":INST:NSEL 2;:OUTP:STAT?") == "OFF"
            psu.write(":INST:NSEL 3;:SOUR:VOLT:LEV:IMM:AMPL 6")  # CH3 is a 5 V output
            assert psu.query(":SYST:ERR?").startswith("-222")
        finally:
            psu.close()


def test_dp832_protection_has_a_level_and_a_state_and_trips_at_its_own_ocp_level(dp832_lab, rm, clock):
    """OVP and OCP as the DP800 has them; the board under stress trips OCP at its own level.

    A ``write`` returns before the supply has acted on it: ``*OPC?`` (or any query) comes
    first whenever the test then moves the manual clock, or the command takes effect at the
    later time (an output switched on after the ``advance`` has had no time to power the board)."""
    from tests.integration.sim.conftest import Console

    lab, _ = dp832_lab
    psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
    con = Console(lab.addresses["dut"])
    try:
        assert psu.query(":INST:NSEL 1;:SOUR:VOLT:PROT:STAT?") == "OFF"  # OVP off at power-on
        psu.write(":INST:NSEL 1;:SOUR:VOLT:LEV:IMM:AMPL 5.0;:SOUR:CURR:LEV:IMM:AMPL 3.0;:SOUR:VOLT:PROT:LEV 5.5")
        psu.write(":INST:NSEL 1;:OUTP:STAT ON")
        assert psu.query("*OPC?") == "1"  # on at this instant, before the clock moves
        clock.advance(1.0)
        psu.write(":INST:NSEL 1;:SOUR:VOLT:LEV:IMM:AMPL 5.6")  # above the level, but OVP is not armed
        assert psu.query(":OUTP:OVP:QUES? CH1") == "NO"
        psu.write(":INST:NSEL 1;:SOUR:VOLT:PROT:STAT ON")  # armed with the output already above: trips
        assert psu.query(":OUTP:OVP:QUES? CH1") == "YES"
        assert psu.query(":INST:NSEL 1;:OUTP:STAT?") == "OFF"
        psu.write(":INST:NSEL 1;:SOUR:VOLT:LEV:IMM:AMPL 5.0;:SOUR:VOLT:PROT:CLE")
        assert psu.query(":INST:NSEL 1;:SOUR:VOLT:PROT:QUES?") == "NO"
        clock.advance(0.5)  # VIN off long enough for the board to come up afresh
        # OCP at 1.5 A, under the 3 A current limit: the idle board runs, the stressed one trips it
        psu.write(":INST:NSEL 1;:SOUR:CURR:PROT:LEV 1.5;:SOUR:CURR:PROT:STAT ON;:OUTP:STAT ON")
        assert psu.query("*OPC?") == "1"
        clock.advance(1.0)  # the board sequences its rails up
        assert float(psu.query(":INST:NSEL 1;:MEAS:CURR:DC?")) < 1.5
        assert psu.query(":OUTP:OCP:QUES? CH1") == "NO"
        assert con.table("power-good")["VDD_CORE"] not in ("never", "off")
        con.cmd("load stress 100")  # the board's draw goes past 1.5 A (past the 3 A limit, too)
        clock.advance(0.1)
        assert psu.query(":OUTP:OCP:QUES? CH1") == "YES"
        assert psu.query(":INST:NSEL 1;:SOUR:CURR:PROT:QUES?") == "YES"
        assert psu.query(":OUTP:OVP:QUES? CH1") == "NO"
        probe = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
        try:  # an independent client sees the output off
            assert probe.query(":INST:NSEL 1;:OUTP:STAT?") == "OFF"
            assert float(probe.query(":INST:NSEL 1;:MEAS:CURR:DC?")) == pytest.approx(0.0, abs=0.005)
        finally:
            probe.close()
        assert int(psu.query(":SYST:ERR?").split(",")[0]) == 0
    finally:
        con.close()
        psu.close()


def test_labctl_arms_the_dp832s_protection_before_switching_on(dp832_lab, rm):
    """The DP800's OVP and OCP are off at power-on and OCP has a level of its own: switching an
    output on through labctl arms both, the OCP level at the current limit (read back over SCPI
    by an independent client)."""
    from labctl.instruments import open_station

    lab, fixture = dp832_lab
    with open_station(fixture) as station:
        psu = station.role("psu")
        psu.set_voltage("1", 5.0)
        psu.set_current_limit("1", 2.0)
        psu.set_output("1", True)
        assert psu.protection("1") == {"ovp_level": pytest.approx(5.7), "ocp_enabled": True, "current_limit": 2.0}
    probe = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
    try:
        assert probe.query(":INST:NSEL 1;:SOUR:VOLT:PROT:STAT?") == "ON"
        assert float(probe.query(":INST:NSEL 1;:SOUR:VOLT:PROT:LEV?")) == pytest.approx(5.7)
        assert probe.query(":INST:NSEL 1;:SOUR:CURR:PROT:STAT?") == "ON"
        assert float(probe.query(":INST:NSEL 1;:SOUR:CURR:PROT:LEV?")) == pytest.approx(2.0)
    finally:
        probe.close()


@pytest.mark.parametrize("amps", [1.0, 2.9, 4.0])
def test_the_load_and_the_board_share_the_aux_rail_current_in_and_beyond_its_limit(mvisa, mconsole, clock, amps):
    """The console's VDD_AUX current is the board's own 0.25 A plus what the load sinks, also when
    the load asks more than the rail's 3 A limit and the VRM folds back (the load read the whole
    3 A while the board still drew its share). Console noise 10 mA, load 0.5 mA (1 sigma)."""
    psu, load = mvisa("psu"), mvisa("load")
    power_on(psu, clock=clock)
    load.write(f"MODE CURR;CURR {amps};:INP ON")
    i_load = float(load.query("MEAS:CURR?"))
    i_rail = float(mconsole.table("sensors")["VDD_AUX_I"])
    assert i_rail - i_load == pytest.approx(0.25, abs=0.05)
    assert i_rail <= 3.0 + 0.05  # the VRM's current limit
    assert i_load == pytest.approx(min(amps, 3.0 - 0.25), abs=0.005)


@pytest.mark.parametrize(("setting", "law"), [
    ("MODE RES;RES 0.5", lambda v, i: v / i == pytest.approx(0.5, rel=0.02)),  # CR: I = V/R
    ("MODE VOLT;VOLT 2", lambda v, i: v == pytest.approx(2.0, abs=0.02)),  # CV: the load holds its level
])
def test_a_load_the_aux_vrm_cannot_feed_keeps_its_own_law_and_power_good_drops(mvisa, mconsole, clock, setting, law):
    """Past the AUX VRM's current limit the rail gives its limit and the load's law sets the
    voltage (CR 0.5 ohm read 0.99 V at 2.75 A, 0.36 ohm; a CV load holds its level); a rail that
    low (below 90 % of 3.3 V) has lost its power-good."""
    psu, load = mvisa("psu"), mvisa("load")
    power_on(psu, clock=clock)
    assert mconsole.table("power-good")["VDD_AUX"] != "off"
    load.write(f"{setting};:INP ON")
    v, i = float(load.query("MEAS:VOLT?")), float(load.query("MEAS:CURR?"))
    assert i == pytest.approx(3.0 - 0.25, abs=0.01)  # the VRM's limit less the board's own draw
    assert law(v, i), (v, i)
    assert mconsole.table("power-good")["VDD_AUX"] == "off"
    load.write("INP OFF")
    for _ in range(50):  # back as the rail recovers
        clock.advance(0.1)
        if mconsole.table("power-good")["VDD_AUX"] != "off":
            break
    assert mconsole.table("power-good")["VDD_AUX"] != "off"
