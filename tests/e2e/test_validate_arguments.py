"""`labctl validate` on every argument mistake of the built-in checks (labctl/checks/catalog.py)
a user can make: each is one located line followed by a hint saying what to write."""

from __future__ import annotations

import re

LOCATED = re.compile(r"^\S+\.yaml:\d+:\d+: \S")
PLAN = "tests/data/plans/argument-mistakes.yaml"


def test_every_argument_error_of_the_built_in_checks_says_what_to_write(labctl):
    res = labctl("validate", PLAN)
    assert res.returncode == 4
    assert "Traceback" not in res.stderr
    lines = res.stderr.splitlines()
    problems = [i for i, line in enumerate(lines) if LOCATED.match(line)]
    assert len(problems) == 28 and lines[-1] == "28 problems in 1 file"
    unhinted = [lines[i] for i in problems if not lines[i + 1].startswith("  hint: ")]
    assert unhinted == []


def test_argument_messages_and_hints_in_the_users_words(labctl):
    err = labctl("validate", PLAN).stderr
    for line in [
        f"{PLAN}:7:19: rail 'VDD_CORE' is listed twice\n  hint: list each rail once: remove one VDD_CORE",
        f"{PLAN}:10:36: gap_min (2 s) is larger than gap_max (1 s)\n"
        "  hint: make gap_min at most gap_max, e.g. gap_min: 1 s, or gap_max: 2 s",
        f"{PLAN}:25:19: lanes: lane numbers start at 0, got -1\n"
        "  hint: write lanes: all, or the instrument's lane numbers as a list, e.g. lanes: [1, 2, 3, 4]",
        f"{PLAN}:31:48: unit: 'Vx' is not a unit\n  hint: did you mean 'V'?",
        f"{PLAN}:40:11: give write commands, a query, or both\n  hint: e.g. query: 'MEAS:VOLT?'",
        f"{PLAN}:49:41: extract 'b' is not a named group of expect (groups: a)\n"
        "  hint: name the group in expect: (?P<b>...)",
        # one error for 'al', not one per form of the union (a list, or 'all')
        f"{PLAN}:67:19: lanes: expected all or a list of lane numbers, got 'al'; did you mean 'all'?\n",
        f"{PLAN}:76:37: hold: 'forever' is not a quantity\n"
        "  hint: write a duration, e.g. 90 s, 5 min or 2 h (a bare number is seconds)",
        f"{PLAN}:82:44: confidence must be between 0 and 100 % (exclusive), got 100 %\n"
        "  hint: give the confidence level, e.g. confidence: 95 %",
        f"{PLAN}:85:37: band: a tolerance must not be negative (-1 degC)\n"
        "  hint: a tolerance is a width on either side of the value: write band: ±1 degC",
        f"{PLAN}:88:41: current_limit: 'abc' is not a quantity\n  hint: write a current (e.g. 20 A, 350 mA)",
    ]:
        assert line in err


def test_a_step_timeout_that_is_no_duration_names_the_key_and_says_what_to_write(labctl, tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nrequires: [dut]\nsteps:\n  - id: w\n    check: wait\n"
                    "    args: {duration: 1 s}\n    timeout: lots\n", encoding="utf-8")
    res = labctl("validate", str(plan))
    assert res.returncode == 4
    assert res.stderr.splitlines()[:2] == [
        f"{plan}:7:14: timeout: 'lots' is not a quantity",
        "  hint: write a duration, e.g. 90 s, 5 min or 2 h (a bare number is seconds)"]
