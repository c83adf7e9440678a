"""The simulated DAQ970A's alarm limits, alarm queue and scan statistics through pyvisa, exact
command -> reply, as the 34970A/34972A/DAQ970A programming guides give them.

On the unpowered board of a manual-clock lab every thermocouple reads 25 +- 0.5 degC, so a
limit at 20 or 30 degC raises its alarm on every reading. Each test failed on the emulator
before these commands were served (-113, an alarm field always 0, timeouts)."""

from __future__ import annotations

import re

import pytest

from tests.integration.sim.conftest import scpi_errors as errors

pytestmark = pytest.mark.timeout(60)

EMPTY_QUEUE = "0,0,0,0,0,0,0,0,0,0"
DATE_TIME = r"\d{4},\d\d,\d\d,\d\d,\d\d,\d\d\.\d{3}"


def alarm_entry(channel: int, limit: int) -> re.Pattern:
    """``2.41286927E+01 C,2018,02,03,10,10,38.625,101,1,1``: reading with unit, date, time of
    day, channel, limit crossed (1 LO, 2 HI), alarm number."""
    return re.compile(rf"2\.\d{{8}}E\+01 C,{DATE_TIME},{channel},{limit},1")


def test_daq_alarm_limits_and_states_default_set_and_read_back(mvisa):
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101:104)")
    assert daq.query("CALC:LIM:UPP? (@101)") == "+0.00000000E+00"
    assert daq.query("CALC:LIM:LOW:STAT? (@101,102)") == "0,0"
    daq.write("CALC:LIM:LOW -0.25,(@103,113)")
    assert daq.query("CALC:LIM:LOW? (@103,113)") == "-2.50000000E-01,-2.50000000E-01"
    daq.write("CALCulate:LIMit:UPPer 45.5,(@101);:CALCulate:LIMit:UPPer:STATe ON,(@101)")
    assert daq.query("CALCulate:LIMit:UPPer? (@101,102)") == "+4.55000000E+01,+0.00000000E+00"
    assert daq.query("CALC:LIM:UPP:STAT? (@101,102)") == "1,0"
    daq.write("CALC:LIM:UPP MAX,(@102)")
    assert daq.query("CALC:LIM:UPP? (@102)") == "+1.00000000E+15"
    assert daq.query("CALC:LIM:LOW? MIN") == "-1.00000000E+15"
    daq.write("CALC:LIM:LOW:STAT ON")  # no channel list: the scan list
    assert daq.query("CALC:LIM:LOW:STAT?") == "1,1,1,1"
    assert errors(daq) == []
    daq.write("CALC:LIM:UPP 2E15,(@101)")  # out of range: no change
    assert daq.query("SYST:ERR?").startswith("-222,")
    assert daq.query("CALC:LIM:UPP? (@101)") == "+4.55000000E+01"
    daq.write("CALC:LIM:UPP:STAT ON,(@201)")  # no module in slot 2
    assert daq.query("SYST:ERR?").startswith("-241,")
    daq.write("CONF:TEMP TC,K,(@101)")  # a new configuration clears the limits, alarms off
    assert daq.query("CALC:LIM:UPP? (@101)") == "+0.00000000E+00"
    assert daq.query("CALC:LIM:UPP:STAT? (@101)") == "0"
    daq.write("CALC:LIM:UPP 10,(@101);:CALC:LIM:UPP:STAT ON,(@101);*RST")
    assert daq.query("CALC:LIM:UPP? (@101);:CALC:LIM:UPP:STAT? (@101)") == "+0.00000000E+00;0"
    assert errors(daq) == []


def test_daq_readings_carry_their_alarm_and_crossings_fill_the_alarm_queue(mvisa):
    daq = mvisa("daq")
    assert daq.query("SYST:ALAR?") == EMPTY_QUEUE
    daq.write("CONF:TEMP TC,K,(@101:104)")
    daq.write("CALC:LIM:UPP 20,(@101);:CALC:LIM:UPP:STAT ON,(@101)")  # 25 degC is above: HI
    daq.write("CALC:LIM:LOW 30,(@102);:CALC:LIM:LOW:STAT ON,(@102)")  # and below: LO
    daq.write("CALC:LIM:UPP 30,(@103);:CALC:LIM:UPP:STAT ON,(@103)")  # within
    daq.write("CALC:LIM:UPP 20,(@104)")  # above, but its alarm is off
    daq.write("FORM:READ:ALAR ON;CHAN ON")
    fields = daq.query("READ?").split(",")
    assert fields[1::3] == ["101", "102", "103", "104"]
    assert fields[2::3] == ["2", "1", "0", "0"]
    assert daq.query("FETC?").split(",")[2::3] == ["2", "1", "0", "0"]
    assert daq.query("STAT:ALAR:COND?") == "+80"  # queue not empty (16), alarm 1 latched (64)
    assert alarm_entry(101, 2).fullmatch(daq.query("SYST:ALAR?"))
    assert alarm_entry(102, 1).fullmatch(daq.query("SYSTem:ALARm?"))
    assert daq.query("SYST:ALAR?") == EMPTY_QUEUE
    assert daq.query("STAT:ALAR?") == "+12305"  # alarm 1, queue, lower and upper limit events
    assert daq.query("STAT:ALAR?") == "+0"  # reading the event register clears it
    # a crossing enters the queue once, not every reading that stays outside the limit
    daq.write("TRIG:COUN 3;:INIT")
    assert daq.query("FETC?").split(",")[2::3] == ["2", "1", "0", "0"] * 3
    assert alarm_entry(101, 2).fullmatch(daq.query("SYST:ALAR?"))
    assert alarm_entry(102, 1).fullmatch(daq.query("SYST:ALAR?"))
    assert daq.query("SYST:ALAR?") == EMPTY_QUEUE
    # *RST turns the alarms off but leaves the queue; *CLS clears it
    daq.write("INIT;*RST")
    assert daq.query("STAT:ALAR:COND?") == "+16"
    daq.write("*CLS")
    assert daq.query("SYST:ALAR?") == EMPTY_QUEUE
    assert errors(daq) == []


def test_daq_alarm_queue_keeps_the_first_twenty_alarms(mvisa):
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101);:CALC:LIM:UPP 20,(@101);:CALC:LIM:UPP:STAT ON,(@101)")
    for _ in range(21):
        daq.write("INIT")  # every scan starts afresh: its first reading crosses the limit
    assert daq.query("STAT:ALAR?") == "+8241"  # 1 + 16 + overflow 32 + upper limit 8192
    entries = [daq.query("SYST:ALAR?") for _ in range(21)]
    assert all(alarm_entry(101, 2).fullmatch(e) for e in entries[:20])
    assert entries[20] == EMPTY_QUEUE
    assert errors(daq) == []


def test_daq_scan_statistics_per_channel(mvisa):
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101,102);:TRIG:COUN 5;:INIT")
    readings = [float(x) for x in daq.query("FETC?").split(",")]
    ch101, ch102 = readings[0::2], readings[1::2]
    assert daq.query("CALC:AVER:COUN? (@101,102)") == "+5.00000000E+00,+5.00000000E+00"
    assert daq.query("CALC:AVER:COUN?") == "+5.00000000E+00,+5.00000000E+00"  # the scan list
    assert daq.query("CALC:AVER:MIN? (@101)") == f"{min(ch101):+.8E}"
    assert daq.query("CALCulate:AVERage:MAXimum? (@102)") == f"{max(ch102):+.8E}"
    assert float(daq.query("CALC:AVER:AVER? (@101)")) == pytest.approx(sum(ch101) / 5, abs=1e-6)
    assert float(daq.query("CALC:AVER:PTP? (@102)")) == pytest.approx(max(ch102) - min(ch102), abs=1e-6)
    assert re.fullmatch(f"{DATE_TIME},{DATE_TIME}", daq.query("CALC:AVER:MAX:TIME? (@101,102)"))
    assert re.fullmatch(DATE_TIME, daq.query("CALC:AVER:MIN:TIME? (@101)"))
    daq.write("CALC:AVER:CLE (@101)")
    assert daq.query("CALC:AVER:COUN?") == "+0.00000000E+00,+5.00000000E+00"
    assert daq.query("CALC:AVER:AVER? (@101)") == "+0.00000000E+00"  # no data: 0
    assert daq.query("CALC:AVER:MIN:TIME? (@101)") == "0,0,0,0,0,0"
    daq.write("INIT")  # a new scan starts the statistics afresh
    assert daq.query("CALC:AVER:COUN?") == "+5.00000000E+00,+5.00000000E+00"
    daq.write("TRIG:COUN 1")
    daq.query("READ?")  # so does READ?
    assert daq.query("CALC:AVER:COUN?") == "+1.00000000E+00,+1.00000000E+00"
    assert errors(daq) == []
    daq.write("CALC:AVER:AVER? (@103)")  # not in the scan list: no reply, an error
    assert daq.query("SYST:ERR?").startswith("-221,")
    daq.write("CALC:AVER:CLE;:ROUT:SCAN (@);:CALC:AVER:COUN?")  # empty scan list
    assert daq.query("SYST:ERR?").startswith("-221,")
    assert errors(daq) == []


def test_daq_mx_plus_b_scaling_scales_readings_alarms_and_statistics(mvisa):
    """CALCulate:SCALe (34970A/DAQ970A "Mx+B scaling"): reading = gain × measured + offset with
    the custom unit label, per channel; alarms and statistics see the scaled reading; a new
    configuration of the channel turns it off."""
    daq = mvisa("daq")
    daq.write("CONF:TEMP TC,K,(@101:102);:FORM:READ:UNIT ON")
    assert daq.query("CALC:SCAL:GAIN? (@101)") == "+1.00000000E+00"
    assert daq.query("CALC:SCAL:OFFS? (@101)") == "+0.00000000E+00"
    assert daq.query("CALC:SCAL:STAT? (@101,102)") == "0,0"
    assert daq.query("CALC:SCAL:UNIT? (@101)") == '"C"'
    plain = [float(r.split()[0]) for r in daq.query("READ?").split(",")]
    daq.write('CALC:SCAL:GAIN 2,(@101);OFFS -10,(@101);UNIT "PSI",(@101);STAT ON,(@101)')
    assert daq.query("CALC:SCAL:STAT? (@101,102)") == "1,0"
    assert daq.query("CALC:SCAL:UNIT? (@101)") == '"PSI"'
    first, second = daq.query("READ?").split(",")
    value, unit = first.split()
    assert unit == "PSI" and float(value) == pytest.approx(2 * plain[0] - 10, abs=1.5)  # ±0.5 degC noise, ×2
    assert second.split()[1] == "C" and float(second.split()[0]) == pytest.approx(plain[1], abs=1.0)
    daq.write("CALC:LIM:UPP 35,(@101);:CALC:LIM:UPP:STAT ON,(@101);:FORM:READ:ALAR ON")
    assert daq.query("READ?").split(",")[1] == "2"  # HI: ~40 PSI scaled is above 35 (~25 degC is not)
    assert daq.query("CALC:AVER:MIN? (@101)").startswith("+3")
    assert errors(daq) == []
    daq.write("CONF:TEMP TC,K,(@101)")
    assert daq.query("CALC:SCAL:STAT? (@101)") == "0"
    assert daq.query("CALC:SCAL:GAIN? (@101)") == "+1.00000000E+00"
    daq.write('CALC:SCAL:UNIT "TOOLONG",(@101)')
    assert [e.split(",")[0] for e in errors(daq)] == ["-224"]


def test_daq_relay_cycles_count_each_closing_of_a_channel(mvisa):
    daq = mvisa("daq")
    daq.write("SYST:REL:CYCL:CLE (@101:103)")
    assert daq.query("SYST:REL:CYCL? (@101,102,103)") == "+0,+0,+0"
    daq.write("CONF:TEMP TC,K,(@101,102);:TRIG:COUN 3")
    daq.query("READ?")
    assert daq.query("SYSTem:RELay:CYCLes? (@101,102,103)") == "+3,+3,+0"
    daq.write("*RST")
    assert daq.query("SYST:REL:CYCL? (@101)") == "+3"  # the module's own count outlives a reset
    assert errors(daq) == []
