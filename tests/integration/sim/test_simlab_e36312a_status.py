"""The simulated E36312A's over-current protection delay and questionable status registers, as
a client written from the E36300 programming guide uses them: exact command/reply pairs over
pyvisa-py on the lab's TCP socket."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on, scpi_errors

pytestmark = pytest.mark.timeout(60)


def replies(res, expected: list[tuple[str, str]]) -> None:
    """Each query of ``expected``, in order, answers exactly its reply."""
    assert [(query, res.query(query)) for query, _ in expected] == expected


def test_ocp_delay_and_its_start_are_kept_per_output_with_their_limits(mvisa):
    psu = mvisa("psu")
    replies(psu, [("CURR:PROT:DEL? (@1)", "+5.00000000E-02"), ("CURR:PROT:DEL:STAR? (@1)", "SCH")])
    psu.write("CURR:PROT:DEL 0.1,(@1:2)")
    psu.write("SOUR:CURR:PROT:DEL:TIME 20 MS,(@3)")
    psu.write("CURR:PROT:DEL:STAR CCTR,(@1)")
    replies(psu, [
        ("CURR:PROT:DEL? (@1:3)", "+1.00000000E-01,+1.00000000E-01,+2.00000000E-02"),
        ("CURR:PROT:DEL? MAX,(@1)", "+2.55000000E-01"),
        ("CURR:PROT:DEL? MIN,(@1)", "+0.00000000E+00"),
        ("CURRENT:PROTECTION:DELAY:START? (@1,2)", "CCTR,SCH"),
    ])
    psu.write("CURR:PROT:DEL 0.3,(@1)")  # beyond 0.255 s: refused, the setting stays
    psu.write("CURR:PROT:DEL:STAR SOON,(@1)")
    errors = scpi_errors(psu)
    assert [e.split(",")[0] for e in errors] == ["-222", "-224"]
    replies(psu, [("CURR:PROT:DEL? (@1)", "+1.00000000E-01")])
    psu.write("*RST")
    replies(psu, [("CURR:PROT:DEL? (@1)", "+5.00000000E-02"), ("CURR:PROT:DEL:STAR? (@1)", "SCH")])


def test_ovp_level_query_answers_its_limits_and_output_state_takes_no_parameter(mvisa):
    """`VOLT:PROT? MIN|MAX` answer the limits (they had answered the setting); `OUTP? MAX` is -108."""
    psu = mvisa("psu")
    psu.write("VOLT:PROT 5.5,(@1)")
    replies(psu, [("VOLT:PROT? (@1)", "+5.50000000E+00"), ("VOLT:PROT? MIN,(@1)", "+0.00000000E+00"),
                  ("VOLT:PROT? MAX,(@1:2)", "+6.60000000E+00,+2.75000000E+01")])
    psu.write("OUTP? MAX,(@1)")
    assert [e.split(",")[0] for e in scpi_errors(psu)] == ["-108"]
    psu.write("*RST")


def test_an_ovp_trip_sets_the_questionable_ov_bit_latches_its_event_and_the_status_byte(mvisa):
    psu = mvisa("psu")
    replies(psu, [("STAT:QUES:COND? (@1)", "0"), ("STAT:QUES? (@1)", "0"), ("STAT:QUES:ENAB? (@1)", "0")])
    psu.write("STAT:QUES:ENAB 3,(@1)")
    power_on(psu)
    replies(psu, [("STAT:QUES:ENAB? (@1,2)", "3,0"), ("*STB?", "0")])
    psu.write("VOLT:PROT 4.5,(@1)")  # below the 5 V setpoint: OVP trips, the output goes off
    replies(psu, [
        ("OUTP? (@1)", "0"),
        ("STAT:QUES:COND? (@1:3)", "1,0,0"),  # condition: disabled by OVP, while the trip stands
        ("*STB?", "8"),  # QUES summary: an enabled event
        ("STAT:QUES? (@1)", "1"),
        ("STAT:QUESTIONABLE:EVENT? (@1)", "0"),  # reading cleared the event, not the condition
        ("STAT:QUES:COND? (@1)", "1"),
        ("*STB?", "0"),
    ])
    psu.write("VOLT:PROT 6,(@1);:OUTP:PROT:CLE (@1)")
    replies(psu, [("STAT:QUES:COND? (@1)", "0"), ("STAT:QUES? (@1)", "0")])  # a falling edge latches nothing


def test_an_ocp_trip_sets_the_oc_bit_and_cls_clears_the_event(mvisa, mconsole, clock):
    psu = mvisa("psu")
    power_on(psu, clock=clock)
    psu.write("INST:NSEL 1")  # without a channel list the status commands address the selected output
    psu.write("CURR:PROT:DEL 0,(@1);CURR:PROT:STAT ON,(@1);CURR 2,(@1)")  # no delay: trips at once
    assert psu.query("*OPC?") == "1"
    mconsole.cmd("load stress 100")  # the board draws more than 2 A: constant current, OCP trips
    replies(psu, [("CURR:PROT:TRIP? (@1)", "1"), ("STAT:QUES:COND?", "2")])
    psu.write("*CLS")
    replies(psu, [("STAT:QUES?", "0"), ("STAT:QUES:COND?", "2")])


def test_transition_filters_choose_which_edges_latch(mvisa):
    psu = mvisa("psu")
    psu.write("STAT:QUES:PTR 0,(@1);STAT:QUES:NTR 1,(@1)")
    replies(psu, [("STAT:QUES:PTR? (@1)", "0"), ("STAT:QUES:NTR? (@1)", "1")])
    power_on(psu)
    psu.write("VOLT:PROT 4.5,(@1)")
    replies(psu, [("STAT:QUES:COND? (@1)", "1"), ("STAT:QUES? (@1)", "0")])  # rising edge filtered out
    psu.write("VOLT:PROT 6,(@1);:OUTP:PROT:CLE (@1)")
    replies(psu, [("STAT:QUES:COND? (@1)", "0"), ("STAT:QUES? (@1)", "1")])  # the falling edge latched
    psu.write("STAT:PRES")
    replies(psu, [("STAT:QUES:PTR? (@1)", "32767"), ("STAT:QUES:NTR? (@1)", "0"), ("STAT:QUES:ENAB? (@1)", "0")])


@pytest.fixture
def ch2_into_10_ohm(fixture_path, clock, rm, request):
    """The supply with a 10 ohm resistor on CH2, on a manual clock."""
    from labctl.fixture import load_fixture
    from labctl.sim.lab import SimulatedLab

    fixture = load_fixture(fixture_path)
    fixture.roles["psu"].options["ch2_load_ohms"] = 10.0
    lab = SimulatedLab(fixture, clock=clock)
    lab.__enter__()
    request.addfinalizer(lambda: lab.__exit__(None, None, None))
    psu = rm.open_resource(lab.addresses["psu"], read_termination="\n", write_termination="\n", timeout=2000)
    request.addfinalizer(psu.close)
    psu.lab = lab  # the bench, to change the resistor on CH2 by hand
    return psu


def test_ocp_waits_its_delay_from_the_last_settings_change(ch2_into_10_ohm, clock):
    """SCHange (the default, 50 ms): 5 V into 10 ohm at a 0.2 A limit sits in constant current;
    OCP trips only once 50 ms have passed since the output went on. (Each setting is waited
    for with *OPC? before the clock moves.)"""
    psu = ch2_into_10_ohm
    psu.write("VOLT 5,(@2);CURR 0.2,(@2);CURR:PROT:STAT ON,(@2);:OUTP ON,(@2)")
    assert psu.query("*OPC?") == "1"
    clock.advance(0.04)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "0"), ("OUTP? (@2)", "1")])
    assert float(psu.query("MEAS:CURR? (@2)")) == pytest.approx(0.2, abs=0.005)  # regulating in CC meanwhile
    clock.advance(0.02)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "1"), ("OUTP? (@2)", "0")])


def test_a_settings_change_restarts_the_delay_and_cctrans_counts_from_entering_cc(ch2_into_10_ohm, clock):
    psu = ch2_into_10_ohm
    psu.write("VOLT 1,(@2);CURR 0.2,(@2);CURR:PROT:DEL 0.1,(@2);CURR:PROT:STAT ON,(@2);:OUTP ON,(@2)")
    assert psu.query("*OPC?") == "1"
    clock.advance(0.2)  # 0.1 A into 10 ohm: constant voltage, nothing to trip
    psu.write("VOLT 5,(@2)")  # a settings change into constant current: the 100 ms start now
    assert psu.query("*OPC?") == "1"
    clock.advance(0.08)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "0")])
    clock.advance(0.03)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "1")])
    # CCTRans here enters constant current by a setting: the delay counts from there too
    psu.write("OUTP:PROT:CLE (@2);VOLT 1,(@2);CURR:PROT:DEL:STAR CCTR,(@2);:OUTP ON,(@2)")
    assert psu.query("*OPC?") == "1"
    clock.advance(0.5)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "0")])
    psu.write("CURR 0.05,(@2)")  # into CC now
    assert psu.query("*OPC?") == "1"
    clock.advance(0.09)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "0")])
    clock.advance(0.02)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "1")])


def _swap_resistor(psu, ohms: float) -> None:
    """Another resistor on CH2: the output enters constant current with no settings change."""
    bench = psu.lab.bench
    with bench.lock:
        bench.update()
        bench.psu_loads[2] = ohms
        bench.touch()


@pytest.mark.parametrize("start, trips_at_once", [("SCH", True), ("CCTR", False)])
def test_entering_cc_long_after_the_last_setting_trips_at_once_only_with_sch(ch2_into_10_ohm, clock, start,
                                                                              trips_at_once):
    """SCH: the delay ran out 100 ms after the output went on, so a load step into constant
    current later trips at once. CCTR: the delay starts at that entry into constant current."""
    psu = ch2_into_10_ohm
    psu.write(f"VOLT 1,(@2);CURR 0.2,(@2);CURR:PROT:DEL 0.1,(@2);CURR:PROT:DEL:STAR {start},(@2);"
              "CURR:PROT:STAT ON,(@2);:OUTP ON,(@2)")
    assert psu.query("*OPC?") == "1"
    clock.advance(1.0)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "0")])  # 0.1 A into 10 ohm: constant voltage
    _swap_resistor(psu, 2.0)  # 0.5 A wanted, 0.2 A allowed
    clock.advance(0.01)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "1" if trips_at_once else "0")])
    clock.advance(0.1)
    replies(psu, [("CURR:PROT:TRIP? (@2)", "1")])
