"""Each simulated fault makes the flagship plan fail (limits) or error (instrument) at the
step a lab engineer would expect, with a message that names the lane / rail / sensor /
instrument — and the bench still ends safe."""

from __future__ import annotations

import json

import pytest

from labctl.sim.testing import isolated_fixture

DUT_FAULTS = [
    # fault spec,                                   exit, step that fails,  the message names
    ("hot_spot",                                      1, "under_load",  "theta"),
    ({"fault": "dead_rail", "rail": "VDD_HBM"},        1, "sequencing",  "VDD_HBM: power-good never came up"),
    ("slow_sequencing",                               1, "sequencing",  "VDD_AUX->VDD_CORE"),
    ("noisy_rail",                                    1, "ripple",      "VDD_CORE"),
    ("overtemp",                                      1, "under_load",  "reference TC_INLET: theta"),
]
BENCH_FAULTS = [
    ({"fault": "instrument_timeout", "role": "dmm", "after": 3},            2, "ripple", "instrument dmm"),
    ({"fault": "disconnect", "role": "bert", "after": 3, "persistent": True}, 2, "link_ber", "instrument bert"),
    ({"fault": "garbage_reply", "role": "daq", "after": 10, "count": -1},    2, "rails_nominal", "instrument daq"),
    ({"fault": "scpi_error", "role": "psu", "match": "VOLT"},                2, "power_on", '-221,"Settings conflict"'),
]


def _name(spec):
    return spec if isinstance(spec, str) else spec["fault"]


def run_flagship(labctl, tmp_path, fixture, dut):
    res = labctl("run", "accelerator-evt.yaml", "--fixture", str(fixture), "--dut", dut,
                 "--db", str(tmp_path / "r.db"), "--json", timeout=600)
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    started = {e["step_key"]: e["step_id"] for e in events if e["event"] == "StepStarted"}
    ended = [(started[e["step_key"]], e["outcome"], e["message"]) for e in events if e["event"] == "StepEnded"]
    return res, ended


def _assert_expected(res, ended, code, step, names):
    assert res.returncode == code, res.stderr + "\n".join(map(str, ended))
    bad = [(s, o, m) for s, o, m in ended if o in ("FAIL", "ERROR")]
    assert bad, "no step failed"
    first_step, first_outcome, first_message = bad[0]
    assert first_step == step, bad
    assert first_outcome == ("FAIL" if code == 1 else "ERROR")
    assert names in first_message, first_message
    safe = [(s, o) for s, o, _ in ended if s.startswith("safe-state.")]
    assert len(safe) == 7, safe  # every role's safe state ran and was recorded


@pytest.mark.parametrize(("spec", "code", "step", "names"), DUT_FAULTS, ids=[_name(f[0]) for f in DUT_FAULTS])
def test_dut_fault(labctl, tmp_path, spec, code, step, names):
    fixture = isolated_fixture(tmp_path, time_scale=600, duts={"SIM-FAULT-0009": {"faults": [spec]}})
    res, ended = run_flagship(labctl, tmp_path, fixture, "SIM-FAULT-0009")
    _assert_expected(res, ended, code, step, names)


@pytest.mark.parametrize(("spec", "code", "step", "names"), BENCH_FAULTS, ids=[_name(f[0]) for f in BENCH_FAULTS])
def test_instrument_fault(labctl, tmp_path, spec, code, step, names):
    fixture = isolated_fixture(tmp_path, time_scale=600, faults=[spec])
    res, ended = run_flagship(labctl, tmp_path, fixture, "SIM-GOLD-0001")
    _assert_expected(res, ended, code, step, names)
