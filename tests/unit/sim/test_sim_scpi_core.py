"""The SCPI core in one process: parser, command tree, values, error queue, common commands."""

from __future__ import annotations

import pytest

from labctl.sim.scpi import Call, ScpiError, ScpiInstrument, scpi
from labctl.sim.scpi.errors import ErrorQueue, format_error
from labctl.sim.scpi.parser import parse_message
from labctl.sim.scpi.tree import compile_pattern
from labctl.sim.scpi.values import (
    definite_block,
    nr3,
    parse_bool,
    parse_channel_list,
    parse_choice,
    parse_number,
)


class Toy(ScpiInstrument):
    vendor, model, firmware, default_serial = "ACME", "T1", "1.0", "SN1"

    def reset(self) -> None:
        self.volts = {1: 0.0, 2: 0.0}
        self.outputs: list[int] = []

    @scpi("[SOURce:]VOLTage[:LEVel][:IMMediate][:AMPLitude]")
    def volt(self, call: Call) -> None:
        for ch in call.channels or [1]:
            self.volts[ch] = call.number(0, minimum=0, maximum=6, default=1)

    @scpi("[SOURce:]VOLTage[:LEVel][:IMMediate][:AMPLitude]?")
    def volt_q(self, call: Call) -> str:
        return ",".join(nr3(self.volts[ch]) for ch in call.channels or [1])

    @scpi("OUTPut#[:STATe]")
    def outp(self, call: Call) -> None:
        self.outputs.append(call.suffixes[0])

    @scpi("SENSe:MODE?")
    def mode_q(self, call: Call) -> str:
        return "X"

    @scpi("[SOURce#:]LEVel?")
    def level_q(self, call: Call) -> str:
        return "selected" if call.given[0] is None else str(call.given[0])


@pytest.fixture
def toy() -> Toy:
    return Toy()


def drain(inst: ScpiInstrument) -> list[str]:
    out = []
    while (e := inst.process("SYST:ERR?")) != '+0,"No error"':
        out.append(e)
    return out


def test_parser_splits_units_params_and_paths():
    units = parse_message('SOUR:VOLT 1.5,(@1,2);CURR 2;:OUTP ON;*OPC?;CALC:DATA? "A,B;C"')
    assert [u.header for u in units] == ["SOUR:VOLT", "CURR", "OUTP", "*OPC?", "CALC:DATA?"]
    assert units[0].params == ["1.5", "(@1,2)"]
    assert [n.name for n in units[1].relative_to] == ["SOUR"]  # relative to the previous parent
    assert units[2].absolute and units[2].relative_to == []
    assert units[4].params == ['"A,B;C"']


def test_parser_suffixes_and_syntax_errors():
    (u,) = parse_message("OUTP2:STAT 1")
    assert u.nodes[0].name == "OUTP" and u.nodes[0].suffix == 2
    for bad in ("VOLT 1,,2", "VOLT::X 1", 'CALC "open', "VOLT 1;;CURR 2", ";VOLT 1", ";"):
        with pytest.raises(ScpiError):
            parse_message(bad)
    # one ';' before the terminator is taken, as instruments do (it was -102 and no reply)
    assert [u.raw for u in parse_message("VOLT? (@1);")] == ["VOLT? (@1)"]
    assert [u.raw for u in parse_message("VOLT 1;CURR 2; ")] == ["VOLT 1", "CURR 2"]


def test_pattern_matching_short_long_optional_only():
    p = compile_pattern("[SOURce:]VOLTage[:LEVel]?")
    assert p.query
    for header in ("VOLT", "VOLTAGE", "SOUR:VOLT", "SOURCE:VOLTAGE:LEVEL", "VOLT:LEV"):
        assert p.match(parse_message(header + "?")[0].nodes) == [], header
    for header in ("VOLTA", "VOL", "LEV", "SOUR:LEV"):
        assert p.match(parse_message(header + "?")[0].nodes) is None, header


def test_a_suffix_the_header_leaves_out_is_none_in_given_and_1_in_suffixes():
    p = compile_pattern("[SOURce#:]VOLTage[:LEVel]?")
    cases = {"VOLT": [None], "SOUR:VOLT": [None], "SOUR1:VOLT": [1], "SOURCE2:VOLTAGE:LEVEL": [2], "SOUR3:VOLT:LEV": [3]}
    for header, given in cases.items():
        (unit,) = parse_message(header + "?")
        assert p.match(unit.nodes) == given, header
        call = Call(unit, given)
        assert call.given == given
        assert call.suffixes == [1 if n is None else n for n in given]
    assert p.match(parse_message("SOUR2:CURR?")[0].nodes) is None


def test_dispatch_passes_a_header_suffix_or_its_absence(toy):
    toy.process("OUTP ON;:OUTP1 ON;:OUTPUT3:STAT ON")
    assert toy.outputs == [1, 1, 3]  # ``OUTP`` is ``OUTP1`` for a handler that reads suffixes
    assert toy.process("SOUR:LEV?;:SOUR2:LEV?;:LEV?") == "selected;2;selected"
    assert drain(toy) == []


def test_a_suffix_of_another_unit_than_the_headers_is_an_invalid_suffix(toy):
    """``VOLT 5 A`` is -131 (SCPI-99), as ``VOLT 5 XYZ`` is; ``VOLT 500 mV`` is 0.5 V."""
    toy.process("VOLT 500 mV,(@1)")
    assert toy.volts[1] == pytest.approx(0.5) and drain(toy) == []
    for bad in ("VOLT 5 A,(@1)", "SOUR:VOLT:LEV 4 OHM,(@1)", "VOLT 2 XYZ,(@1)"):
        toy.process(bad)
        assert [e.split(",")[0] for e in drain(toy)] == ["-131"], bad
    assert toy.volts[1] == pytest.approx(0.5)  # nothing was set
    with pytest.raises(ScpiError) as info:
        parse_number("5 A", unit="V")
    assert info.value.code == -131


def test_values():
    assert nr3(26.192) == "+2.61920000E+01"
    assert parse_number("1.5") == 1.5
    assert parse_number("500 mV") == pytest.approx(0.5)
    assert parse_number("2MA") == pytest.approx(0.002)
    assert parse_number("MAX", maximum=6.0) == 6.0
    assert parse_number("def", default=1.0) == 1.0
    with pytest.raises(ScpiError) as info:
        parse_number("7", maximum=6)
    assert info.value.code == -222
    assert parse_bool("ON") and not parse_bool("0")
    assert parse_choice("curr", ["CURRent", "VOLTage"]) == "CURR"
    assert parse_choice("VOLTAGE", ["CURRent", "VOLTage"]) == "VOLT"
    assert parse_channel_list("(@101:103,110)") == [101, 102, 103, 110]
    assert parse_channel_list("(@)") == []
    assert len(parse_channel_list("(@1:1000)")) == 1000
    for hostile in ("(@1:1001)", "(@1:100000000)", "(@100000000:1)", "(@1:600,1:600)"):
        with pytest.raises(ScpiError) as info:  # refused before a list of that length is made
            parse_channel_list(hostile)
        assert info.value.code == -222
    assert definite_block("(@101,102,103)") == "#214(@101,102,103)"


def test_error_queue_fifo_overflow_and_format():
    q = ErrorQueue()
    for i in range(22):
        q.push(-100 - (i % 3))
    entries = q.entries()
    assert len(entries) == 20 and entries[-1] == (-350, "Queue overflow")
    assert q.pop_formatted() == '-100,"Command error"'
    assert format_error(0, "No error") == '+0,"No error"'
    # a client's garbage quoted in a detail is not echoed raw: printable ASCII, 255 characters at most
    garbled = format_error(-113, "Undefined header; VOLT\x00\x1b[2J\xff" + "x" * 10_000)
    assert garbled.startswith('-113,"Undefined header; VOLT??[2J?xxx') and len(garbled) == len('-113,""') + 255


def test_dispatch_compound_relative_paths_and_replies(toy):
    assert toy.process("SOUR:VOLT 1.5,(@1);VOLT? (@1)") == "+1.50000000E+00"
    assert toy.process("volt 2,(@2);:VOLT? (@1:2);*OPC?") == "+1.50000000E+00,+2.00000000E+00;1"
    toy.process("OUTP3 ON;OUTP ON")
    assert toy.outputs == [3, 1]
    assert drain(toy) == []


def test_errors_stop_the_message_and_set_esr(toy):
    toy.process("*ESR?")
    assert toy.process("VOLT 9;VOLT 3") is None  # -222 is an execution error: the rest runs
    assert toy.process("VOLT?") == "+3.00000000E+00"
    assert toy.process("BOGUS;VOLT 4") is None  # -113 is a command error: the rest is dropped
    assert toy.process("VOLT?") == "+3.00000000E+00"
    assert toy.process("SENS:MODE 1") is None  # known as a query only
    assert toy.process("SENS2:MODE?") is None  # SENSe takes no suffix
    assert [e.split(",")[0] for e in drain(toy)] == ["-222", "-113", "-113", "-114"]
    assert int(toy.process("*ESR?")) == 32 | 16


def test_common_commands(toy):
    assert toy.process("*IDN?") == "ACME,T1,SN1,1.0"
    assert int(toy.process("*ESR?")) & 128  # power-on
    toy.process("*SRE 4;*ESE 32")
    toy.process("NOPE")
    assert int(toy.process("*STB?")) == 4 | 32 | 64
    toy.process("*CLS")
    assert toy.process("*STB?") == "0"
    toy.process("VOLT 5;*RST")
    assert toy.process("VOLT?") == "+0.00000000E+00"


def test_scpi_error_rule_counts_down(toy):
    toy.error_rules.append({"match": "VOLT", "code": -221, "count": 1})
    toy.process("VOLT 2")
    toy.process("VOLT 3")
    assert toy.process("VOLT?") == "+3.00000000E+00"
    assert drain(toy) == ['-221,"Settings conflict"']


def test_a_line_sent_again_behaves_as_the_first_time(toy):
    """Each program message is parsed and resolved once, then only executed: the same line again
    executes again, and its errors queue again in the same order."""
    for _ in range(3):
        assert toy.process("VOLT 2,(@1);BOGUS;VOLT 4,(@1)") is None  # VOLT 2 runs, then -113 drops the rest
        assert toy.process("VOLT? (@1);VOLT? (@2)") == "+2.00000000E+00;+0.00000000E+00"
        toy.process("OUTP2 ON")
        assert toy.process("VOLT 9") is None  # -222 each time
    assert toy.outputs == [2, 2, 2]
    assert [e.split(",")[0] for e in drain(toy)] == ["-113", "-222"] * 3
    assert toy.process("VOLT? (@0x)") is None  # a bad channel list is an error each time, not a remembered one
    assert toy.process("VOLT? (@0x)") is None
    assert [e.split(",")[0] for e in drain(toy)] == ["-104", "-104"]


def test_a_fault_rule_acts_on_a_line_already_seen(toy):
    assert toy.process("VOLT 2;VOLT?") == "+2.00000000E+00"
    toy.error_rules.append({"match": "VOLT", "code": -221, "count": 1})
    assert toy.process("VOLT 3;VOLT?") == "+2.00000000E+00"  # the setting refused once
    assert toy.process("VOLT 3;VOLT?") == "+3.00000000E+00"
    assert drain(toy) == ['-221,"Settings conflict"']


def test_remembered_lines_are_bounded(toy):
    from labctl.sim.scpi.instrument import MAX_PLANS

    for n in range(MAX_PLANS + 10):
        toy.process(f"VOLT {n % 6}.{n:04d}")
    assert len(toy._plans) <= MAX_PLANS
    assert toy.process("VOLT?") == f"{float(f'{(MAX_PLANS + 9) % 6}.{MAX_PLANS + 9:04d}'):+.8E}"


def test_date_time_display_text_and_the_scpi_version_every_instrument_answers(toy):
    """Commands a client written from a manual sends to any of them (they were -113)."""
    import re

    assert re.fullmatch(r"\d{4},\d{2},\d{2}", toy.process("SYST:DATE?"))
    assert re.fullmatch(r"\d{2},\d{2},\d{2}", toy.process("SYSTem:TIME?"))
    assert toy.process('DISP:TEXT "RUNNING"') is None and toy.process("DISPlay:WINDow:TEXT:CLEar") is None
    assert toy.process("SYST:VERS?") == "1999.0"
    assert drain(toy) == []
