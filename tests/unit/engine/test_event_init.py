"""Events are built by a quick ``__init__`` (labctl.engine.events._fill_init): it must behave
exactly like the one dataclasses writes (defaults, fresh default factories, frozen, refusals)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from labctl.engine import events as ev

_EVENTS = [c for c in vars(ev).values()
           if isinstance(c, type) and issubclass(c, ev.Event) and c is not ev.Event]


def test_every_event_class_has_the_quick_init() -> None:
    assert len(_EVENTS) >= 12
    for cls in _EVENTS:
        assert {"__dict__", "update"} <= set(cls.__init__.__code__.co_names)  # not dataclasses' own
        assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


def test_defaults_and_fresh_factories() -> None:
    a = ev.StepStarted(run_id="r", time=1.0, step_key="steps/a#1", step_id="a", group="steps", check="measure")
    b = ev.StepStarted(run_id="r", time=1.0, step_key="steps/a#1", step_id="a", group="steps", check="measure")
    assert (a.corner, a.corner_index, a.attempt, a.tags) == ({}, None, 1, ())
    assert a == b
    assert a.corner is not b.corner  # a default factory runs for every event
    assert vars(a) == {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}


def test_values_given_are_kept_and_the_event_stays_frozen() -> None:
    lim = ev.Limits(low=0.7, high=0.8, text="0.7 V ≤ x ≤ 0.8 V")
    m = ev.MeasurementRecorded(run_id="r", time=2.0, step_key="k", name="v", value=0.75, unit="V",
                               limits=lim, verdict=ev.Verdict.PASS, labels={"rail": "VDD"})
    assert (m.value, m.unit, m.limits, m.verdict, m.labels) == (0.75, "V", lim, ev.Verdict.PASS, {"rail": "VDD"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.value = 1.0  # type: ignore[misc]
    assert dataclasses.replace(m, value=0.9).value == 0.9
    assert pickle.loads(pickle.dumps(m)) == m
    assert m.to_dict()["verdict"] == "PASS"


def test_missing_and_unknown_arguments_are_refused_as_before() -> None:
    with pytest.raises(TypeError, match="step_key"):
        ev.StepEnded(run_id="r", time=1.0, outcome=ev.StepOutcome.PASS)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bogus"):
        ev.RunEnded(run_id="r", time=1.0, outcome=ev.RunOutcome.PASSED, bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ev.RunEnded("r", 1.0, ev.RunOutcome.PASSED)  # type: ignore[misc]  # keyword-only, as before
