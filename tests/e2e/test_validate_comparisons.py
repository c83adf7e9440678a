"""`labctl validate` on comparisons that used to be silently false: temperatures in units with
different zero points (10 K against 5 degC) and text against numbers (lanes == '4').
Each mistake is one located line with a hint, exit 4; the comparisons that mean one thing pass."""

from __future__ import annotations

HEADER = """\
name: compare
requires: [chamber, dut]
parameters:
  rise: 10 K
  ambient: 25 degC
  lanes: 4
  mode: fast
steps:
"""


def _plan(tmp_path, body: str, header: str = HEADER):
    path = tmp_path / "plan.yaml"
    path.write_text(header + body, encoding="utf-8")
    return path


def _wait(when: str, step: str = "a") -> str:
    return f"""\
  - id: {step}
    check: wait
    args: {{duration: 1 s}}
    when: {when}
"""


def test_a_kelvin_value_compared_with_a_degc_temperature_is_an_error_at_the_operator(labctl, tmp_path):
    plan = _plan(tmp_path, _wait("rise > 5 degC"))
    res = labctl("validate", str(plan))
    assert res.returncode == 4, res.stdout + res.stderr
    err = res.stderr.splitlines()
    assert err[0] == (
        f"{plan}:12:16: cannot compare 10 K > 5 degC: K and degC have different zero points: as "
        "temperatures this is -263.15 degC > 5 degC, as differences 10 K > 5 K")
    assert err[1] == ("  hint: write both sides in K, as you mean it: 278.15 K (the temperature 5 degC) "
                      "or 5 K (a difference of 5 degC)")
    assert "Traceback" not in res.stderr


def test_a_degc_corner_compared_with_kelvin_is_refused_too(labctl, tmp_path):
    plan = _plan(tmp_path, _wait("ambient >= 300 K"))
    res = labctl("validate", str(plan))
    assert res.returncode == 4
    assert f"{plan}:12:19: cannot compare 25 degC >= 300 K" in res.stderr
    assert "26.85 degC (the temperature 300 K)" in res.stderr


def test_temperatures_in_one_unit_and_differences_compare(labctl, tmp_path):
    plan = _plan(tmp_path, _wait("rise > 5 K", "k") + _wait("ambient - 5 degC >= 20 degC", "c")
                 + _wait("5 delta_degC < 10 K and 5 delta_degC < 6 degC", "d"))
    res = labctl("validate", str(plan), "--show")
    assert res.returncode == 0, res.stderr
    assert "skipped" not in res.stdout  # every condition is true


def test_a_kelvin_limit_on_a_degc_reading_is_an_error_and_a_difference_limit_is_not(labctl, tmp_path):
    plan = _plan(tmp_path, """\
  - id: soak
    check: thermal.soak
    args: {setpoint: 25 degC, hold: 1 s}
    limits:
      temperature: {min: 10 K, max: 30 degC}
  - id: ramp
    check: thermal.ramp
    args:
      profile: [{to: 30 degC, rate: 5 degC/min}]
    limits:
      max_overshoot: {max: 2 K}
""")
    res = labctl("validate", str(plan))
    assert res.returncode == 4
    err = res.stderr.splitlines()
    assert err[0] == (f"{plan}:13:26: min: 10 K is in K, but temperature is measured in degC, a scale "
                      "with another zero point")
    assert err[1] == ("  hint: write it in degC: the temperature 10 K is -263.15 degC; a difference "
                      "belongs in tol: or marginal:")
    assert err[-1] == "1 problem in 1 file"  # max_overshoot is a difference: 2 K is fine


def test_a_kelvin_interlock_bound_on_a_temperature_is_an_error(labctl, tmp_path):
    header = HEADER.replace("steps:\n", "safety:\n  interlocks:\n    - signal: dut.die_temp\n"
                            "      max: 378 K\nsteps:\n")
    plan = _plan(tmp_path, _wait("true"), header)
    res = labctl("validate", str(plan))
    assert res.returncode == 4
    assert f"{plan}:11:12: max: 378 K is in K, but dut.die_temp is read in degC" in res.stderr
    assert "the temperature 378 K is 104.85 degC" in res.stderr


def test_a_quoted_number_compared_with_a_number_parameter_is_an_error_at_the_quotes(labctl, tmp_path):
    plan = _plan(tmp_path, _wait("lanes == '4'"))
    res = labctl("validate", str(plan))
    assert res.returncode == 4, res.stdout
    err = res.stderr.splitlines()
    assert err[0] == f"{plan}:12:20: cannot compare 4 == '4': '4' is text and 4 is a number"
    assert err[1] == "  hint: remove the quotes to compare numbers: lanes == 4"


def test_text_against_a_number_true_or_a_quantity_is_an_error_every_way_round(labctl, tmp_path):
    header = HEADER.replace("  mode: fast\n", "  mode: fast\n  quick: false\n  vin: 5 V\n")
    plan = _plan(tmp_path, _wait("mode == 3", "a") + _wait("quick != 'true'", "b")
                 + _wait("vin == '5 V'", "c") + _wait("mode == 'fast'", "d"), header)
    res = labctl("validate", str(plan))
    assert res.returncode == 4
    err = res.stderr.splitlines()
    assert err[0] == f"{plan}:14:19: cannot compare 'fast' == 3: 'fast' is text and 3 is a number"
    assert err[1] == "  hint: mode is text: compare it with quoted text, e.g. mode == '3'"
    assert err[2] == f"{plan}:18:20: cannot compare false != 'true': 'true' is text and false is true/false"
    assert err[3] == "  hint: remove the quotes to compare true/false values: quick != true"
    assert err[4] == f"{plan}:22:18: cannot compare 5 V == '5 V': '5 V' is text and 5 V is a voltage"
    assert err[-1] == "3 problems in 1 file"  # text with text compares
