"""A simulated lab served at another time scale than the fixture's (`labctl sim serve
--time-scale`): the run's clock follows the lab, and says so. It had kept the fixture's scale:
a 2 min wait ran 20 simulated minutes at the lab, and a soak 'settled' in an impossible time."""

from __future__ import annotations

from labctl.engine.events import StepEnded
from labctl.launch import RunRequest, execute
from labctl.sim.testing import isolated_fixture, served_lab


def test_the_run_follows_the_time_scale_of_the_lab_that_serves_the_fixture(tmp_path):
    fixture = isolated_fixture(tmp_path / "lab", time_scale=60)
    plan = tmp_path / "wait.yaml"
    plan.write_text("name: w\nsteps:\n  - {id: w, check: wait, args: {duration: 120 s}}\n", encoding="utf-8")
    said: list[str] = []
    ended: list[StepEnded] = []
    with served_lab(fixture, "--time-scale", "600"):
        out = execute(RunRequest(plan=str(plan), fixture=str(fixture), db=str(tmp_path / "r.db"), preflight=False),
                      [lambda e: ended.append(e) if isinstance(e, StepEnded) else None], say=said.append,
                      handle_signals=False)
    assert out.exit_code == 0
    assert any("runs at time x600 (the fixture says x60)" in s for s in said), said
    [wait] = [e for e in ended if e.step_key.startswith("steps/w")]
    assert wait.duration_sim is not None and 119 <= wait.duration_sim < 130
    assert wait.duration < 1.0  # 120 s at x600 is 0.2 s of wall time (at x60 it was 2 s)


def test_the_lab_tells_its_time_scale_alone(tmp_path):
    """``{"op": "time_scale"}`` (what a run asks at its start) answers the lab's clock only,
    without the whole bench's state."""
    from labctl.fixture import load_fixture
    from labctl.sim.control import control_request, default_control_path

    fixture = isolated_fixture(tmp_path / "lab", time_scale=60)
    with served_lab(fixture, "--time-scale", "50"):
        path = default_control_path(load_fixture(fixture))
        assert control_request(path, {"op": "time_scale"}) == {"time_scale": 50.0}
