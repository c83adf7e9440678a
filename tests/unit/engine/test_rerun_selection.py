"""Which steps a re-run runs: the chosen ones, after the steps that establish the board's
state (setup, once-steps, the chosen step's own corner) — the rule a resume replays by."""

from __future__ import annotations

import pytest

from labctl.engine.replay import rerun_selection
from labctl.errors import LabctlError
from labctl.plan.loader import load_plan


@pytest.fixture(scope="module")
def soak():
    loaded = load_plan("thermal-soak.yaml", {})
    return loaded, [ps for ps in loaded.expand() if ps.group in ("setup", "steps")]


def test_one_corner_of_a_step_runs_after_setup_state_and_its_own_corners_soak(soak):
    loaded, planned = soak
    assert rerun_selection(planned, {"steps/lid@1"}, loaded) == {
        "setup/power_on", "setup/sequencing", "steps/soak@1", "steps/lid@1"}  # not soak@0/@2, not rails_nominal


def test_a_step_id_chooses_every_corner_each_after_its_soak(soak):
    loaded, planned = soak
    assert rerun_selection(planned, {"idle_temps"}, loaded) == {
        "setup/power_on", "setup/sequencing", *(f"steps/{s}@{i}" for s in ("soak", "idle_temps") for i in range(3))}


def test_an_unknown_step_names_the_plan_s_steps(soak):
    loaded, planned = soak
    with pytest.raises(LabctlError, match="no step lidd in plan thermal-soak") as err:
        rerun_selection(planned, {"lidd", "soak"}, loaded)
    assert err.value.hint == "its steps are: soak, idle_temps, lid"
