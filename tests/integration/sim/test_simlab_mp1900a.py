"""The simulated MP1900A answers the commands that clients written for the Anritsu MP1800A/MP1900A
send, to the string: the unit/module/interface address (``:UENTry:ID``, ``:MODule:ID``,
``:INTerface:ID``), the gating unit, and the result strings of ``:CALCulate:DATA:EALarm?``."""

from __future__ import annotations

import pytest

from tests.integration.sim.conftest import power_on
from tests.integration.sim.conftest import scpi_errors as errors

pytestmark = pytest.mark.timeout(60)




def test_unit_and_interface_selection_as_clients_send_it(mvisa):
    bert = mvisa("bert")
    bert.write(":UENTry:ID 1;:MODule:ID 3;:INTerface:ID 1")
    assert [bert.query(q) for q in (":UENTry:ID?", ":MODule:ID?", ":INTerface:ID?")] == ["1", "3", "1"]
    assert errors(bert) == []
    bert.write(":UENT:ID 2")  # one mainframe
    bert.write(":INT:ID 2")  # one ED interface per simulated module
    assert [e.split(",")[0] for e in errors(bert)] == ["-222", "-222"]


def test_gating_unit_is_time(mvisa):
    bert = mvisa("bert")
    bert.write(":SENSe:MEASure:EALarm:UNIT TIME")
    assert bert.query(":SENSe:MEASure:EALarm:UNIT?") == "TIME"
    assert errors(bert) == []
    bert.write(":SENS:MEAS:EAL:UNIT ERR")  # error-count gating is not simulated
    assert [e.split(",")[0] for e in errors(bert)] == ["-224"]
    bert.write(":SENS:MEAS:EAL:PER 1,23,59,59")
    assert bert.query(":SENS:MEAS:EAL:PER?") == "1,23,59,59" and errors(bert) == []
    bert.write(":SENS:MEAS:EAL:PER 1,25,0,0")  # hours are 0-23 (it had become 2,1,0,0)
    assert [e.split(",")[0] for e in errors(bert)] == ["-222"]
    assert bert.query(":SENS:MEAS:EAL:PER?") == "1,23,59,59"


def test_results_are_quoted_strings(mvisa, clock):
    bert = mvisa("bert")
    bert.write(":MOD:ID 2;:SENS:MEAS:EAL:PER 0,0,0,20;:SENS:MEAS:STAR")  # the board is unpowered
    assert bert.query("*OPC?") == "1"
    clock.advance(30)
    replies = {item: bert.query(f':CALCulate:DATA:EALarm? "{item}"') for item in (
        "CURRent:EC:TOTal", "CURRent:CC:TOTal", "CURRent:ER:TOTal", "CURRent:AINTerval:PSLoss",
        "CURRent:AINTerval:CLOSs")}
    assert replies == {"CURRent:EC:TOTal": '"0"', "CURRent:CC:TOTal": '"0"', "CURRent:ER:TOTal": '"-------"',
                       "CURRent:AINTerval:PSLoss": '"20"', "CURRent:AINTerval:CLOSs": '"20"'}
    assert int(bert.query(':CALC:DATA:EAL? "CURR:EC:TOT"')[1:-1]) == 0  # as PTCS' MP2100A client reads it
    # each node of an item in either form, as the instrument's other headers
    assert bert.query(':CALC:DATA:EAL? "CURR:EC:TOTAL"') == bert.query(':CALC:DATA:EAL? "current:ec:tot"') == '"0"'
    assert bert.query(':CALC:DATA:EAL? "CURR:AINTERVAL:PSL"') == '"20"'
    assert errors(bert) == []


def test_ber_is_no_data_dashes_until_a_bit_is_compared_never_scpis_nan(mvisa, mconsole, clock):
    # clients of the real ED test the error rate for "---" (or replace "-------") before converting
    # it; none expects 9.91E37, SCPI's not-a-number, which the Anritsu string results do not use
    psu, bert = mvisa("psu"), mvisa("bert")
    er = ':MOD:ID 1;:CALC:DATA:EAL? "CURRent:ER:TOTal"'
    assert bert.query(er) == '"-------"'  # power-on: no measurement yet
    power_on(psu, clock=clock)
    clock.advance(5)  # the link trains
    bert.write(":MOD:ID 1;:SENS:MEAS:EAL:PER 0,0,0,10;:SENS:MEAS:STAR")
    assert bert.query(er) == '"-------"'  # started, nothing compared yet
    clock.advance(12)
    assert bert.query(":MOD:ID 1;:SENS:MEAS:EAL:STAT?") == "0"  # the gating period is over
    assert bert.query(':MOD:ID 1;:CALC:DATA:EAL? "CURRent:EC:TOTal"') == '"0"'
    assert bert.query(er) == '"0.0000E+00"'  # bits compared, none in error: a rate, kept after the stop
    assert errors(bert) == []
