"""Garbage replies end as ERROR with the raw reply in the message, never a false pass (issue 9,
point 9): the simulated DAQ answers the step's rail reading with an overload marker, NaN, a
truncated line, an extra line or junk."""

from __future__ import annotations

import json

import pytest

from labctl.sim.testing import isolated_fixture

# reply kind -> what the step's message must show of it
KINDS = {
    "overload": "'+9.90000000E+37'",
    "nan": "'NAN'",
    "truncated": "'+7.",  # '+7.50…E-' without its last characters
    "extra_line": "extra reply line(s)",
    "junk": "garbage",
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_garbage_reply_is_an_error_showing_it(labctl, tmp_path, kind):
    # after the pre-flight (*IDN?, SYST:ERR?) every DAQ reply is garbage
    spec = {"fault": "garbage_reply", "role": "daq", "after": 3, "count": -1, "reply": kind}
    fixture = isolated_fixture(tmp_path, time_scale=600, faults=[spec])
    res = labctl("run", "smoke.yaml", "--fixture", str(fixture), "--db", str(tmp_path / "r.db"), "--json",
                 timeout=300)
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    started = {e["step_key"]: e["step_id"] for e in events if e["event"] == "StepStarted"}
    ended = {started[e["step_key"]]: (e["outcome"], e["message"]) for e in events if e["event"] == "StepEnded"}
    outcome, message = ended["core_rail"]
    assert outcome == "ERROR", ended
    assert KINDS[kind] in message, message
    assert "instrument daq" in message
    assert ended["safe-state.daq"][0] == "ERROR"  # its *OPC? read-back is garbage too: not confirmed
    assert res.returncode == 2


CONSOLE_PLAN = """\
name: console-garbage
requires: [psu, dut]
setup:
  - id: power_on
    check: power.on
    args: {voltage: 5 V, current_limit: 5 A}
steps:
  - id: m_dut
    check: measure
    args: {role: dut, property: die_temp, unit: degC}
    limits: {min: 20 degC, max: 40 degC}
  - id: m_vcore
    check: measure
    args: {role: dut, property: VDD_CORE_V, unit: V}
    limits: {nominal: 0.75 V, tol: 3 %}
"""


def test_a_console_reply_sent_twice_is_an_error_not_a_shift_of_every_later_answer(labctl, tmp_path):
    # the board's console answers labctl's first `id` twice: the next command must not take
    # the second copy for its own answer (and every later one the answer before it)
    spec = {"fault": "garbage_reply", "role": "dut", "count": 1, "reply": "extra_line"}
    fixture = isolated_fixture(tmp_path, time_scale=600, faults=[spec])
    plan = tmp_path / "console.yaml"
    plan.write_text(CONSOLE_PLAN)
    res = labctl("run", str(plan), "--fixture", str(fixture), "--db", str(tmp_path / "r.db"), "--json",
                 "--no-preflight", timeout=300)
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    started = {e["step_key"]: e["step_id"] for e in events if e["event"] == "StepStarted"}
    ended = {started[e["step_key"]]: (e["outcome"], e["message"]) for e in events if e["event"] == "StepEnded"}
    outcome, message = ended["m_dut"]
    assert outcome == "ERROR" and "were waiting before 'sensors' was sent" in message and "serial" in message, ended
    assert ended["m_vcore"][0] == "PASS", ended  # the stale copy is gone: answers are in step again
    values = [e for e in events if e["event"] == "MeasurementRecorded" and e["name"] == "value"]
    assert [v["value"] for v in values] == [pytest.approx(0.75, abs=0.03)]
    assert ended["safe-state.dut"][0] == "PASS", ended
    assert res.returncode == 2
