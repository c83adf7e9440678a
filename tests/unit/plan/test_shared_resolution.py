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


def test_the_same_mistake_in_two_steps_is_reported_at_each(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent("""\
        name: twice
        version: "1"
        steps:
          - {id: a, check: measure, args: {role: psu, property: ch1.voltage, samples: many}}
          - {id: b, check: measure, args: {role: psu, property: ch1.voltage, samples: many}}
        """), encoding="utf-8")
    loaded, errors = check_plan(path)
    lines = sorted(e.line for e in errors if "samples" in e.format())
    assert lines == [4, 5], [e.format() for e in errors]
