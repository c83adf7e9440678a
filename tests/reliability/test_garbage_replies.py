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
