"""The check library as a whole: every declared check has an implementation, a custom check
ships from a Python package through the ``labctl.checks`` entry point, and the helpers
checks share (durations in progress text, workloads, bathtub extrapolation)."""

from __future__ import annotations

import importlib
import math
import sys
import textwrap

import pytest

import labctl.checks.builtin as builtin
from labctl.checks import registry
from labctl.checks.ber import ber_upper_bound
from labctl.checks.generic import fmt_duration, workload_percent
from labctl.checks.link import EXACT_BOUND_MAX_ERRORS, _q_of, bathtub_opening, upper_bound


def test_every_declared_check_is_implemented():
    assert builtin.unimplemented() == []
    names = set(registry.all_checks())
    for name in ("power.on", "power.rails", "power.ripple", "power.sequencing", "power.efficiency",
                 "power.budget", "power.perf_per_watt", "thermal.soak", "thermal.under_load",
                 "thermal.throttle", "thermal.ramp", "link.training", "link.ber", "link.margin",
                 "link.bathtub", "measure", "scpi", "console", "prompt", "wait", "set"):
        assert name in names
        assert registry.get_check(name).implemented, name


def test_custom_check_from_an_installed_package_entry_point(tmp_path, monkeypatch):
    """The example of docs/checks.md, installed the way pip would (a dist-info with
    entry_points.txt on sys.path)."""
    pkg = tmp_path / "acme_checks"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        from pydantic import Field

        from labctl.checks import CheckArgs, Measure, register_check
        from labctl.plan.types import Duration


        class FanSpeedArgs(CheckArgs):
            """Fan tachometer reading from the DUT console."""

            fan: int = Field(1, ge=1, le=4, description="fan number")
            settle: Duration = Field(2.0, description="wait before reading")

            MEASURES = {"rpm": Measure("frequency", "rpm", "fan speed")}


        @register_check("acme.fan_speed", args=FanSpeedArgs, roles=("dut",))
        def fan_speed(ctx, args):
            ctx.sleep(args.settle)
            reply = ctx.role("dut").send(f"fan {args.fan}")
            ctx.measure("rpm", float(reply.split()[-1]), "rpm", labels={"sensor": f"fan{args.fan}"})
    '''))
    dist = tmp_path / "acme_checks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[labctl.checks]\nacme = acme_checks\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    monkeypatch.setitem(registry._LOADED, "plugins", False)
    monkeypatch.setattr(registry, "plugin_errors", [])
    try:
        assert registry.load_plugins() == []
        spec = registry.get_check("acme.fan_speed")
        assert spec is not None and spec.implemented and spec.roles == ("dut",)
        assert spec.args.model_validate({"fan": 2, "settle": "500 ms"}).settle == 0.5
        assert spec.args.model_validate({}).measurements()["rpm"].unit == "rpm"
    finally:
        registry._REGISTRY.pop("acme.fan_speed", None)
        sys.modules.pop("acme_checks", None)


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (2.5, "2.5s"), (100, "1m40s"), (300, "5m"),
                                               (3600, "1h"), (5430, "1h30m30s")])
def test_durations_in_progress_text(seconds, text):
    assert fmt_duration(seconds) == text


@pytest.mark.parametrize(("workload", "load", "percent"), [("idle", None, 0), ("stress", None, 100),
                                                           ("inference", 0.5, 50), ("stress 60", None, 60),
                                                           ("40 %", None, 40), ("stress", 1.0, 100)])
def test_workload_names_as_load_percent(workload, load, percent):
    assert workload_percent(workload, load) == percent


def test_q_of_inverts_the_gaussian_tail():
    for q in (1.0, 4.0, 7.034):
        assert _q_of(0.5 * math.erfc(q / math.sqrt(2))) == pytest.approx(q, abs=1e-6)


def test_bathtub_opening_extrapolates_to_the_target_ber():
    sigma = 0.03  # random jitter, UI; edges at ±0.5 UI
    points = []
    for i in range(41):
        x = -0.5 + i / 40
        ber = 0.5 * math.erfc((x + 0.5) / sigma / math.sqrt(2)) + 0.5 * math.erfc((0.5 - x) / sigma / math.sqrt(2))
        points.append((x, ber if ber > 1e-10 else 0.0))  # a short gate sees nothing below ~1e-10
    expected = 1.0 - 2 * _q_of(1e-12) * sigma  # 0.578 UI
    assert bathtub_opening(points, 1e-12) == pytest.approx(expected, abs=0.01)
    assert bathtub_opening(points, 1e-6) > bathtub_opening(points, 1e-12)


def test_a_closed_bathtub_has_no_opening():
    assert bathtub_opening([(x / 10, 0.5) for x in range(-5, 6)], 1e-12) == 0.0


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_ber_bound_for_many_errors_matches_the_exact_poisson_bound(confidence):
    k = EXACT_BOUND_MAX_ERRORS
    exact = ber_upper_bound(3e12, k, confidence)
    assert upper_bound(3e12, k, confidence) == exact  # exact up to the threshold
    approx = upper_bound(3e12, k + 1, confidence)  # the fast form just above it
    assert approx == pytest.approx(ber_upper_bound(3e12, k + 1, confidence), rel=1e-3)
    assert approx > exact


def test_ber_bound_for_a_million_errors_is_quick_and_sane():
    bound = upper_bound(3e12, 1_000_000, 0.95)
    assert 1_000_000 / 3e12 < bound < 1.002 * 1_000_000 / 3e12
