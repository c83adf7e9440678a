"""The simulated Rigol DP832 answers the DP800 Programming Guide's own command forms, through
pyvisa, as a client written for the real supply sends them: ``[:SOURce[<n>]]:…`` with the
channel in the header, ``:OUTPut…`` with a ``CHn`` argument, ``:APPLy``, ``:MEASure…``.

A ``write`` returns before the supply has acted on it: a query comes first whenever the test
then moves the manual clock."""

from __future__ import annotations

import re

import pytest

from tests.integration.sim.conftest import scpi_errors

pytestmark = pytest.mark.timeout(60)
READING = r"-?\d+\.\d{4},-?\d+\.\d{4},-?\d+\.\d{3}"  # :MEAS:ALL?: volts, amps, watts


@pytest.fixture
def psu(dp832_lab, rm):
    lab, _ = dp832_lab
    res = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
    yield res
    res.close()


def replies(psu, expected: dict[str, str]) -> None:
    """Each query of ``expected``, in order, answers exactly its reply."""
    assert {query: psu.query(query) for query in expected} == expected


def errors(psu) -> list[str]:
    return scpi_errors(psu, ":SYST:ERR?")


def test_source_n_addresses_the_channel_in_the_header(psu):
    psu.write(":SOUR2:VOLT 3")
    psu.write(":SOUR2:CURR 1.5")
    assert float(psu.query(":SOUR2:VOLT?")) == pytest.approx(3.0)
    assert psu.query(":SOUR2:VOLT?") == psu.query(":INST:NSEL 2;:SOUR:VOLT?")
    assert psu.query(":SOURce2:VOLTage:LEVel:IMMediate:AMPLitude?") == psu.query(":INST:NSEL 2;:SOUR:VOLT?")
    assert float(psu.query(":SOUR2:CURR?")) == pytest.approx(1.5)
    assert float(psu.query(":INST:NSEL 1;:SOUR:VOLT?")) == 0.0  # CH1 untouched
    assert psu.query(":INST:NSEL?") == "1"  # SOURce<n> does not select the channel
    psu.write(":SOUR3:VOLT 2.5;CURR 0.5")  # the second header is relative to :SOUR3
    assert float(psu.query(":SOUR3:CURR?")) == pytest.approx(0.5)
    assert errors(psu) == []
    psu.write(":SOUR4:VOLT 1")  # there is no CH4
    assert psu.query(":SYST:ERR?").startswith("-114,")


def test_source_n_protection_level_state_and_clear(psu):
    psu.write(":SOUR2:VOLT:PROT 12;:SOUR2:VOLT:PROT:STAT ON")
    psu.write(":SOUR2:CURR:PROT 1.25;:SOUR2:CURR:PROT:STAT ON")
    assert float(psu.query(":SOUR2:VOLT:PROT?")) == pytest.approx(12.0)
    assert psu.query(":SOUR2:VOLT:PROT:STAT?") == "ON"
    assert float(psu.query(":SOUR2:CURR:PROT:LEV?")) == pytest.approx(1.25)
    assert psu.query(":SOUR2:CURR:PROT:STAT?") == "ON"
    assert psu.query(":SOUR1:VOLT:PROT:STAT?") == "OFF"  # CH1 untouched
    assert psu.query(":SOUR2:VOLT:PROT:TRIP?") == "NO"
    assert psu.query(":SOUR2:CURR:PROT:TRIP?") == "NO"
    psu.write(":SOUR2:VOLT 13")  # above the armed OVP level: the output trips when on
    psu.write(":OUTP CH2,ON")
    assert psu.query(":SOUR2:VOLT:PROT:TRIP?") == "YES"
    assert psu.query(":OUTP:OVP:ALAR? CH2") == "YES"
    assert psu.query(":OUTP? CH2") == "OFF"
    psu.write(":SOUR2:VOLT 5;:SOUR2:VOLT:PROT:CLE")
    assert psu.query(":SOUR2:VOLT:PROT:TRIP?") == "NO"
    assert psu.query(":OUTP? CH2") == "OFF"  # cleared, but still off until switched on
    psu.write(":SOUR2:VOLT:PROT 40")  # CH2's OVP goes to 33 V
    assert psu.query(":SYST:ERR?").startswith("-222,")
    assert errors(psu) == []


def test_output_state_with_a_channel_argument_whatever_the_setpoint(psu):
    assert psu.query(":OUTP? CH2") == "OFF"
    psu.write(":OUTP CH2,ON")  # the setpoint is 0 V: the output is on all the same
    assert psu.query(":OUTP? CH2") == "ON"
    assert psu.query(":OUTP:STAT? CH2") == "ON"
    assert psu.query(":OUTP? CH1") == "OFF"
    psu.write(":OUTPut:STATe CH2,OFF")
    assert psu.query(":OUTP? CH2") == "OFF"
    psu.write(":INST:NSEL 3;:OUTP ON")  # no channel: the current one
    assert psu.query(":OUTP? CH3") == "ON"
    assert psu.query(":OUTP?") == "ON"
    assert psu.query(":INST:NSEL 3;:OUTP:STAT?") == "ON"  # the QCoDeS form still answers
    assert errors(psu) == []


def test_output_ovp_and_ocp_settings_by_channel(psu):
    assert psu.query(":OUTP:OVP? CH1") == "OFF"  # both off at power-on
    assert psu.query(":OUTP:OCP? CH1") == "OFF"
    psu.write(":OUTP:OVP CH1,ON")
    psu.write(":OUTP:OVP:VAL CH1,8.8")
    assert psu.query(":OUTP:OVP? CH1") == "ON"
    assert psu.query(":OUTP:OVP:STAT? CH1") == "ON"
    assert psu.query(":OUTP:OVP:VAL? CH1") == "8.800"
    assert float(psu.query(":SOUR1:VOLT:PROT?")) == pytest.approx(8.8)  # one setting, two headers
    psu.write(":OUTP:OCP:VAL CH1,1.5")
    psu.write(":OUTP:OCP CH1,ON")
    replies(psu, {
        ":OUTP:OCP:VAL? CH1": "1.5000",
        ":OUTP:OCP? CH1": "ON",
        ":OUTP:OCP:STAT? CH1": "ON",
        ":SOUR1:CURR:PROT:STAT?": "ON",
        ":OUTP:OCP:VAL? CH1,MAX": "3.3000",
        ":OUTP:OVP:VAL? CH3,MAX": "5.500",
        ":OUTP:OCP:ALAR? CH1": "NO",
        ":OUTP:OVP:ALAR? CH1": "NO",
        ":OUTP:OCP:QUES? CH1": "NO",
        ":OUTP:OVP:QUES? CH1": "NO",
    })
    psu.write(":INST:NSEL 2;:OUTP:OCP:VAL 0.5")  # no channel: the current one
    assert psu.query(":OUTP:OCP:VAL? CH2") == "0.5000"
    assert psu.query(":OUTP:OCP:VAL?") == "0.5000"
    assert errors(psu) == []


def test_an_ocp_trip_on_the_board_supply_is_seen_and_cleared_by_channel(psu, clock):
    psu.write(":APPL CH1,5,3")
    psu.write(":OUTP:OCP:VAL CH1,0.3;:OUTP:OCP CH1,ON")  # the idle board draws more than 0.3 A
    psu.write(":OUTP CH1,ON")
    assert psu.query("*OPC?") == "1"
    clock.advance(1.0)  # the board sequences its rails up and draws past the OCP level
    replies(psu, {
        ":OUTP:OCP:ALAR? CH1": "YES",
        ":OUTP:OCP:QUES? CH1": "YES",
        ":SOUR1:CURR:PROT:TRIP?": "YES",
        ":SOUR1:VOLT:PROT:TRIP?": "NO",
        ":OUTP:OVP:ALAR? CH1": "NO",
        ":OUTP? CH1": "OFF",
    })
    assert float(psu.query(":MEAS:CURR? CH1")) == pytest.approx(0.0, abs=0.005)
    psu.write(":OUTP:OCP:CLEAR CH1")  # cleared; on again only when switched on
    replies(psu, {":OUTP:OCP:ALAR? CH1": "NO", ":SOUR1:CURR:PROT:TRIP?": "NO", ":OUTP? CH1": "OFF"})
    assert errors(psu) == []


def test_apply_sets_and_reads_back_a_channel(psu):
    psu.write(":APPL CH2,5,1")
    assert psu.query(":APPL? CH2") == "CH2:30V/3A,5.000,1.000"
    assert psu.query(":APPL? CH2,VOLT") == "5.000"
    assert psu.query(":APPL? CH2,CURR") == "1.000"
    assert psu.query(":INST:NSEL?") == "2"  # APPLy CHn selects the channel
    psu.write(":APPL 2.5")  # no channel: the current one; one value is the voltage
    assert psu.query(":APPL?") == "CH2:30V/3A,2.500,1.000"
    assert psu.query(":APPL? CH3") == "CH3:5V/3A,0.000,3.000"  # power-on: 0 V, 3 A
    assert psu.query(":APPL? CH1") == "CH1:30V/3A,0.000,3.000"
    psu.write(":APPL CH3,MAX,MIN")
    assert psu.query(":APPL? CH3") == "CH3:5V/3A,5.300,0.000"
    assert errors(psu) == []
    for command in (":APPL CH1,33", ":APPL CH2,5,4"):  # out of range: -222, and nothing changes
        psu.write(command)
        assert psu.query(":SYST:ERR?").startswith("-222,")
    assert psu.query(":APPL? CH1") == "CH1:30V/3A,0.000,3.000"
    assert psu.query(":APPL? CH2") == "CH2:30V/3A,2.500,1.000"


def test_measure_forms_with_a_channel_argument(psu, clock):
    psu.write(":APPL CH1,5,3;:OUTP CH1,ON")
    assert psu.query("*OPC?") == "1"
    clock.advance(1.0)
    reply = psu.query(":MEAS:ALL? CH1")
    assert re.fullmatch(READING, reply), reply
    volts, amps, watts = (float(x) for x in reply.split(","))
    assert volts == pytest.approx(5.0, abs=0.01)
    assert 0.3 < amps < 1.5
    assert watts == pytest.approx(volts * amps, abs=0.01)
    assert float(psu.query(":MEAS? CH1")) == pytest.approx(5.0, abs=0.01)
    assert float(psu.query(":MEAS:VOLT:DC? CH1")) == pytest.approx(5.0, abs=0.01)
    assert float(psu.query(":MEAS:CURR? CH1")) == pytest.approx(amps, abs=0.01)
    assert float(psu.query(":MEAS:POWE? CH1")) == pytest.approx(watts, abs=0.05)
    for _ in range(20):  # CH2 is off: no current, no power, in every conversion; the voltage ≈ 0
        clock.advance(0.1)
        off = psu.query(":MEAS:ALL? CH2")
        assert re.fullmatch(r"-?\d+\.\d{4},0\.0000,0\.000", off), off
        assert float(off.split(",")[0]) == pytest.approx(0.0, abs=0.002)
        assert psu.query(":MEAS:CURR? CH2") == "+0.00000000E+00"
    assert psu.query(":INST:NSEL 1;:MEAS:ALL?").count(",") == 2  # no channel: the current one
    assert errors(psu) == []


@pytest.mark.parametrize(
    "command",
    [":SOUR3:VOLT 6", ":SOUR2:CURR 3.5", ":OUTP:OCP:VAL CH1,5", ":OUTP:OVP:VAL CH3,6"],
)
def test_an_out_of_range_value_leaves_222_and_the_supply_answers_on(psu, command):
    before = psu.query(":APPL? CH1,VOLT"), psu.query(":APPL? CH2,VOLT"), psu.query(":APPL? CH3,VOLT")
    psu.write(command)
    assert psu.query(":SYST:ERR?").startswith("-222,")
    assert psu.query("*IDN?").startswith("RIGOL TECHNOLOGIES,DP832,")
    assert (psu.query(":APPL? CH1,VOLT"), psu.query(":APPL? CH2,VOLT"), psu.query(":APPL? CH3,VOLT")) == before
    assert errors(psu) == []


def test_setpoints_stop_at_the_dp832s_programmable_limits_in_every_form(psu):
    """32 V / 3.2 A on CH1 and CH2, 5.3 V on CH3 (the DP832's ranges), whether set by
    ``:SOURn``, by ``:APPL`` or asked as ``MAX``: never 3 % beyond."""
    assert float(psu.query(":SOUR1:VOLT? MAX")) == pytest.approx(32.0)
    assert float(psu.query(":SOUR1:CURR? MAX")) == pytest.approx(3.2)
    assert float(psu.query(":SOUR3:VOLT? MAX")) == pytest.approx(5.3)
    psu.write(":SOUR1:VOLT 32")
    psu.write(":SOUR1:VOLT 32.9")
    psu.write(":SOUR1:CURR 3.29")
    psu.write(":SOUR3:VOLT 5.4")
    assert [e.split(",")[0] for e in errors(psu)] == ["-222"] * 3
    assert float(psu.query(":SOUR1:VOLT?")) == pytest.approx(32.0)
