"""`labctl validate` as a user runs it: examples pass, mistakes are reported without tracebacks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labctl.fixture import load_fixture
from labctl.fixture.loader import check_fixture_file
from labctl.plan.loader import check_library, check_plan

ROOT = Path(__file__).resolve().parents[2]
PLANS = sorted((ROOT / "testplans").rglob("*.yaml"))
FIXTURES = sorted((ROOT / "fixtures").glob("*.yaml"))
LOCATED = re.compile(r"^\S+\.yaml:\d+:\d+: \S")


@pytest.mark.parametrize("path", PLANS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_plan_is_valid_on_the_sim_bench(path):
    fixture = load_fixture(ROOT / "fixtures" / "sim-bench.yaml")
    if path.parent.name == "lib":
        loaded, errors = check_library(path, fixture)
    else:
        loaded, errors = check_plan(path, fixture=fixture)
    assert [e.format() for e in errors] == []
    assert loaded is not None


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_example_fixture_is_valid(path):
    fixture, errors, _ = check_fixture_file(path)
    assert [e.format() for e in errors] == []
    assert fixture is not None


def test_validate_examples_exits_0_with_one_line_per_file(labctl):
    files = [str(p.relative_to(ROOT)) for p in PLANS + FIXTURES]
    res = labctl("validate", *files, "--fixture", "fixtures/sim-bench.yaml")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == len(files)
    evt = next(line for line in lines if "accelerator-evt.yaml" in line)
    assert re.match(
        r"^ok  testplans/accelerator-evt\.yaml: accelerator-evt v1\.0: \d+ steps \(\d+ setup, \d+ steps, "
        r"\d+ teardown\), 3 corners, \d+ expanded, est\. \S+", evt), evt
    assert "ok  fixtures/sim-bench.yaml: station sim-bench-1: 7 roles, 9 channels, simulated lab" in lines
    assert "ok  testplans/lib/power-up.yaml: step library, 3 steps" in lines


def test_broken_plans_exit_4_with_every_problem_located_and_no_traceback(labctl):
    res = labctl("validate", "tests/data/plans/safety.yaml", "tests/data/plans/corners.yaml",
                 "testplans/smoke.yaml")
    assert res.returncode == 4
    assert "Traceback" not in res.stderr + res.stdout
    err = res.stderr.splitlines()
    problems = [line for line in err if LOCATED.match(line)]
    assert len(problems) == 7
    assert "tests/data/plans/safety.yaml:5:35: max: 105 A is a current, but dut.die_temp is a temperature" in err[0]
    assert err[1].startswith("  hint: ")
    assert err[-1] == "7 problems in 2 files"
    assert res.stdout.startswith("ok  testplans/smoke.yaml: smoke v1.0")


def test_bad_yaml_and_missing_file(labctl, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nsteps:\n  - id: a\n   check: wait\n", encoding="utf-8")
    res = labctl("validate", str(bad), str(tmp_path / "missing.yaml"))
    assert res.returncode == 4
    assert "Traceback" not in res.stderr
    assert f"{bad}:4:4: bad YAML: expected <block end>, but found '<block mapping start>'" in res.stderr
    assert f"no such file: {tmp_path / 'missing.yaml'}" in res.stderr


def test_fixture_checks_roles_and_channels(labctl):
    res = labctl("validate", "tests/data/plans/fixture-mismatch.yaml", "--fixture", "fixtures/sim-bench.yaml")
    assert res.returncode == 4
    assert ("tests/data/plans/fixture-mismatch.yaml:10:30: channel 'VDD_SOC' is not mapped in station "
            "sim-bench-1; did you mean 'VDD_IO'?") in res.stderr
    assert "required role 'scope' is not offered by station sim-bench-1" in res.stderr
    # without the fixture the same plan is fine
    assert labctl("validate", "tests/data/plans/fixture-mismatch.yaml").returncode == 0


def test_set_overrides(labctl):
    ok = labctl("validate", "testplans/accelerator-evt.yaml", "--set", "vin=4.8V", "--set", "soak_hold=10 min")
    assert ok.returncode == 0, ok.stderr
    bad = labctl("validate", "testplans/accelerator-evt.yaml", "--set", "vinn=4.8V")
    assert bad.returncode == 4
    assert "--set vinn=4.8V: the plan has no parameter 'vinn'; did you mean 'vin'?" in bad.stderr
    wrong = labctl("validate", "testplans/accelerator-evt.yaml", "--set", "vin=4.8 A")
    assert wrong.returncode == 4 and "does not fit vin (default 5 V, a voltage)" in wrong.stderr
    noeq = labctl("validate", "testplans/smoke.yaml", "--set", "vin")
    assert noeq.returncode == 4 and "expected NAME=VALUE" in noeq.stderr


def test_built_in_examples_are_found_from_any_directory(labctl, tmp_path):
    res = labctl("validate", "testplans/smoke.yaml", "sim-bench.yaml", "accelerator-evt.yaml",
                 "--fixture", "fixtures/sim-bench.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 3


def test_directory_argument_means_every_yaml_in_it(labctl):
    res = labctl("validate", "testplans", "--fixture", "sim-bench.yaml")
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == len(list((ROOT / "testplans").glob("*.yaml")))


def test_usage_errors(labctl):
    res = labctl("validate")
    assert res.returncode == 4 and "give at least one plan or fixture file" in res.stderr
    broken_fixture = labctl("validate", "testplans/smoke.yaml", "--fixture", "tests/data/plans/bad-yaml.yaml")
    assert broken_fixture.returncode == 4 and "Traceback" not in broken_fixture.stderr


def test_list_checks(labctl):
    res = labctl("validate", "--list-checks")
    assert res.returncode == 0
    names = [line.split()[0] for line in res.stdout.splitlines() if line and not line.startswith(" ")]
    assert {"power.rails", "thermal.soak", "link.ber", "console", "wait", "set"} <= set(names)


def test_a_bug_in_labctl_is_one_line_not_a_traceback(monkeypatch, capsys):
    import labctl.plan.loader as loader
    from labctl.cli import main

    def boom(*a, **k):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(loader, "check_plan_loaded", boom)  # what validate calls once the file is read
    with pytest.raises(SystemExit) as e:
        main(["validate", str(ROOT / "testplans" / "smoke.yaml")])
    assert e.value.code == 4
    err = capsys.readouterr().err
    assert "internal error while checking" in err and "RuntimeError: simulated bug" in err
    assert "Traceback" not in err


def test_show_prints_parameters_and_run_order(labctl):
    res = labctl("validate", "testplans/accelerator-evt.yaml", "--show")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "parameter vin = 5 V" in out
    assert "under_load (thermal.under_load) [ambient=45 degC]" in out
    assert "perf_per_watt (power.perf_per_watt) [ambient=0 degC]" in out and "(skipped: when is false)" in out


def test_show_writes_parameters_as_a_plan_would(labctl, tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text('name: p\nversion: "1"\nparameters:\n  fast: true\n  spare: null\n  lanes: [1, 2]\n'
                    "  opts: {hot: false}\nsteps:\n  - {id: a, check: set, args: {target: dut.workload, value: idle}}\n")
    res = labctl("validate", str(plan), "--show")
    assert res.returncode == 0, res.stderr
    shown = [line.strip() for line in res.stdout.splitlines() if line.strip().startswith("parameter ")]
    assert shown == ["parameter fast = true", "parameter spare = null", "parameter lanes = [1, 2]",
                     "parameter opts = {hot: false}"]


def test_github_annotations(labctl):
    res = labctl("validate", "tests/data/plans/safety.yaml", "--format", "github")
    assert res.returncode == 4
    assert res.stdout.splitlines()[0] == (
        "::error file=tests/data/plans/safety.yaml,line=5,col=35::max: 105 A is a current, but "
        "dut.die_temp is a temperature (hint: write it in a unit of temperature, e.g. 105 degC, 25 degC)"
    )


def test_a_plan_name_with_terminal_commands_and_a_file_name_with_commas_are_shown_as_data(labctl, tmp_path):
    """A plan's text is untrusted: its control characters print as escapes; in a GitHub
    annotation a file name's ``,`` and ``:`` are escaped, so ``a,line=99::x.yaml`` stays a name."""
    plan = tmp_path / "esc.yaml"
    plan.write_text('name: "\\e]0;PWN\\a\\e[31mred"\nversion: "1"\nsteps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n')
    res = labctl("validate", str(plan))
    assert res.returncode == 0, res.stderr
    assert "\\x1b]0;PWN\\x07\\x1b[31mred v1" in res.stdout and "\x1b" not in res.stdout, res.stdout
    odd = tmp_path / "a,line=99::x.yaml"
    odd.write_text("name: x\nsteps:\n  - {id: w, check: wait, args: {duration: 5 V}}\n")
    res = labctl("validate", str(odd), "--format", "github")
    assert res.returncode == 4
    assert res.stdout.startswith(f"::error file={str(tmp_path).replace(':', '%3A')}/a%2Cline=99%3A%3Ax.yaml,line=3,"), \
        res.stdout


def test_a_folder_without_plans_is_an_error_and_yml_files_are_checked(labctl, tmp_path):
    """CI running `labctl validate plans/` on a folder whose plans moved into a subfolder (or
    are named .yml) passed, having checked nothing."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.yaml").write_text("name: p\nsteps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n")
    res = labctl("validate", str(tmp_path))
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"{tmp_path}: no .yaml or .yml file in this folder" in res.stderr
    assert f"labctl validate {tmp_path / 'sub'}" in res.stderr
    (tmp_path / "q.yml").write_text("name: q\nsteps:\n  - {id: w, check: wait, args: {duration: 5 V}}\n")
    res = labctl("validate", str(tmp_path))
    assert res.returncode == 4 and "q.yml:3:" in res.stderr, res.stdout + res.stderr


def test_list_checks_shows_real_status_and_whole_descriptions(labctl):
    out = labctl("validate", "--list-checks").stdout
    assert "declared" not in out  # every built-in check has its implementation attached
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line.startswith(" ")}
    assert lines["link.ber"].endswith("and the verdict is on the BER upper bound."), lines["link.ber"]
    assert lines["thermal.under_load"].endswith("θ = (T_die − T_reference) / P_in."), lines["thermal.under_load"]


@pytest.mark.parametrize("doc", ["README.md", "docs/plans.md"])
def test_the_documented_validate_output_is_what_labctl_prints(labctl, doc):
    res = labctl("validate", "testplans/accelerator-evt.yaml", "--fixture", "fixtures/sim-bench.yaml", cwd=ROOT)
    samples = re.findall(r"`(ok  testplans/accelerator-evt\.yaml: [^`]*)`", (ROOT / doc).read_text())
    assert samples == [res.stdout.strip()], "regenerate the sample with the command above it"


def _default_limits() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("LABCTL_MAX")}


def test_plans_of_ten_thousand_steps_load_with_the_default_limits(labctl, tmp_path):
    """The sizes the performance issue names: 10,000 steps written out in full (block style,
    every step with its name, args, retries, tags and limits: 2.2 MB, 280,000 YAML values), and
    10,000 steps through corners, each with a setup and a teardown step: no limit to raise."""
    lines = ["name: long", 'version: "1"', "requires: [psu]", "setup:",
             "  - {id: on, check: set, args: {target: psu.ch1.output, value: true}}", "steps:"]
    for i in range(10_000):
        lines += [f"  - id: rail_{i:05d}", f"    name: Rail check {i}", "    check: measure",
                  "    args: {role: psu, property: ch1.voltage}", "    retries: 1", "    tags: [power, rails]",
                  "    limits:", "      value: {nominal: 5 V, tol: 3 %, marginal: 10 %}"]
    lines += ["teardown:", "  - {id: off, check: set, args: {target: psu.ch1.output, value: false}}"]
    long = tmp_path / "long.yaml"
    long.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("\n".join([
        "name: sweep", 'version: "1"', "corners:",
        "  vin: [" + ", ".join(f"{4 + i * 0.1:.1f} V" for i in range(10)) + "]",
        "  temp: [" + ", ".join(f"{20 + i} degC" for i in range(10)) + "]",
        "setup:", "  - {id: on, check: set, args: {target: psu.ch1.output, value: true}}", "steps:",
        *(f"  - {{id: c{i}, check: measure, args: {{role: psu, property: ch1.voltage}}, limits: {{value: {{max: 30 V}}}}}}"
          for i in range(100)),
        "teardown:", "  - {id: off, check: set, args: {target: psu.ch1.output, value: false}}"]) + "\n", encoding="utf-8")
    assert long.stat().st_size > 2_000_000
    res = labctl("validate", str(long), str(sweep), "--fixture", "fixtures/sim-bench.yaml", env=_default_limits())
    assert res.returncode == 0, res.stderr
    assert f"ok  {long}: long v1: 10002 steps (1 setup, 10000 steps, 1 teardown), 0 corners, 10002 expanded" \
        in res.stdout
    assert f"ok  {sweep}: sweep v1: 102 steps (1 setup, 100 steps, 1 teardown), 100 corners, 10002 expanded" \
        in res.stdout


def test_a_reader_that_goes_away_is_not_reported_as_a_bug(tmp_path):
    """`labctl validate plan.yaml --show | head -2`: the pipe closes early; that is the
    reader's choice, not "internal error … this is a bug in labctl"."""
    import subprocess
    import sys

    plan = tmp_path / "big.yaml"
    plan.write_text("name: big\nsteps:\n" + "".join(
        f"  - {{id: s{i}, check: measure, args: {{role: psu, property: ch1.voltage}}}}\n" for i in range(2000)))
    proc = subprocess.Popen([sys.executable, "-m", "labctl", "validate", str(plan), "--show"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    proc.wait(timeout=120)
    err = proc.stderr.read().decode(errors="replace")
    assert "internal error" not in err and "Traceback" not in err, err


PROBED = """\
name: probe
requires: [daq, psu]
parameters: {lanes: 4, vin: 5 V, ambient: 25 degC}
corners: {vin: [4.5 V, 5.5 V]}
steps:
  - include: lib/two.yaml
    prefix: "bad prefix "
  - id: rails
    check: power.rails
    args: {rails: [VDD_CORE], samples: lots}
    limits: {VDD_CORE: {max: 3 A}}
  - id: lanes
    check: wait
    args: {duration: 1 s}
    when: lanes
  - id: hot
    check: wait
    args: {duration: 1 s}
    when: ambient >= 25
  - id: on
    check: power.on
    per_corner: false
    args: {voltage: "${vin}", current_limit: 5 A}
"""


@pytest.mark.parametrize("command", ["validate", "run"])
def test_probed_mistakes_are_each_one_located_line_with_a_hint(labctl, tmp_path, command):
    """What an independent probe found: a limit hidden by a bad argument, a bad prefix said
    once per library step, a number taken as a when: condition, pint's words for a bare
    number, a once-run step silently given a swept parameter's default."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "two.yaml").write_text(
        "steps:\n  - {id: a, check: wait, args: {duration: 1 s}}\n  - {id: b, check: wait, args: {duration: 1 s}}\n",
        encoding="utf-8")
    (tmp_path / "probe.yaml").write_text(PROBED, encoding="utf-8")
    res = labctl(command, "probe.yaml", cwd=tmp_path)
    assert res.returncode == 4
    assert "Traceback" not in res.stderr + res.stdout
    assert res.stderr.splitlines()[:12] == [
        "probe.yaml:7:13: prefix 'bad prefix ' cannot start a step id (letters, digits, _ . -; starting with "
        "a letter or _)",
        "  hint: the prefix goes before each included step's id (prefix: second_ makes second_power_on); "
        "e.g. prefix: bad_prefix_",
        "probe.yaml:10:40: samples: expected a whole number, got 'lots'",
        "  hint: write a whole number, without quotes or a unit (e.g. 4)",
        "probe.yaml:11:30: max: 3 A is a current, but VDD_CORE is measured as a voltage (V)",
        "  hint: write it in a unit of voltage, e.g. 0.75 V, 750 mV",
        "probe.yaml:15:11: step 'lanes': when: lanes is a number (4), not true or false",
        "  hint: write a condition: a comparison (lane_count > 2, mode == 'full') or true/false",
        "probe.yaml:19:22: cannot compare 25 degC >= 25: 25 is a bare number and 25 degC is a temperature",
        "  hint: give the number a unit, e.g. 25 degC",
        "probe.yaml:23:24: step 'on' runs once (per_corner: false) but uses vin, which is also a corner axis: "
        "it would get the parameter's 5 V, not a corner's value",
        "  hint: remove per_corner: false to run it at every corner, or use a parameter that no axis changes "
        "(e.g. vin_nominal: 5 V)",
    ]
