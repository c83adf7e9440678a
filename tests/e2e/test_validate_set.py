"""`--set NAME=VALUE` refused as a user sees it: the option as given, the parameter's
declaration (file:line:col) and what to write; a value of the wrong kind is refused, not
taken (lanes=four for a number, quick=yes for true/false)."""

from __future__ import annotations

import pytest

PLAN = """\
name: sets
requires: [dut]
parameters:
  rise: 10 K
  lanes: 4
  quick: false
  mode: {default: fast, choices: [fast, full]}
  margin: 5 %
  serial: ABC
steps:
  - id: a
    check: wait
    args: {duration: 1 s}
    when: lanes > 2 and not quick and serial != '0042'
"""


@pytest.fixture
def plan(tmp_path):
    path = tmp_path / "sets.yaml"
    path.write_text(PLAN, encoding="utf-8")
    return path


@pytest.mark.parametrize(("option", "line", "message", "hint"), [
    ("lanez=3", "3:1", "--set lanez=3: the plan has no parameter 'lanez'; did you mean 'lanes'?",
     "write --set lanes=3"),
    ("rise=5 V", "4:3", "--set rise=5 V: 5 V does not fit rise (default 10 K, a temperature)",
     "give it in a unit of temperature, e.g. --set rise='10 K'"),
    ("lanes=four", "5:3", "--set lanes=four: 'four' does not fit lanes (default 4, a number)",
     "write a number without a unit, e.g. --set lanes=4"),
    ("lanes=4 V", "5:3", "--set lanes=4 V: 4 V does not fit lanes (default 4, a number)",
     "write a number without a unit, e.g. --set lanes=4"),
    ("quick=yes", "6:3", "--set quick=yes: 'yes' does not fit quick (default false, true/false)",
     "write --set quick=true or --set quick=false"),
    ("mode=ful", "7:3", "--set mode=ful: parameter mode: 'ful' is not one of fast, full; did you mean 'full'?",
     "write one of --set mode=fast, --set mode=full"),
    ("margin=3 V", "8:3", "--set margin=3 V: 3 V does not fit margin (default 5 %, a number)",
     "write a plain number or a percentage, e.g. --set margin=5%"),
    ("rise=1e999 K", "4:3", "--set rise=1e999 K: '1e999 K' is not a finite number",
     "values are finite; check the exponent"),
    ("rise=${rise}", "4:3", "--set rise=${rise}: parameter cycle: rise -> rise",
     "a parameter cannot depend on itself: give --set rise a value"),
])
def test_a_bad_set_names_the_option_points_at_the_declaration_and_says_what_to_write(
        labctl, plan, option, line, message, hint):
    res = labctl("validate", str(plan), "--set", option)
    assert res.returncode == 4, res.stdout
    assert res.stderr.splitlines() == [f"{plan}:{line}: {message}", f"  hint: {hint}", "1 problem in 1 file"]


def test_labctl_run_refuses_a_bad_set_the_same_way_before_anything_starts(labctl, plan):
    res = labctl("run", str(plan), "--set", "lanes=four", "--set", "quick=yes")
    assert res.returncode == 4
    err = res.stderr.splitlines()
    assert f"{plan}:5:3: --set lanes=four: 'four' does not fit lanes (default 4, a number)" in err
    assert f"{plan}:6:3: --set quick=yes: 'yes' does not fit quick (default false, true/false)" in err
    assert "Traceback" not in res.stderr


def test_values_that_fit_are_taken_and_a_text_parameter_keeps_what_was_typed(labctl, plan):
    res = labctl("validate", str(plan), "--show", "--set", "lanes=8", "--set", "quick=true",
                 "--set", "margin=0.1", "--set", "mode=full", "--set", "serial=0042", "--set", "rise=12 K")
    assert res.returncode == 0, res.stderr
    assert "parameter serial = 0042" in res.stdout  # text, not the number 42
    assert "(skipped: when is false)" in res.stdout  # quick and serial took their new values


def test_a_set_without_a_name_is_a_usage_error(labctl, plan):
    res = labctl("validate", str(plan), "--set", "=3")
    assert res.returncode == 4
    assert res.stderr.splitlines()[0] == "error: --set '=3': expected NAME=VALUE"


def test_a_computed_parameter_takes_only_a_value_of_the_kind_it_computes(labctl, tmp_path):
    plan = tmp_path / "computed.yaml"
    plan.write_text("name: c\nrequires: [psu]\nparameters:\n  vin: 5 V\n  vlow: ${vin * 0.9}\n"
                    "steps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n", encoding="utf-8")
    res = labctl("validate", str(plan), "--set", "vlow=3A")
    assert res.returncode == 4
    assert res.stderr.splitlines()[:2] == [
        f"{plan}:5:3: --set vlow=3A: 3 A does not fit vlow (default 4.5 V, a voltage)",
        "  hint: give it in a unit of voltage, e.g. --set vlow='4.5 V'"]
    assert labctl("validate", str(plan), "--set", "vlow=4 V").returncode == 0
