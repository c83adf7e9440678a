"""The simulated Keysight instruments answer their programming guides' queries as the real
ones do, through pyvisa, exact command -> reply: what a client written from the guide sends.

Each test here failed on the emulator before its fix (a silent wrong answer or a timeout)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


def errors(res) -> list[str]:
    out = []
    while not (reply := res.query("SYST:ERR?")).startswith(("0,", "+0,")):
        out.append(reply)
    return out


def test_load_level_and_range_queries_with_min_max_answer_the_limits(mvisa):
    """``CURR? MAX`` is the highest programmable current, not the setting (it answered the
    setting, 0 after *RST, whatever MIN|MAX asked)."""
    load = mvisa("load")
    load.write("CURR 2")
    assert load.query("CURR?") == "+2.00000000E+00"
    assert load.query("CURR? MAX") == "+6.12000000E+01"
    assert load.query("CURR? MIN") == "+0.00000000E+00"
    assert load.query("VOLT? MAX") == "+1.53000000E+02"
    assert load.query("POW? MAX") == "+3.57000000E+02"
    assert load.query("SOUR:CURR:LEV:IMM:AMPL? MAXimum") == "+6.12000000E+01"
    assert load.query("CURR:RANG? MIN") == "+6.12000000E-01"
    assert load.query("CURR:RANG? MAX") == "+6.12000000E+01"
    assert load.query("CURR?") == "+2.00000000E+00"  # the setting is untouched
    assert errors(load) == []
    load.write("CURR? 5")  # a number is no MIN|MAX: no reply, an error
    assert load.query("SYST:ERR?").startswith("-224,")

