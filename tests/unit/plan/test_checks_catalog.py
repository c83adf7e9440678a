"""The check catalog and registry: every check of the engine issue is declared with its
arguments and measurements; implementations attach later; plugins come from entry points."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from pydantic import ValidationError

from labctl.checks.registry import (
    CheckArgs,
    CheckRegistryError,
    all_checks,
    get_check,
    register_check,
)

ISSUE_CHECKS = [
    "power.on", "power.rails", "power.ripple", "power.sequencing", "power.efficiency",
    "power.budget", "power.perf_per_watt", "thermal.soak", "thermal.under_load",
    "thermal.throttle", "thermal.ramp", "link.training", "link.ber", "link.margin",
    "link.bathtub", "measure", "scpi", "console", "prompt", "wait", "set",
]


def test_every_check_of_the_engine_issue_is_declared():
    names = set(all_checks())
    assert set(ISSUE_CHECKS) <= names
    for name in ISSUE_CHECKS:
        spec = get_check(name)
        assert spec.summary, f"{name} has no documentation"
        assert issubclass(spec.args, CheckArgs)


def test_arguments_are_validated_with_units():
    spec = get_check("thermal.soak")
    args = spec.args.model_validate({"setpoint": "85 degC", "hold": "5 min"})
    assert args.hold == 300.0 and args.ramp_rate.to("K/min") == 5.0
    with pytest.raises(ValidationError, match="85 A is a current, expected a temperature"):
        spec.args.model_validate({"setpoint": "85 A"})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        spec.args.model_validate({"setpoint": "85 degC", "hodl": "5 min"})


def test_measurements_follow_the_arguments():
    rails = get_check("power.rails").args.model_validate({"rails": ["VDD_CORE", "VDD_IO"]})
    assert {k: m.dimension for k, m in rails.measurements().items()} == {
        "VDD_CORE": "voltage", "VDD_IO": "voltage"}
    assert rails.channels() == ["VDD_CORE", "VDD_IO"] and rails.roles() == ["daq"]
    seq = get_check("power.sequencing").args.model_validate({"order": ["A", "B", "C"]})
    assert list(seq.measurements()) == ["order", "A->B", "B->C"]
    console = get_check("console").args.model_validate(
        {"expect": r"temp (?P<t>[\d.]+) degC", "extract": {"t": "degC"}})
    assert console.measurements()["t"].dimension == "temperature"
    with pytest.raises(ValidationError, match="extract 'x' is not a named group"):
        get_check("console").args.model_validate({"expect": "temp (?P<t>.*)", "extract": {"x": None}})
    measure = get_check("measure").args.model_validate({"role": "psu", "property": "ch1.current", "unit": "mA"})
    assert measure.measurements()["value"].dimension == "current" and measure.roles() == ["psu"]


def test_ber_estimate_and_max_duration_use_the_poisson_formula():
    spec = get_check("link.ber")
    args = spec.args.model_validate({"line_rate": "32 Gbps", "target_ber": "1e-12"})
    # zero errors at 95 %: N = -ln(0.05) / 1e-12 = 2.996e12 bits -> 93.6 s at 32 Gb/s
    assert args.estimate_seconds() == pytest.approx(93.62, rel=1e-3)
    with pytest.raises(ValidationError, match="more than max_duration"):
        spec.args.model_validate({"line_rate": "10 Gbps", "target_ber": "1e-15", "max_duration": "10 min"})


def test_thermal_estimates():
    soak = get_check("thermal.soak").args.model_validate(
        {"setpoint": "85 degC", "ramp_rate": "5 degC/min", "hold": "5 min"})
    assert soak.estimate_seconds() == pytest.approx(60 / 5 * 60 + 300)
    ramp = get_check("thermal.ramp").args.model_validate(
        {"profile": [{"to": "45 degC", "rate": "10 degC/min", "hold": "1 min"},
                     {"to": "-5 degC", "rate": "10 degC/min"}]})
    assert ramp.estimate_seconds() == pytest.approx(120 + 60 + 300)
    assert ramp.measurements()["max_overshoot"].delta is True


@pytest.fixture
def scratch_registry():
    """Checks declared by a test are removed afterwards (the registry is process-wide)."""
    from labctl.checks import registry

    before = set(registry._REGISTRY)
    yield
    for name in set(registry._REGISTRY) - before:
        del registry._REGISTRY[name]


def test_declarations_have_no_implementation_until_attached(scratch_registry):
    # declared here; the engine attaches functions with @implementation(name)
    class DemoArgs(CheckArgs):
        level: int = 1

    register_check("test.demo_declared", doc="demo")(DemoArgs)
    spec = get_check("test.demo_declared")
    assert spec.implemented is False

    @register_check("test.demo_declared")
    def run(ctx, args):  # noqa: ANN001, ANN202
        return None

    assert get_check("test.demo_declared").func is run
    with pytest.raises(CheckRegistryError, match="already has an implementation"):
        register_check("test.demo_declared")(lambda ctx, args: None)
    with pytest.raises(CheckRegistryError, match="needs args="):
        register_check("test.no_args")(lambda ctx, args: None)
    from labctl.checks.registry import implementation

    with pytest.raises(CheckRegistryError, match="unknown check"):
        implementation("test.never_declared")(lambda ctx, args: None)


def test_third_party_checks_come_from_the_entry_point_group(tmp_path):
    """A package that declares ``[project.entry-points."labctl.checks"]`` adds its checks."""
    site = tmp_path / "site"
    (site / "acme_checks").mkdir(parents=True)
    (site / "acme_checks" / "__init__.py").write_text(textwrap.dedent("""\
        from labctl.checks import CheckArgs, Measure, register_check

        class FanArgs(CheckArgs):
            fan: str = "FAN0"
            MEASURES = {"rpm": Measure("frequency", "1/min", "fan speed")}

        @register_check("acme.fan", args=FanArgs, roles=("dut",), doc="Fan speed.")
        def fan(ctx, args):
            raise NotImplementedError
        """))
    dist = site / "acme_checks-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-checks\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[labctl.checks]\nacme = acme_checks\nbroken = acme_missing\n")
    code = textwrap.dedent("""\
        import sys
        sys.path.insert(0, sys.argv[1])
        from labctl.checks.registry import get_check, plugin_errors
        spec = get_check("acme.fan")
        print(spec.name, spec.implemented, spec.roles, spec.origin)
        print(len(plugin_errors), "broken" in plugin_errors[0])
        """)
    out = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["acme.fan True ('dut',) acme_checks", "1 True"]
