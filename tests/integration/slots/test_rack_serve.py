"""`labctl sim serve` of a rack, steered the way a technician would: which board is in which
slot, swapping one, a per-slot instrument fault, a fault on one slot's board."""

from __future__ import annotations

import json

from slots_support import rack, scpi, slot_supplies

from labctl.sim.testing import served_lab


def test_a_served_rack_shows_and_swaps_its_boards(labctl, tmp_path):
    fx = rack(tmp_path, time_scale=60)
    with served_lab(fx) as proc:
        res = labctl("sim", "state", "--fixture", str(fx))
        assert res.returncode == 0, res.stderr
        assert "slot 3    DUT SIM-MARG-0003" in res.stdout
        res = labctl("sim", "dut", "SIM-MARG-0003", "--slot", "1", "--fixture", str(fx))
        assert res.returncode == 0, res.stderr
        res = labctl("sim", "state", "--slot", "1", "--fixture", str(fx))
        assert res.stdout.startswith("DUT SIM-MARG-0003 (marginal_lane)")
        res = labctl("sim", "state", "--slot", "9", "--fixture", str(fx))
        assert res.returncode == 2 and "no slot '9'" in res.stderr  # as every refused control request
        # each slot's supply answers at its own address
        assert {scpi(r, "*IDN?").split(",")[2] for r in slot_supplies(fx).values()} == {
            "MY59000001", "MY59000002", "MY59000003", "MY59000004"}
        # a fault on one slot's instrument: the others still answer
        res = labctl("sim", "inject", "instrument_timeout", "role=2/psu", "--fixture", str(fx))
        assert res.returncode == 0, res.stderr
        assert scpi(slot_supplies(fx)["1"], "OUTP? (@1)") == "0"
        proc.terminate()
        out, _err = proc.communicate(timeout=15)
    assert "4 boards in one chamber" in out
    assert "1/psu" in out and "keysight-e36312a" in out


def test_a_board_fault_goes_into_the_slot_named_and_a_rack_never_picks_one(labctl, tmp_path):
    fx = rack(tmp_path, time_scale=60)
    with served_lab(fx):
        res = labctl("sim", "inject", "dead_rail", "rail=VDD_IO", "--fixture", str(fx))
        assert res.returncode == 2, res.stdout + res.stderr  # it went to slot 1's board, unasked
        assert "fault dead_rail acts on a board, and this lab is a rack of 4" in res.stderr
        assert "--slot ID (slots: 1, 2, 3, 4)" in res.stderr
        res = labctl("sim", "inject", "--slot", "2", "dead_rail", "rail=VDD_IO", "--fixture", str(fx))
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("DUT SIM-GOLD-0002 (dead_rail)") and "slot 2's" in res.stdout
        state = json.loads(labctl("sim", "state", "--json", "--slot", "1", "--fixture", str(fx)).stdout)
        assert state["dut_faults"] == []  # the other boards are as they were
        res = labctl("sim", "inject", "--slot", "3", "instrument_timeout", "role=psu", "--fixture", str(fx))
        assert res.returncode == 0 and "3/psu: instrument_timeout" in res.stdout, res.stdout + res.stderr
        res = labctl("sim", "inject", "--slot", "9", "overtemp", "--fixture", str(fx))
        assert res.returncode == 2 and "no slot '9'" in res.stderr
        # each slot's line says what was injected into it: its board's faults, its instruments'
        res = labctl("sim", "state", "--fixture", str(fx))
        lines = {ln.split()[1]: ln for ln in res.stdout.splitlines() if ln.startswith("  slot ")}
        assert "DUT SIM-GOLD-0002 (dead_rail)" in lines["2"] and "instrument faults" not in lines["2"]
        assert "DUT SIM-MARG-0003 (marginal_lane)" in lines["3"] and lines["3"].endswith("instrument faults: psu: instrument_timeout")
        assert "(golden)" in lines["1"] and "fault" not in lines["1"]
        slots = json.loads(labctl("sim", "state", "--json", "--fixture", str(fx)).stdout)["slots"]
        assert (slots["2"]["dut_faults"], slots["2"]["faults"]) == (["dead_rail"], {})
        assert (slots["3"]["dut_faults"], slots["3"]["faults"]) == (["marginal_lane"], {"psu": ["instrument_timeout"]})
