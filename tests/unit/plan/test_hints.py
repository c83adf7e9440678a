"""Hints a new user reads: in the measurement's own unit, a quote for a bare word, the right
requires: for a library's step, "did you mean" for --set values."""

from __future__ import annotations

from pathlib import Path

from labctl.plan.loader import check_plan, parse_overrides

ROOT = Path(__file__).resolve().parents[3]


def _check(tmp_path, text, overrides=None):
    """Write ``text`` as a plan and check it: (its path, every error)."""
    plan = tmp_path / "p.yaml"
    plan.write_text(text, encoding="utf-8")
    return plan, check_plan(plan, overrides)[1]


def _one(errors, text):
    hits = [e for e in errors if text in e.message]
    assert len(hits) == 1, [e.format() for e in errors]
    return hits[0]


def test_a_unitless_limit_hint_uses_the_measurements_unit(tmp_path):
    src = (ROOT / "testplans" / "power-rails.yaml").read_text(encoding="utf-8")
    assert "VDD_CORE: {max: 20 mV, marginal: 10 %}" in src
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "power-up.yaml").write_text(
        (ROOT / "testplans" / "lib" / "power-up.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    plan = tmp_path / "ripple.yaml"
    plan.write_text(src.replace("VDD_CORE: {max: 20 mV, marginal: 10 %}", "VDD_CORE: {max: 20}"), encoding="utf-8")
    _, errors = check_plan(plan)
    err = _one(errors, "max: 20 has no unit")
    assert err.hint == "add the unit, e.g. '20 mV'"  # not '20 V': 1000 times too loose


def test_a_bare_word_compared_in_when_is_told_to_be_quoted(tmp_path):
    _, errors = _check(tmp_path, "name: p\nparameters:\n  mode: {default: quick, choices: [quick, full]}\n"
                       "steps:\n  - id: w\n    check: wait\n    args: {duration: 1 s}\n    when: mode == full\n")
    err = _one(errors, "undefined parameter 'full'")
    assert (err.line, err.column) == (8, 19)
    assert "quote it: 'full'" in err.hint


def test_a_library_steps_missing_role_points_at_the_library(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "soak.yaml").write_text(
        "steps:\n  - id: soak\n    check: thermal.soak\n    args: {setpoint: 25 degC, hold: 1 min}\n",
        encoding="utf-8")
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nrequires: [psu]\nsteps:\n  - include: lib/soak.yaml\n", encoding="utf-8")
    _, errors = check_plan(plan)
    err = _one(errors, "not listed in requires:")
    assert err.file.endswith("lib/soak.yaml")
    assert "top of the plan" not in err.hint
    assert "lib/soak.yaml (the step library), or of the plan" in err.hint


def test_a_set_value_outside_the_choices_gets_did_you_mean(tmp_path):
    _, errors = _check(tmp_path, "name: p\nparameters:\n  mode: {default: quick, choices: [quick, full]}\n"
                       "steps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n", parse_overrides(["mode=ful"]))
    assert [e.message for e in errors] == [
        "--set mode=ful: parameter mode: 'ful' is not one of quick, full; did you mean 'full'?"]


def test_a_bare_number_against_a_quantity_is_said_in_our_words(tmp_path):
    plan, errors = _check(tmp_path, "name: p\nparameters:\n  ambient: 25 degC\n  hot: ${ambient > 25}\n"
                          "steps:\n  - id: w\n    check: wait\n    args: {duration: 1 s}\n    when: ambient >= 25\n")
    assert [e.format() for e in errors] == [  # was: "… >= 25: Cannot compare PlainQuantity and <class 'int'>"
        f"{plan}:4:20: cannot compare 25 degC > 25: 25 is a bare number and 25 degC is a temperature\n"
        "  hint: give the number a unit, e.g. 25 degC",
        f"{plan}:9:22: cannot compare 25 degC >= 25: 25 is a bare number and 25 degC is a temperature\n"
        "  hint: give the number a unit, e.g. 25 degC",
    ]


def test_when_takes_true_or_false_only(tmp_path):
    steps = {"a": "3", "b": "lane_count", "c": "mode", "d": "\"'fast'\"", "e": "not lane_count", "f": "yes",
             "g": "[x]", "h": "${lane_count * 2}", "i": "true", "j": "lane_count > 2 and mode == 'fast'"}
    plan, errors = _check(tmp_path, "name: p\nparameters: {lane_count: 4, mode: fast}\nsteps:\n" + "".join(
        f"  - id: {sid}\n    check: wait\n    args: {{duration: 1 s}}\n    when: {when}\n" for sid, when in steps.items()))
    hint = "  hint: write a condition: a comparison (lane_count > 2, mode == 'full') or true/false"
    assert [e.format() for e in errors] == [  # each was taken by its truthiness (or refused as "expected text")
        f"{plan}:7:11: step 'a': when: 3 is a number, not true or false\n{hint}",
        f"{plan}:11:11: step 'b': when: lane_count is a number (4), not true or false\n{hint}",
        f"{plan}:15:11: step 'c': when: mode is text ('fast'), not true or false\n{hint}",
        f"{plan}:19:12: step 'd': when: 'fast' is text, not true or false\n{hint}",
        f"{plan}:23:15: step 'e': when: 'not' takes true or false, but 4 is a number\n{hint}",
        f"{plan}:27:11: step 'f': when: yes is not true or false\n"
        "  hint: only true and false are booleans (YAML 1.2): write when: true or when: false",
        f"{plan}:31:11: step 'g': when: holds a list, not true or false\n{hint}",
        f"{plan}:35:13: step 'h': when: lane_count * 2 is a number (8), not true or false\n{hint}",
    ]


def test_a_step_run_once_that_uses_a_swept_parameter_is_refused(tmp_path):
    """It silently got the parameter's default at every run, and its limits with it."""
    plan, errors = _check(tmp_path, """\
name: p
requires: [psu]
parameters: {vin: 5 V, vlow: "${vin * 0.9}", ambient: 25 degC}
corners: {vin: [4.5 V, 5.5 V], ambient: [0 degC, 45 degC]}
setup:
  - {id: start, check: power.on, args: {voltage: "${vin}", current_limit: 5 A}}
steps:
  - id: on
    check: power.on
    per_corner: false
    args: {voltage: 5 V, current_limit: 5 A}
    limits:
      input_voltage: {nominal: "${vlow}", tol: 2 %}
  - id: hot
    check: wait
    per_corner: false
    args: {duration: 1 s}
    when: ambient > 20 degC
  - {id: each, check: set, args: {target: psu.ch1.voltage, value: "${vin}"}}
""")
    assert [e.format() for e in errors] == [
        f"{plan}:13:35: step 'on' runs once (per_corner: false) but uses vlow, which is computed from the corner "
        "axis vin: it would get 4.5 V (from vin = 5 V), not a corner's value\n"
        "  hint: remove per_corner: false to run it at every corner, or use a parameter that no axis changes "
        "(e.g. vin_nominal: 5 V)",
        f"{plan}:18:11: step 'hot' runs once (per_corner: false) but uses ambient, which is also a corner axis: "
        "it would get the parameter's 25 degC, not a corner's value\n"
        "  hint: remove per_corner: false to run it at every corner, or use a parameter that no axis changes "
        "(e.g. ambient_nominal: 25 degC)",
    ]


def test_shape_errors_say_what_to_write(tmp_path):
    """Each was a message without a hint."""
    plan, errors = _check(tmp_path, """\
name: p
requires: [psu, daq]
parameters:
  mode: {default: fastt, choices: [fast, full]}
corners: {ambient: [0 degC, 25 degC]}
corner_order: [ambient, ambient]
safety:
  poll_interval: 0 s
  interlocks:
    - {signal: psu.ch1.voltage, min: 6 V, max: 5 V}
steps:
  - id: rails
    check: power.rails
    args: {rails: VDD_CORE, via: scope, samples: lots}
    retries: -1
    tags: [power, a b]
    limits: {nominal: 0.75 V}
""")
    hints = {e.message: e.hint for e in errors}
    assert hints == {
        "parameter mode: 'fastt' is not one of fast, full; did you mean 'fast'?":
            "make the default one of the choices, or add it to choices:",
        "corner_order lists an axis twice": "list every axis once, slowest-changing first",
        "poll_interval must be positive": "e.g. poll_interval: 500 ms",
        "interlock on psu.ch1.voltage: min 6 V is not below max 5 V":
            "it trips below min and above max: min is the lower bound",
        "rails: expected a list (- item lines or [a, b]), got 'VDD_CORE'": "write a list: [VDD_CORE]",
        "via: expected 'dmm', 'daq' or 'dut', got 'scope'": "write one of 'dmm', 'daq' or 'dut'",
        "samples: expected a whole number, got 'lots'": "write a whole number, without quotes or a unit (e.g. 4)",
        "retries: must be ≥ 0, got -1": "give a value ≥ 0",
        "tag 'a b' may only hold letters, digits, _ . -": "e.g. tags: [power, thermal]",
        "nominal needs tol (e.g. tol: 3 % or tol: ±25 mV)": "add tol: beside nominal: relative (3 %) or absolute (±25 mV)",
    }
    tag = _one(errors, "tag 'a b'")
    assert (tag.line, tag.column) == (16, 19)  # at the tag (it was at the list)


def test_an_unquoted_date_where_text_is_wanted_is_told_to_be_quoted(tmp_path):
    _, errors = _check(tmp_path, "name: p\nversion: 2024-01-01\nsteps:\n  - {id: w, check: wait, args: {duration: 1 s}}\n")
    err = _one(errors, "version: expected text, got the date 2024-01-01")
    assert (err.line, err.column) == (2, 10)
    assert err.hint == 'quote it: "2024-01-01" (YAML reads an unquoted date as a date)'
