"""The SCPI server core through pyvisa-py over a real socket: parsing, error queue, ESR."""

from __future__ import annotations

import socket

import pytest

from tests.integration.sim.conftest import scpi_errors

pytestmark = pytest.mark.timeout(60)


def errors(res) -> list[str]:
    return scpi_errors(res, empty=("+0",))  # these emulators answer +0,"No error"


def test_idn_of_every_scpi_emulator(lab, visa):
    idn = {role: visa(role).query("*IDN?") for role in ("psu", "load", "dmm", "daq", "bert")}
    assert idn["psu"] == "Keysight Technologies,E36312A,MY59002391,2.1.0-1.0.4-1.12"
    assert idn["dmm"].startswith("Keysight Technologies,34465A,MY59008389,")
    assert idn["daq"].startswith("Keysight Technologies,DAQ970A,MY58012345,")
    assert idn["load"].startswith("Keysight Technologies,EL34143A,MY61001234,")
    assert idn["bert"] == "ANRITSU,MP1900A,6201234567,1.00.00"


def test_short_long_and_mixed_case_forms_and_optional_nodes(visa):
    psu = visa("psu")
    psu.write("SOURce:VOLTage:LEVel:IMMediate:AMPLitude 1.25,(@2)")
    assert float(psu.query("VOLT? (@2)")) == pytest.approx(1.25)
    psu.write("volt 2.5,(@2)")
    assert float(psu.query("source:voltage:level? (@2)")) == pytest.approx(2.5)
    assert psu.query("VOLT? (@2)") == "+2.50000000E+00"  # NR3
    psu.write("VOLTA 3,(@2)")  # neither the short nor the long form
    assert errors(psu) == ['-113,"Undefined header"']


def test_a_channel_range_of_a_hundred_million_is_refused_at_once_and_the_lab_answers_on(visa):
    psu, dmm = visa("psu"), visa("dmm")
    psu.write("VOLT 1,(@1:100000000)")
    assert [e.split(",")[0] for e in errors(psu)] == ["-222"]
    assert psu.query("VOLT? (@1)").startswith("+")
    assert dmm.query("*IDN?").startswith("Keysight Technologies,34465A")


def test_compound_commands_with_relative_and_root_paths(visa):
    psu = visa("psu")
    psu.write("SOUR:VOLT 1.5,(@3);CURR 0.2,(@3);:OUTP ON,(@3)")
    assert psu.query("VOLT? (@3);CURR? (@3);:OUTP? (@3)") == "+1.50000000E+00;+2.00000000E-01;1"
    assert errors(psu) == []


def test_channel_lists_ranges_and_min_max_def(visa):
    psu = visa("psu")
    psu.write("VOLT 1,(@1:3)")
    assert psu.query("VOLT? (@1:3)").split(",") == ["+1.00000000E+00"] * 3
    psu.write("VOLT MAX,(@1)")
    psu.write("VOLT MAX,(@2,3)")
    # the programmable limits, 3 % beyond the 6 V / 5 A and 25 V / 1 A ratings (the driver profile's ranges)
    assert psu.query("VOLT? (@1,2,3)") == "+6.18000000E+00,+2.57500000E+01,+2.57500000E+01"
    psu.write("VOLT MIN,(@1)")
    assert float(psu.query("VOLT? (@1)")) == 0.0
    assert float(psu.query("CURR? MAX,(@1)")) == pytest.approx(5.15)
    assert float(psu.query("CURR? MIN,(@2)")) == 0.0
    psu.write("CURR 0,(@2);VOLT 6.19,(@1)")  # a current limit of 0 is a setting; 6.19 V is beyond CH1
    assert float(psu.query("CURR? (@2)")) == 0.0
    assert [e.split(",")[0] for e in errors(psu)] == ["-222"]


def test_bad_commands_fill_the_queue_in_order_and_set_esr(visa):
    psu = visa("psu")
    psu.query("*ESR?")  # clear power-on bit
    psu.write("FOO:BAR 1")
    psu.write("VOLT 99,(@1)")
    psu.write("VOLT abc,(@1)")
    esr = int(psu.query("*ESR?"))
    assert esr & 32 and esr & 16  # CME and EXE
    assert int(psu.query("*STB?")) & 4  # error queue not empty
    errs = errors(psu)
    assert [e.split(",")[0] for e in errs] == ["-113", "-222", "-104"]
    assert psu.query("SYST:ERR?") == '+0,"No error"'
    assert int(psu.query("*ESR?")) == 0


def test_error_queue_is_20_deep_and_overflow_replaces_the_newest(visa):
    dmm = visa("dmm")
    for _ in range(25):
        dmm.write("NOT:A:COMMAND")
    errs = errors(dmm)
    assert len(errs) == 20
    assert errs[:19] == ['-113,"Undefined header"'] * 19
    assert errs[19] == '-350,"Queue overflow"'


def test_cls_clears_the_queue(visa):
    daq = visa("daq")
    daq.write("XYZ")
    daq.write("*CLS")
    assert daq.query("SYST:ERR?") == '+0,"No error"'


def test_common_commands(visa):
    load = visa("load")
    assert load.query("*OPC?") == "1"
    assert load.query("*TST?") == "+0"
    load.write("*ESE 36")
    assert load.query("*ESE?") == "36"
    load.write("*RST;*WAI")
    assert load.query("INP?") == "0"
    load.write("*OPC")
    assert int(load.query("*ESR?")) & 1


def test_commands_answer_nothing_and_crlf_is_tolerated(lab):
    host, port = lab.addresses["psu"].split("::")[1:3]
    with socket.create_connection((host, int(port)), timeout=2) as s:
        s.sendall(b"VOLT 1,(@1)\r\n*CLS\r\n*IDN?\r\n")
        data = b""
        while not data.endswith(b"\n"):
            data += s.recv(4096)
        assert data == b"Keysight Technologies,E36312A,MY59002391,2.1.0-1.0.4-1.12\n"
        s.sendall(b"VOLT? (@1)\n")
        assert s.recv(4096) == b"+1.00000000E+00\n"


def test_two_clients_share_one_instrument(rm, lab):
    a = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
    b = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
    try:
        a.write("VOLT 4.2,(@1)")
        assert a.query("*OPC?") == "1"  # connections are independent: sync before asking on b
        assert float(b.query("VOLT? (@1)")) == pytest.approx(4.2)
    finally:
        a.close()
        b.close()


def test_infinity_obeys_a_parameters_limits_and_never_hangs_the_lab(visa):
    """``INF`` is a number (9.9E37) to SCPI: a setting with a maximum refuses it (-222) as it
    refuses any number above it; a trigger count of INF once hung every instrument of the lab."""
    psu, daq = visa("psu"), visa("daq")
    psu.write("VOLT 1,(@1)")
    psu.write("VOLT INF,(@1)")
    assert psu.query("VOLT? (@1)") == "+1.00000000E+00"
    assert [e.split(",")[0] for e in errors(psu)] == ["-222"]
    daq.write("TRIG:COUN INF")
    assert [e.split(",")[0] for e in errors(daq)] == ["-222"]
    assert float(daq.query("TRIG:COUN?")) == 1.0
    daq.timeout = 5000
    assert daq.query("*OPC?") == "1"  # the lab answers on
    assert psu.query("*OPC?") == "1"


def test_a_header_read_on_its_own_after_a_semicolon_acts_on_its_own_setting(visa):
    """``CURR:RANG 6.12;VOLT 4`` has no ``CURR:VOLT``: the second header is read from the root
    (as the simulated lab admits), and sets the voltage level, not the current named before it."""
    load, dmm = visa("load"), visa("dmm")
    load.write("CURR 1.5")
    load.write("CURR:RANG 6.12;VOLT 4")
    assert float(load.query("CURR?")) == pytest.approx(1.5)
    assert float(load.query("VOLT?")) == pytest.approx(4.0)
    dmm.write("SENS:VOLT:DC:NPLC 1;CURR:DC:NPLC 100")
    assert float(dmm.query("SENS:VOLT:DC:NPLC?")) == pytest.approx(1.0)
    assert float(dmm.query("SENS:CURR:DC:NPLC?")) == pytest.approx(100.0)
    assert errors(load) == [] and errors(dmm) == []


def test_an_error_message_splits_at_one_comma_into_code_and_quoted_text(visa):
    """Clients split ``SYST:ERR?`` at its comma (python-ivi: ``code, msg = reply.split(',')``): a
    detail's commas and double quotes must not reach the message."""
    daq = visa("daq")
    daq.write('TRIG:SOUR "BUS"')  # a string where a choice goes
    (entry,) = errors(daq)
    code, message = entry.split(",")
    assert code == "-224"
    assert message.startswith('"Illegal parameter value') and message.endswith('"') and message.count('"') == 2


def test_clearing_protection_leaves_an_output_that_never_tripped_on(visa):
    psu = visa("psu")
    psu.write("VOLT 1,(@2);OUTP ON,(@2)")
    psu.write("OUTP:PROT:CLE (@2)")
    assert psu.query("OUTP? (@2)") == "1"
    psu.write("VOLT:PROT 0.5,(@2)")  # below the setpoint: trips
    assert psu.query("VOLT:PROT:TRIP? (@2)") == "1"
    psu.write("VOLT 0.4,(@2);:OUTP:PROT:CLE (@2)")
    assert psu.query("VOLT:PROT:TRIP? (@2)") == "0"
    assert psu.query("OUTP? (@2)") == "0"  # a tripped output stays off until switched on again
