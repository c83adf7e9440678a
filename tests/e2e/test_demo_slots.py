"""`labctl demo --slots N`: the flagship on N boards of the simulated rack at once."""

from __future__ import annotations

from labctl.sim.testing import isolated_fixture


def test_demo_on_two_slots(labctl, tmp_path):
    fx = isolated_fixture(tmp_path, "sim-rack4.yaml")
    res = labctl("demo", "--slots", "2", "--fixture", str(fx), "--time-scale", "600", "--db", str(tmp_path / "r.db"),
                 timeout=240)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "on 2 slot(s) of the simulated rack sim-rack4" in res.stdout
    assert "2 slot(s) on station sim-rack4: 2 passed" in res.stdout
    assert "shared steps (run once for every slot): setup/chamber_room ×1, steps/soak@0 ×1" in res.stdout


def test_demo_slots_beyond_the_rack(labctl, tmp_path):
    fx = isolated_fixture(tmp_path, "sim-rack4.yaml")
    res = labctl("demo", "--slots", "6", "--fixture", str(fx), "--db", str(tmp_path / "r.db"))
    assert res.returncode == 4
    assert "station sim-rack4 has 4 slot(s)" in res.stderr
