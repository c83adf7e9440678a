"""Steps with the same args or limits, as written, share their resolved form; every step's
errors stay its own."""

from __future__ import annotations

import textwrap

from labctl.plan.loader import check_plan, load_plan

PLAN = textwrap.dedent("""\
    name: shared
    version: "1"
    parameters:
      vmax: 30 V
    steps:
      - {id: a, check: measure, args: {role: psu, property: ch1.voltage}, limits: {value: {min: -1 V, max: 30 V}}}
      - {id: b, check: measure, args: {role: psu, property: ch1.voltage}, limits: {value: {min: -1 V, max: 30 V}}}
      - {id: c, check: measure, args: {role: psu, property: ch1.voltage, samples: 2}, limits: {value: {max: 3 V}}}
      - {id: d, check: measure, args: {role: psu, property: "${'ch1.voltage'}"}, limits: {value: {max: "${vmax}"}}}
    """)


def test_equal_args_and_limits_are_resolved_once_and_different_ones_apart(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(PLAN, encoding="utf-8")
    loaded = load_plan(path)
    a, b, c, d = loaded.plan.steps
    assert loaded.resolve_args(a) is loaded.resolve_args(b)
    assert loaded.resolve_args(c) is not loaded.resolve_args(a) and loaded.resolve_args(c).samples == 2
    assert loaded.resolve_args(d) is not loaded.resolve_args(a)  # templated: its own
    assert loaded.resolve_args(d).property == "ch1.voltage"
    assert loaded.resolve_limits(a)["value"] is loaded.resolve_limits(b)["value"]
    assert loaded.resolve_limits(c)["value"].hi == 3.0
    assert loaded.resolve_limits(d)["value"] == loaded.resolve_limits(a)["value"].__class__(unit="V", hi=30.0)
    # the limits as validated: one Limit for the steps written alike, each step a dict of its own
    assert a.limits["value"] is b.limits["value"] and a.limits is not b.limits
    assert c.limits["value"] is not a.limits["value"] and d.limits["value"] is not a.limits["value"]
    assert d.limits["value"].max == "${vmax}"


def _twice(tmp_path, step: str, mistake: str) -> tuple[object, list[int], list[str]]:
    """Check a plan of steps a and b both written as ``step``; the lines of errors about ``mistake``."""
    path = tmp_path / "p.yaml"
    path.write_text(f"name: twice\nversion: '1'\nsteps:\n  - {{id: a, {step}}}\n  - {{id: b, {step}}}\n",
                    encoding="utf-8")
    loaded, errors = check_plan(path)
    shown = [e.format() for e in errors]
    return loaded, sorted(e.line for e in errors if mistake in e.format()), shown


def test_the_same_mistake_in_two_steps_is_reported_at_each(tmp_path):
    _, lines, shown = _twice(tmp_path, "check: measure, args: {role: psu, property: ch1.voltage, samples: many}",
                             "samples")
    assert lines == [4, 5], shown


def test_the_same_broken_limit_in_two_steps_is_reported_at_each(tmp_path):
    loaded, lines, shown = _twice(tmp_path, "check: measure, args: {role: psu, property: ch1.voltage}, "
                                  "limits: {value: {min: 3 V, max: 1 V}}", "above max")
    assert loaded is None and lines == [4, 5], shown
