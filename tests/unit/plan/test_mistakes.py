"""Broken plans: every mistake is reported at its exact file:line:col with a clear message.

Each sample in tests/data/plans/ ends with ``# expect: FILE:LINE:COL: message`` lines (file
relative to that folder); a ``# fixture: PATH`` line validates it against that fixture.
The test asserts that exactly those errors are reported, all at once.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labctl.fixture import load_fixture
from labctl.plan.loader import check_plan

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "plans"
SAMPLES = sorted(DATA.glob("*.yaml"))


def _expected(path: Path) -> tuple[list[str], str | None]:
    text = path.read_text(encoding="utf-8")
    expect = re.findall(r"^# expect: (.*)$", text, flags=re.M)
    fixture = re.search(r"^# fixture: (.*)$", text, flags=re.M)
    return expect, fixture.group(1) if fixture else None


def test_there_are_at_least_15_distinct_mistakes():
    assert len(SAMPLES) >= 15
    assert all(_expected(p)[0] for p in SAMPLES), "every sample states what it expects"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_mistake_is_reported_exactly(sample: Path, monkeypatch):
    expected, fixture_path = _expected(sample)
    fixture = load_fixture(ROOT / fixture_path) if fixture_path else None
    monkeypatch.chdir(DATA)
    loaded, errors = check_plan(sample.name, fixture=fixture)
    assert loaded is None
    got = [f"{e.file}:{e.line}:{e.column}: {e.message}" for e in errors]
    assert got == expected


def test_errors_carry_hints_and_suggestions(monkeypatch):
    monkeypatch.chdir(DATA)
    for sample in ("unknown-check.yaml", "undefined-parameter.yaml", "wrong-dimension.yaml",
                   "include-missing.yaml", "duplicate-step-id.yaml", "bad-yaml-expression.yaml"):
        _, errors = check_plan(sample)
        for e in errors:
            assert e.hint, f"{sample}: {e} has no hint"
    _, errors = check_plan("bad-yaml-expression.yaml")
    assert "quote values that hold ${...}" in errors[0].hint
    _, errors = check_plan("undefined-parameter.yaml")
    assert errors[0].hint.startswith("did you mean 'vin'?")
    _, errors = check_plan("corner-in-once-step.yaml")
    assert "corner axis" in errors[0].hint and "per_corner: false" in errors[0].hint
    _, errors = check_plan("unknown-step-key.yaml")
    assert errors[0].hint.startswith("allowed keys: id, name, description, check, args, limits")


def test_all_problems_of_one_plan_come_at_once(tmp_path):
    plan = tmp_path / "many.yaml"
    plan.write_text(
        "name: many\n"
        "requires: [psu]\n"
        "parameters: {vin: 5 V}\n"
        "steps:\n"
        "  - id: a\n"
        "    check: power.onn\n"
        "  - id: a\n"
        "    check: power.rails\n"
        "    args: {rails: [VDD_CORE], sampels: 2}\n"
        "    retries: -1\n"
        "  - id: c\n"
        "    check: power.on\n"
        "    args: {voltage: '${vim}', current_limit: 5 V}\n"
        "    limits: {inrush_peak: {max: 3 V}}\n",
        encoding="utf-8",
    )
    _, errors = check_plan(plan)
    messages = "\n".join(f"{e.line}:{e.column}: {e.message}" for e in errors)
    assert "6:12: unknown check 'power.onn'; did you mean 'power.on'?" in messages
    assert "7:9: duplicate step id 'a'" in messages
    assert "9:31: unknown key 'sampels' in args of power.rails; did you mean 'samples'?" in messages
    assert "10:14: retries: must be ≥ 0, got -1" in messages
    assert "13:24: undefined parameter 'vim'" in messages
    assert "13:46: current_limit: 5 V is a voltage, expected a current" in messages
    assert "14:33: max: 3 V is a voltage, but inrush_peak is measured as a current (A)" in messages
    assert len(errors) == 7


def test_empty_and_non_mapping_plans(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n", encoding="utf-8")
    _, errors = check_plan(empty)
    assert [str(e) for e in errors] == [f"{empty}:1:1: the plan is empty"]
    listy = tmp_path / "list.yaml"
    listy.write_text("- id: a\n  check: wait\n", encoding="utf-8")
    _, errors = check_plan(listy)
    assert str(errors[0]) == f"{listy}:1:1: a plan must be a mapping of keys (name:, steps: …), not a list"


def test_missing_file_is_one_clear_error(tmp_path):
    _, errors = check_plan(tmp_path / "nope.yaml")
    assert [e.message for e in errors] == [f"no such file: {tmp_path / 'nope.yaml'}"]
