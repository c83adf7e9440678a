"""Every driver profile against an exact expected conversation (no hardware, no sockets).

Each test pins the strings a real instrument of that model receives, so a profile edit that
changes what goes on the wire fails here first.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from labctl.errors import InstrumentReplyError
from labctl.instruments.driver import RangeError
from labctl.instruments.profile import available_profiles
from labctl.instruments.testing import expected_protocol
from labctl.instruments.transports.protocol import ProtocolMismatch


def test_keysight_e36312a_power_supply():
    pairs = [
        ("VOLT 5,(@1)", None),
        ("CURR 2.5,(@1)", None),
        # protection first, from the setpoints: OVP 5 V x 1.1 + 0.2 V, OCP on at the limit with
        # no delay (the E36300's default 50 ms would let an inrush sit at the limit)
        ("VOLT? (@1)", "+5.00000000E+00"),
        ("VOLT:PROT 5.7,(@1)", None),
        ("VOLT:PROT? (@1)", "+5.70000000E+00"),
        ("CURR:PROT:DEL 0,(@1)", None),
        ("CURR:PROT:DEL? (@1)", "+0.00000000E+00"),
        ("CURR:PROT:STAT 1,(@1)", None),
        ("CURR:PROT:STAT? (@1)", "1"),
        ("CURR? (@1)", "+2.50000000E+00"),
        ("OUTP 1,(@1)", None),
        ("VOLT? (@1)", "+5.00000000E+00"),
        ("CURR? (@1)", "+2.50000000E+00"),
        ("OUTP? (@1)", "1"),
        ("MEAS:VOLT? (@1)", "+4.99870000E+00"),
        ("MEAS:CURR? (@1)", "+1.01200000E+00"),
        ("VOLT:PROT:TRIP? (@1)", "0"),
        ("CURR:PROT:TRIP? (@1)", "0"),
        ("OUTP 0,(@1)", None),
        ("OUTP 0,(@2)", None),
        ("OUTP 0,(@3)", None),
        ("OUTP? (@1)", "0"),  # every output read back off
        ("OUTP? (@2)", "0"),
        ("OUTP? (@3)", "0"),
        ("SYST:ERR?", '-222,"Data out of range"'),
        ("SYST:ERR?", '+0,"No error"'),
    ]
    with expected_protocol("keysight-e36312a", pairs) as psu:
        assert psu.channels == ["1", "2", "3"]
        psu.set_voltage("1", 5.0)
        psu.set_current_limit("(@1)", 2.5)
        psu.set_output(1, True)
        assert psu.voltage("1") == 5.0
        assert psu.current_limit("1") == 2.5
        assert psu.output("1") is True
        assert psu.measure_voltage("1") == pytest.approx(4.9987)
        assert psu.measure_current("1") == pytest.approx(1.012)
        assert psu.protection_tripped("1") is False
        assert psu.protection("1") == {"ovp_level": 5.7, "ocp_delay": 0.0, "ocp_enabled": True, "current_limit": 2.5}
        assert psu.safe_state() == ["OUTP 0,(@1)", "OUTP 0,(@2)", "OUTP 0,(@3)", "output = OFF on channels 1,2,3 (read back)"]
        errors = psu.drain_errors()
        assert [(e.code, e.message) for e in errors] == [(-222, "Data out of range")]


def test_e36312a_range_is_per_channel_and_nothing_is_sent():
    with expected_protocol("keysight-e36312a", [("VOLT 24,(@2)", None)]) as psu:
        with pytest.raises(RangeError, match=r"voltage 7 V is outside 0..6.18 V on channel 1"):
            psu.set_voltage("1", 7.0)
        psu.set_voltage("2", 24.0)  # CH2 goes to 25 V


def test_keysight_e3631a_selects_output_and_sends_remote_at_open():
    pairs = [
        ("SYST:REM", None),
        ("INST:SEL P25V;:VOLT 12", None),
        ("INST:SEL N25V;:VOLT -5", None),
        ("INST:SEL P6V;:CURR 1.5", None),
        ("OUTP 1", None),
        ("MEAS:VOLT? P25V", "+1.20010000E+01"),
        ("MEAS:CURR? P6V", "+1.00000000E-01"),
        ("INST:SEL P6V;:VOLT?", "+5.00000000E+00"),
        ("OUTP?", "1"),
        ("OUTP 0", None),
        ("OUTP?", "0"),
    ]
    with expected_protocol("keysight-e3631a", pairs) as psu:
        psu.set_voltage("P25V", 12)
        psu.set_voltage("n25v", -5)
        psu.set_current_limit("P6V", 1.5)
        psu.set_output("P6V", True)
        assert psu.measure_voltage("P25V") == pytest.approx(12.001)
        assert psu.measure_current("P6V") == pytest.approx(0.1)
        assert psu.voltage("P6V") == 5.0
        assert psu.output("P25V") is True
        assert psu.safe_state() == ["OUTP 0", "output = OFF (read back)"]
        with pytest.raises(RangeError):
            psu.set_voltage("N25V", 5)


def test_rigol_dp832_power_supply():
    pairs = [
        (":INST:NSEL 3;:SOUR:VOLT:LEV:IMM:AMPL 3.3000", None),
        (":INST:NSEL 3;:SOUR:CURR:LEV:IMM:AMPL 1.0000", None),
        # switching on arms the DP800's own protection first: OVP level and state, OCP level
        # at the current limit, then its state
        (":INST:NSEL 3;:SOUR:VOLT:LEV:IMM:AMPL?", "3.3000"),
        (":INST:NSEL 3;:SOUR:VOLT:PROT:LEV 3.830", None),
        (":INST:NSEL 3;:SOUR:VOLT:PROT:LEV?", "3.830"),
        (":INST:NSEL 3;:SOUR:VOLT:PROT:STAT ON", None),
        (":INST:NSEL 3;:SOUR:VOLT:PROT:STAT?", "ON"),
        (":INST:NSEL 3;:SOUR:CURR:LEV:IMM:AMPL?", "1.0000"),
        (":INST:NSEL 3;:SOUR:CURR:PROT:LEV 1.000", None),
        (":INST:NSEL 3;:SOUR:CURR:PROT:STAT ON", None),
        (":INST:NSEL 3;:SOUR:CURR:PROT:STAT?", "ON"),
        (":INST:NSEL 3;:SOUR:CURR:LEV:IMM:AMPL?", "1.0000"),
        (":INST:NSEL 3;:OUTP:STAT ON", None),
        (":INST:NSEL 3;:OUTP:STAT?", "ON"),
        (":INST:NSEL 3;:MEAS:VOLT:DC?", "3.2990"),
        (":INST:NSEL 3;:MEAS:CURR:DC?", "0.5010"),
        (":OUTP:OVP:QUES? CH3", "NO"),
        (":OUTP:OCP:QUES? CH3", "NO"),
        (":SYST:ERR?", '0,"No error"'),
        (":INST:NSEL 1;:OUTP:STAT OFF", None),
        (":INST:NSEL 2;:OUTP:STAT OFF", None),
        (":INST:NSEL 3;:OUTP:STAT OFF", None),
        (":INST:NSEL 1;:OUTP:STAT?", "OFF"),
        (":INST:NSEL 2;:OUTP:STAT?", "OFF"),
        (":INST:NSEL 3;:OUTP:STAT?", "OFF"),
    ]
    with expected_protocol("rigol-dp832", pairs) as psu:
        psu.set_voltage("3", 3.3)
        psu.set_current_limit("3", 1.0)
        psu.set_output("3", True)
        assert psu.protection("3") == {"ovp_level": 3.83, "ocp_enabled": True, "current_limit": 1.0}
        assert psu.output("3") is True
        assert psu.measure_voltage("3") == pytest.approx(3.299)
        assert psu.measure_current("3") == pytest.approx(0.501)
        assert psu.protection_tripped("3") is False
        assert psu.drain_errors() == []
        psu.safe_state()
        with pytest.raises(RangeError):
            psu.set_voltage("3", 6)  # CH3 is the 5 V output


def test_keysight_34465a_multimeter():
    pairs = [
        ("MEAS:VOLT:DC? DEF,DEF", "+7.50123000E-01"),
        ("MEAS:VOLT:AC? DEF,DEF", "+1.02000000E-03"),
        ("MEAS:CURR:DC? DEF,DEF", "+1.00000000E-06"),
        ("MEAS:RES? DEF,DEF", "+9.90000000E+37"),
        ("SENS:VOLT:DC:RANG 10", None),
        ("SENS:VOLT:DC:RANG:AUTO ON", None),
        ("SENS:VOLT:DC:NPLC 10", None),
        ("SAMP:COUN 3", None),
        ("READ?", "+7.5E-01,+7.51E-01,+7.49E-01"),
        ("ABOR", None),
        ("*OPC?", "1"),
    ]
    with expected_protocol("keysight-34465a", pairs) as dmm:
        assert dmm.measure() == pytest.approx(0.750123)
        assert dmm.measure("ac_voltage") == pytest.approx(1.02e-3)
        assert dmm.measure("dc_current") == pytest.approx(1e-6)
        with pytest.raises(InstrumentReplyError, match="overload"):
            dmm.measure("resistance")
        dmm.set_range("dc_voltage", 10)
        dmm.set_range("dc_voltage", None)
        dmm.set_nplc(10)
        dmm.set_sample_count(3)
        assert dmm.read() == pytest.approx([0.75, 0.751, 0.749])
        assert dmm.safe_state() == ["ABOR", "operation_complete = ON (read back)"]


def test_keysight_34461a_extends_34465a():
    pairs = [
        ("*IDN?", "Keysight Technologies,34461A,MY53200001,A.02.14-02.40-02.14-00.49-01-01"),
        ("MEAS:VOLT:DC? DEF,DEF", "+1.20000000E+00"),
    ]
    with expected_protocol("keysight-34461a", pairs) as dmm:
        ident = dmm.driver.identify()
        assert dmm.driver.identity_matches(ident)
        assert ident.serial == "MY53200001"
        assert dmm.measure() == 1.2


def test_keysight_daq970a_scanner():
    pairs = [
        ("CONF:TEMP TC,J,(@101,102)", None),
        ("MEAS:TEMP? TC,J,(@101)", "+2.34500000E+01"),
        ("MEAS:TEMP? TC,J,(@101,102)", "+2.34500000E+01,+4.51000000E+01"),
        ("MEAS:VOLT:DC? AUTO,DEF,(@111)", "+7.50200000E-01"),
        ("MEAS:VOLT:DC? AUTO,DEF,(@111,151)", "+7.50200000E-01,+9.01000000E-01"),
        ("MEAS:TEMP? TC,J,(@105)", "+9.90000000E+37"),
        ("ROUT:SCAN?", "#214(@101,102,103)"),
        ("ABOR", None),
        ("*OPC?", "1"),
    ]
    with expected_protocol("keysight-daq970a", pairs) as daq:
        daq.configure_thermocouple(["(@101)", "102"], "J")
        assert daq.read_temperature("(@101)") == 23.45
        # a scanner reads its list ascending, each channel once: asked so, the readings are its channels'
        assert daq.scan_temperatures(["102", "101"]) == {"101": 23.45, "102": 45.1}
        assert daq.read_voltage("111") == pytest.approx(0.7502)
        assert daq.scan_voltages(["151", "111", "151"]) == pytest.approx({"111": 0.7502, "151": 0.901})  # one scan
        with pytest.raises(InstrumentReplyError, match="overload"):
            daq.read_temperature("105")  # open thermocouple
        assert daq.driver.get("scan_list") == "(@101,102,103)"
        daq.safe_state()


def test_keysight_el34143a_load():
    pairs = [
        ("MODE CURR", None),
        ("MODE?", "CURR"),
        ("CURR 2", None),
        ("RES 10", None),
        ("INP 1", None),
        ("INP?", "1"),
        ("MEAS:VOLT?", "+3.28000000E+00"),
        ("MEAS:CURR?", "+2.00000000E+00"),
        ("MEAS:POW?", "+6.56000000E+00"),
        ("INP 0", None),
        ("INP?", "0"),
    ]
    with expected_protocol("keysight-el34143a", pairs) as load:
        load.set_mode("cc")
        load.set_level(2.0)  # asks the present mode first
        load.set_level(10, "CR")
        load.set_input(True)
        assert load.input() is True
        assert load.measure_voltage() == 3.28
        assert load.measure_current() == 2.0
        assert load.measure_power() == 6.56
        assert load.safe_state() == ["INP 0", "input = OFF (read back)"]
        with pytest.raises(RangeError):
            load.set_level(100, "CC")


def test_intest_ats545_chamber():
    pairs = [
        ("%RM", None),  # remote mode at open
        ("SETN 0", None),
        ("SETP 85.0", None),
        ("RAMP 10.0", None),
        ("WNDW 1.0", None),
        ("SOAK 60", None),
        ("HEAD 1", None),
        ("FLOW 1", None),
        ("TEMP?", "84.7"),
        ("TECR?", "1"),
        ("TEMP?", "84.6"),
        ("SETP?", "85.0"),
        ("TECR?", "2"),
        ("SETD?", "85.0"),
        ("TMPD?", "86.1"),
        ("EROR?", "0"),
        ("*ESR?", "160"),  # PON (ignored) + CME
        ("EROR?", "8"),
        ("SETN 0", None),
        ("SETP 25.0", None),
        ("SETP?", "25.0"),
    ]
    with expected_protocol("intest-ats545", pairs) as chamber:
        chamber.set_setpoint(85)
        chamber.set_ramp_rate(10)
        chamber.set_window(1.0)
        chamber.set_soak(60)
        chamber.start()
        assert chamber.temperature() == 84.7
        assert chamber.at_temperature() is True
        status = chamber.status()
        assert status == {"temperature": 84.6, "setpoint": 85.0, "at_temperature": False,
                          "dynamic_setpoint": 85.0, "dut_temperature": 86.1, "error_word": 0}
        errors = chamber.drain_errors()
        assert [e.message for e in errors] == ["command error (unknown mnemonic or bad number)", "low flow"]
        assert chamber.safe_state() == ["SETN 0", "SETP 25.0", "setpoint = 25 (read back)"]


def test_ats545_safe_state_uses_the_fixture_ambient():
    with expected_protocol("intest-ats545", [("%RM", None), ("SETN 0", None), ("SETP 22.5", None), ("SETP?", "22.5")],
                           options={"ambient": 22.5}) as chamber:
        assert chamber.ambient == 22.5
        chamber.safe_state()


def test_anritsu_mp1900a_link_tester():
    pairs = [
        (":MOD:ID 1;:SENS:PATT:TYPE PRBS;:SENS:PATT:PRBS:LENG 31", None),
        (":MOD:ID 1;:SENS:BITR 3.200000E+10", None),
        (":MOD:ID 2;:SENS:PATT:TYPE PRBS;:SENS:PATT:PRBS:LENG 31", None),
        (":MOD:ID 2;:SENS:BITR 3.200000E+10", None),
        (":MOD:ID 1;:SENS:MEAS:EAL:MODE SING;:SENS:MEAS:EAL:PER 0,0,2,30", None),
        (":MOD:ID 2;:SENS:MEAS:EAL:MODE SING;:SENS:MEAS:EAL:PER 0,0,2,30", None),
        (":SENS:MEAS:ALL:STAR", None),
        (":MOD:ID 1;:SENS:MEAS:EAL:STAT?", "0"),
        (":MOD:ID 2;:SENS:MEAS:EAL:STAT?", "1"),
        (':MOD:ID 2;:CALC:DATA:EAL? "CURRent:EC:TOTal"', "3"),
        (':MOD:ID 2;:CALC:DATA:EAL? "CURRent:CC:TOTal"', "1920000000000"),
        (':MOD:ID 2;:CALC:DATA:EAL? "CURRent:AINTerval:PSLoss"', "0"),
        (':MOD:ID 2;:CALC:DATA:EYE? "HEIGht"', "+1.00500000E+02"),
        (':MOD:ID 2;:CALC:DATA:EYE? "WIDTh"', "+5.50000000E-01"),
        (':MOD:ID 1;:CALC:DATA:EAL? "CURRent:ER:TOTal"', '"-------"'),  # no bit compared: no data
        (":SENS:MEAS:ALL:STOP", None),
        (":SENS:MEAS:ALL:STOP", None),
        *[(f":MOD:ID {lane};:SENS:MEAS:EAL:STAT?", "0") for lane in range(1, 9)],
    ]
    with expected_protocol("anritsu-mp1900a", pairs) as bert:
        assert len(bert.lanes) == 8
        bert.configure("PRBS31", rate_gbps=32, lanes=["1", "2"])
        bert.set_gating(150, lanes=["1", "2"])
        bert.start()
        assert bert.running() is True  # lane 2 still measuring
        r = bert.results("2")
        assert (r.errors, r.bits, r.sync_loss, r.lane) == (3, 1920000000000, False, "2")
        assert r.ber == pytest.approx(3 / 1.92e12)
        assert bert.eye("2") == {"height": 100.5, "width": 0.55}
        assert math.isnan(bert.driver.get("ber", "1"))  # the ED's "no data" dashes
        bert.stop()
        bert.safe_state()


def test_accel_console():
    pairs = [
        ("id", "serial SIM-GOLD-0001"), (None, "board ACCEL-SIM-X1"), (None, "rev B"), (None, "OK"),
        ("sensors", "die_temp 45.2 degC"), (None, "VDD_CORE_V 0.7502 V"), (None, "throttle 0 bool"), (None, "OK"),
        ("power-good", "VDD_AUX 1.52 ms"), (None, "VDD_CORE 4.60 ms"), (None, "VDD_HBM never"), (None, "OK"),
        ("link status", "link speed 32.0 GT/s width x8 ltssm L0"),
        (None, "lane 1 speed 32.0 GT/s width x8 ltssm L0"),
        (None, "lane 2 speed 0.0 GT/s width x0 ltssm DETECT_QUIET"), (None, "OK"),
        ("prbs start 31", "OK"),
        ("prbs count", "lane 1 bits 192000000000 errors 0"), (None, "lane 2 bits 192000000000 errors 12"), (None, "OK"),
        ("load stress 40", "OK"),
        ("load", "load 40 %"), (None, "OK"),
        ("perf", "ops 123456789012 count"), (None, "throughput 45.6 TOPS"), (None, "OK"),
        ("prbs stop", "OK"),
        ("prbs status", "prbs stopped"), (None, "OK"),
        ("load idle", "OK"),
        ("load", "load 0 %"), (None, "OK"),
    ]
    with expected_protocol("accel-console", pairs) as dut:
        assert dut.identify() == {"serial": "SIM-GOLD-0001", "board": "ACCEL-SIM-X1", "rev": "B"}
        assert dut.sensors() == {"die_temp": 45.2, "VDD_CORE_V": 0.7502, "throttle": 0.0}
        assert dut.power_good() == {"VDD_AUX": True, "VDD_CORE": True, "VDD_HBM": False}
        link = dut.link_status()
        assert (link["speed_gts"], link["width"], link["ltssm"]) == (32.0, 8, "L0")
        assert link["lanes"]["2"]["ltssm"] == "DETECT_QUIET"
        dut.prbs_start("PRBS31")
        counters = dut.prbs_counters()
        assert counters["2"].errors == 12 and counters["2"].bits == 192_000_000_000
        assert counters["1"].ber == 0.0
        dut.set_load(40)
        assert dut.load() == 40.0
        assert dut.perf() == {"ops": 123456789012.0, "throughput": 45.6}
        assert dut.safe_state() == ["prbs stop", "prbs_state = stopped (read back)", "load idle", "load = 0 (read back)"]


def test_console_err_line_raises_with_the_message():
    from labctl.instruments.driver import InstrumentCommandError

    pairs = [("load stress 100", "ERR percent must be 0..100"), ("bogus", "ERR unknown command 'bogus' (try help)")]
    with expected_protocol("accel-console", pairs) as dut:
        with pytest.raises(InstrumentCommandError, match="percent must be 0..100"):
            dut.set_load(100)
        with pytest.raises(InstrumentCommandError, match="unknown command 'bogus'"):
            dut.send("bogus")


def test_console_prbs_counters_with_no_bits_give_nan_ber():
    pairs = [("prbs count", "lane 1 bits 0 errors 0"), (None, "OK")]
    with expected_protocol("accel-console", pairs) as dut:
        assert math.isnan(dut.prbs_counters()["1"].ber)


def test_a_wrong_command_fails_the_protocol_test():
    with pytest.raises(ProtocolMismatch, match="expected 'VOLT 5,\\(@1\\)', got 'VOLT 5,\\(@2\\)'"):
        with expected_protocol("keysight-e36312a", [("VOLT 5,(@1)", None)]) as psu:
            psu.set_voltage("2", 5)


def test_unused_pairs_fail_the_protocol_test():
    with pytest.raises(ProtocolMismatch, match="never used"):
        with expected_protocol("keysight-e36312a", [("VOLT 5,(@1)", None), ("OUTP 1,(@1)", None)]) as psu:
            psu.set_voltage("1", 5)


def test_every_shipped_profile_has_a_protocol_test():
    source = Path(__file__).read_text(encoding="utf-8")
    covered = set(re.findall(r'expected_protocol\(\s*"([\w-]+)"', source))
    missing = set(available_profiles()) - covered
    assert not missing, f"profiles without a protocol test: {sorted(missing)}"


def test_keysight_e36313a_extends_e36312a_with_wider_current_ranges():
    pairs = [("CURR 8,(@1)", None), ("CURR 2,(@3)", None), ("OUTP 0,(@1)", None), ("OUTP 0,(@2)", None),
             ("OUTP 0,(@3)", None), ("OUTP? (@1)", "0"), ("OUTP? (@2)", "0"), ("OUTP? (@3)", "0")]
    with expected_protocol("keysight-e36313a", pairs) as psu:
        psu.set_current_limit("1", 8)  # beyond the E36312A's 5 A
        psu.set_current_limit("3", 2)
        with pytest.raises(RangeError):
            psu.set_current_limit("2", 3)
        psu.safe_state()


OFF_WRITES = [("OUTP 0,(@1)", None), ("OUTP 0,(@2)", None), ("OUTP 0,(@3)", None)]


def test_a_safe_state_read_back_showing_an_output_on_is_a_wrong_state():
    from labctl.instruments.driver import SafeStateUnconfirmed

    pairs = [*OFF_WRITES, ("OUTP? (@1)", "0"), ("OUTP? (@2)", "1"), ("OUTP? (@3)", "0")]
    with expected_protocol("keysight-e36312a", pairs) as psu:
        with pytest.raises(SafeStateUnconfirmed, match=r"channel 2 output reads ON, expected OFF") as err:
            psu.safe_state()
    assert err.value.wrong is True


def test_a_safe_state_read_back_of_garbage_cannot_confirm_and_shows_the_reply():
    from labctl.instruments.driver import SafeStateUnconfirmed

    pairs = [*OFF_WRITES, ("OUTP? (@1)", "0"), ("OUTP? (@2)", "9.9E37junk"), ("OUTP? (@3)", "0")]
    with expected_protocol("keysight-e36312a", pairs) as psu:
        with pytest.raises(SafeStateUnconfirmed, match=r"channel 2 output could not be read back .*9.9E37junk") as err:
            psu.safe_state()
    assert err.value.wrong is False


def test_keysight_34972a_extends_daq970a():
    pairs = [
        ("*IDN?", "Agilent Technologies,34972A,MY49012345,1.16-1.12-02-02"),
        ("MEAS:TEMP? TC,K,(@201)", "+2.51000000E+01"),
    ]
    with expected_protocol("keysight-34972a", pairs) as daq:
        assert daq.driver.identity_matches(daq.driver.identify())
        assert daq.read_temperature("201") == 25.1


def test_console_reply_that_never_ends_is_a_timeout():
    from labctl.errors import InstrumentTimeout
    from labctl.instruments.profile import load_profile

    prof = load_profile("accel-console").model_copy(deep=True)
    prof.transport.reply_budget = 1e-9
    with pytest.raises(InstrumentTimeout, match="reply did not end"):
        with expected_protocol(prof, [("help", "id  board identity"), (None, "fw  firmware")]) as dut:
            dut.send("help")


def test_safe_state_tries_every_channel_even_after_a_failure():
    from labctl.instruments.driver import SafeStateUnconfirmed

    pairs = [("OUTP 0,(@1)", None), ("OUTP 0,(@2)", TimeoutError), ("OUTP 0,(@3)", None),
             ("OUTP? (@1)", "0"), ("OUTP? (@2)", "1"), ("OUTP? (@3)", "0")]
    with expected_protocol("keysight-e36312a", pairs) as psu:
        with pytest.raises(SafeStateUnconfirmed, match=r"channel 2 output reads ON, expected OFF; "
                                                      r"'OUTP 0,\(@2\)' failed: no answer") as info:
            psu.safe_state()
        assert "OUTP 0,(@3)" in info.value.done, "channel 3 was still switched off"


def test_a_failed_safe_state_command_whose_state_reads_back_right_is_confirmed():
    pairs = [("OUTP 0,(@1)", None), ("OUTP 0,(@2)", TimeoutError), ("OUTP 0,(@3)", None),
             ("OUTP? (@1)", "0"), ("OUTP? (@2)", "0"), ("OUTP? (@3)", "0")]
    with expected_protocol("keysight-e36312a", pairs) as psu:
        done = psu.safe_state()
    assert "but the read-back confirms the state" in " ".join(done)


def test_console_reply_without_end_line_is_an_error_naming_the_count():
    from labctl.errors import InstrumentTimeout

    pairs = [("load", "load 40 %"), (None, TimeoutError)]
    with expected_protocol("accel-console", pairs) as dut:
        with pytest.raises(InstrumentTimeout):
            dut.load()
    many = [("id", "serial SIM-GOLD-0001")] + [(None, "more")] * 199
    with expected_protocol("accel-console", many) as dut:
        dut.driver.transport.reconnect_attempts = 0
        with pytest.raises(InstrumentReplyError, match="no end line after 200 lines"):
            dut.identify()
