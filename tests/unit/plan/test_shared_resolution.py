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
    # as validated: the steps written alike hold one args dict and one limits dict (a long plan
    # keeps one copy, not one a step); a step written otherwise, or with a ${…}, its own
    assert a.limits is b.limits and a.args is b.args
    assert c.limits["value"] is not a.limits["value"] and d.limits["value"] is not a.limits["value"]
    assert c.args is not a.args and d.args is not a.args and d.args["property"] == "${'ch1.voltage'}"
    assert d.limits["value"].max == "${vmax}"
    assert a.check is c.check  # one string per check name


def test_steps_sharing_args_still_resolve_their_limits_per_corner(tmp_path):
    """Sharing the args object does not merge what depends on the corner: each corner renders
    its own ``${…}`` (errors in shared limits stay each step's: the two tests below)."""
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent("""\
        name: corners
        version: "1"
        corners:
          vin: [4 V, 5 V]
        steps:
          - {id: a, check: measure, args: {role: psu, property: ch1.voltage}, limits: {value: {max: "${vin}"}}}
          - {id: b, check: measure, args: {role: psu, property: ch1.voltage}, limits: {value: {max: "${vin}"}}}
        """), encoding="utf-8")
    loaded = load_plan(path)
    a, b = loaded.plan.steps
    assert a.args is b.args
    highs = [(loaded.resolve_limits(s, c)["value"].hi) for s in (a, b) for c in loaded.corners]
    assert highs == [4.0, 5.0, 4.0, 5.0]


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


def test_a_long_plan_of_steps_written_alike_keeps_little_memory_a_step(tmp_path):
    """A long plan holds each step's own model, not a copy of what its steps share: a loaded
    plan of 5,000 steps reading the same property with the same limits keeps under 2 KB a step
    (about 1.4 KB here; 2.8 KB when each step kept its own args, limits and keys)."""
    import gc
    import tracemalloc

    from labctl.bench.common import measure_plan, private_plan_cache

    plan = measure_plan(tmp_path / "long.yaml", 5000)
    with private_plan_cache("off"):
        tracemalloc.start()
        try:
            loaded = load_plan(plan)
            gc.collect()
            held, _peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(loaded.plan.steps) == 5000
    assert held / 5000 < 2000, f"{held / 5000:.0f} B a step"
