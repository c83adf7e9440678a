"""The simulated MP1900A answers the commands that clients written for the Anritsu MP1800A/MP1900A
send, to the string: the unit/module/interface address (``:UENTry:ID``, ``:MODule:ID``,
``:INTerface:ID``), the gating unit, and the result strings of ``:CALCulate:DATA:EALarm?``."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


def errors(bert) -> list[str]:
    out = []
    while not (reply := bert.query("SYST:ERR?")).startswith(("0,", "+0,")):
        out.append(reply)
    return out


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
