"""The simulated MP1900A answers the commands that clients written for the Anritsu MP1800A/MP1900A
send, to the string: the unit/module/interface address (``:UENTry:ID``, ``:MODule:ID``,
``:INTerface:ID``), the gating unit, and the result strings of ``:CALCulate:DATA:EALarm?``."""

from __future__ import annotations

import pytest

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


def test_results_are_quoted_strings(mvisa, clock):
    bert = mvisa("bert")
    bert.write(":MOD:ID 2;:SENS:MEAS:EAL:PER 0,0,0,20;:SENS:MEAS:STAR")  # the board is unpowered
    assert bert.query("*OPC?") == "1"
    clock.advance(30)
    replies = {item: bert.query(f':CALCulate:DATA:EALarm? "{item}"') for item in (
        "CURRent:EC:TOTal", "CURRent:CC:TOTal", "CURRent:ER:TOTal", "CURRent:AINTerval:PSLoss",
        "CURRent:AINTerval:CLOSs")}
    assert replies == {"CURRent:EC:TOTal": '"0"', "CURRent:CC:TOTal": '"0"', "CURRent:ER:TOTal": '"9.9100E+37"',
                       "CURRent:AINTerval:PSLoss": '"20"', "CURRent:AINTerval:CLOSs": '"20"'}
    assert int(bert.query(':CALC:DATA:EAL? "CURR:EC:TOT"')[1:-1]) == 0  # as PTCS' MP2100A client reads it
    # each node of an item in either form, as the instrument's other headers
    assert bert.query(':CALC:DATA:EAL? "CURR:EC:TOTAL"') == bert.query(':CALC:DATA:EAL? "current:ec:tot"') == '"0"'
    assert bert.query(':CALC:DATA:EAL? "CURR:AINTERVAL:PSL"') == '"20"'
    assert errors(bert) == []
